package cmdutil

import (
	"strings"

	"github.com/spf13/cobra"
)

// FormatsAnnotation is the command annotation that lists, comma-separated,
// the --output formats a command writes; shell completion offers them.
const FormatsAnnotation = "causalctl/output-formats"

// DeclareFormats records on cmd the --output formats it writes, for shell
// completion. Pass the same list to Output.Resolve.
func DeclareFormats(cmd *cobra.Command, formats ...string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[FormatsAnnotation] = strings.Join(formats, ",")
}

// DeclaredFormats returns the --output formats cmd declared, or none.
func DeclaredFormats(cmd *cobra.Command) []string {
	v := cmd.Annotations[FormatsAnnotation]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}
