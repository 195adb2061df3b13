// Package version implements `causalctl version` (and the text of
// `causalctl --version`): the version, commit and build date of the binary,
// and the Go toolchain and platform it was built with.
package version

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/spf13/cobra"
)

// Info describes the build. Commit and Date are "" when unknown, and null
// in JSON.
type Info struct {
	Version   string  `json:"version"`
	Commit    *string `json:"commit"`
	Date      *string `json:"date"`
	GoVersion string  `json:"go_version"`
	OS        string  `json:"os"`
	Arch      string  `json:"arch"`
}

// FromFactory collects the build information of f and of the running
// toolchain.
func FromFactory(f *cmdutil.Factory) Info {
	orNil := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	v := f.Version
	if v == "" {
		v = "(devel)"
	}
	return Info{Version: v, Commit: orNil(f.Commit), Date: orNil(f.BuildDate), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
}

// Text is Info as `causalctl version` prints it.
func (i Info) Text() string {
	orUnknown := func(s *string) string {
		if s == nil {
			return "unknown"
		}
		return *s
	}
	return fmt.Sprintf("causalctl version %s\ncommit:     %s\nbuild date: %s\ngo:         %s %s/%s\n",
		i.Version, orUnknown(i.Commit), orUnknown(i.Date), i.GoVersion, i.OS, i.Arch)
}

// Options are the parsed flags and dependencies of version.
type Options struct {
	IO     *iostreams.IOStreams
	Final  *cmdutil.FinalOutput // the final document is written whole or not at all (cmdutil.FinalOutput)
	Output string
	Info   Info
}

// NewCmdVersion returns the version command.
func NewCmdVersion(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	out := &cmdutil.Output{}
	opts := &Options{IO: f.IOStreams, Final: f.Final}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date of causalctl",
		Long: `Print the version of causalctl, the commit it was built from, the build
date, and the Go version and platform of the build (causalctl --version
prints the same).

Release builds carry the version, commit and date they were built with.
A build from source (go install, go build) reports what the Go toolchain
recorded instead: the module version, and in a git checkout the commit and
its time; what is not known prints as unknown (null in JSON).

Output: text, or json with the fields version, commit, date, go_version,
os and arch.`,
		Example: `  causalctl version
  causalctl version -o json | jq -r .version
  causalctl --version`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var err error
			if opts.Output, err = out.Resolve("text"); err != nil {
				return err
			}
			opts.Info = FromFactory(f)
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, out, "text", "json")
	return cmd
}

// Run prints opts.Info.
func Run(_ context.Context, opts *Options) error {
	return opts.Final.Do(func() error { return write(opts.IO.Out, opts.Output, opts.Info) })
}

func write(w io.Writer, format string, info Info) error {
	if format == "json" {
		return json.NewEncoder(w).Encode(info)
	}
	_, err := io.WriteString(w, info.Text())
	return err
}
