package cmdutil

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Completion scripts are written by `causalctl completion` and by the
// generator of the committed completions/ directory (`gen-docs`): both
// call these, so that neither command imports the other.

// CompletionShells lists the shells a script can be written for, in the
// order the help names them.
func CompletionShells() []string { return []string{"bash", "zsh", "fish", "powershell"} }

// WriteCompletion writes the completion script of root's tree for shell to w.
func WriteCompletion(root *cobra.Command, shell string, w io.Writer) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(w, true)
	case "zsh":
		return root.GenZshCompletion(w)
	case "fish":
		return root.GenFishCompletion(w, true)
	case "powershell":
		return root.GenPowerShellCompletionWithDesc(w)
	}
	return Usagef("completion %s: want one of bash, zsh, fish, powershell", shell)
}

// CompletionFileName is the name under which the script for shell is kept in the
// repository's completions/ directory.
func CompletionFileName(shell string) string {
	switch shell {
	case "powershell":
		return "causalctl.ps1"
	default:
		return fmt.Sprintf("causalctl.%s", shell)
	}
}
