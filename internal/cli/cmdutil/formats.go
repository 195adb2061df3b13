package cmdutil

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// Output is a command's -o/--output flag: the formats the command writes,
// and the one asked for ("" until given).
type Output struct {
	Value   string
	formats []string
}

// AddOutputFlag registers -o/--output on cmd, for the formats it writes:
// the usage lists them, shell completion offers them, and out.Resolve
// refuses any other. Every command that writes more than one format calls
// it, once.
func AddOutputFlag(cmd *cobra.Command, out *Output, formats ...string) {
	out.formats = formats
	list := strings.Join(formats, ", ")
	if n := len(formats); n > 1 {
		list = strings.Join(formats[:n-1], ", ") + " or " + formats[n-1]
	}
	cmd.Flags().StringVarP(&out.Value, "output", "o", "", "output format: "+list)
	CompleteFlagValues(cmd, "output", formats...)
}

// Resolve returns the chosen format, or def when none was given, and a
// UsageError when the format is not one the command writes.
func (o *Output) Resolve(def string) (string, error) {
	if o.Value == "" {
		return def, nil
	}
	if !slices.Contains(o.formats, o.Value) {
		return "", Usagef("--output %s: this command writes %s", o.Value, strings.Join(o.formats, ", "))
	}
	return o.Value, nil
}
