// Package completion implements `causalctl completion SHELL`, which prints
// the shell completion script. The value completions of flags are not
// here: whoever declares a flag registers its completion (cmdutil's flag
// helpers, or the command for its own fixed-value flags).
package completion

import (
	"context"
	"io"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// Options are the completion command's inputs.
type Options struct {
	// Out is where the script goes (stdout).
	Out io.Writer
	// Root is the tree the script completes; Shell is bash, zsh, fish or
	// powershell.
	Root  *cobra.Command
	Shell string
}

// NewCmdCompletion returns the completion command. runF replaces the work
// in tests.
func NewCmdCompletion(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script",
		Long: `Print the script that makes SHELL complete causalctl's commands and flags.

Besides commands and flag names, the scripts complete flag values:
topic names and NAME/PARTITION for --topic, --scope and --start (and the
names given to causalctl topics), each element of a comma-separated list,
consumer groups for --from-group, Parsley processes (application ids) for
--app and their tasks for --task (all read from the configured cluster,
with about a second's timeout; a dead cluster completes nothing rather
than stall the shell), profile names for --profile, and the fixed values
of every flag that has them (--output, --interleave, --fault,
--undecodable, …).

The bash script needs the bash-completion package (apt or dnf install
bash-completion; Homebrew's bash-completion@2), loaded by the shell.
Packages install the scripts where the shells look for them; to load one
by hand, see the examples.`,
		Example: `  # bash, this shell only (or write it to ~/.local/share/bash-completion/completions/causalctl)
  source <(causalctl completion bash)

  # zsh: into a directory on $fpath, then start a new shell
  causalctl completion zsh > "${fpath[1]}/_causalctl"

  # fish
  causalctl completion fish > ~/.config/fish/completions/causalctl.fish

  # PowerShell
  causalctl completion powershell | Out-String | Invoke-Expression`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: cmdutil.CompletionShells(),
		RunE: func(c *cobra.Command, args []string) error {
			opts := &Options{Out: f.IOStreams.Out, Root: c.Root(), Shell: args[0]}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
}

// Run writes the script for opts.Shell.
func Run(_ context.Context, opts *Options) error {
	return cmdutil.WriteCompletion(opts.Root, opts.Shell, opts.Out)
}
