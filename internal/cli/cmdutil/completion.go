package cmdutil

import (
	"bytes"
	"fmt"
	"io"
	"strings"

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
		var b bytes.Buffer
		if err := root.GenBashCompletionV2(&b, true); err != nil {
			return err
		}
		script, err := fixBashListMatch(b.String())
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, script)
		return err
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

// The line of cobra's bash script that keeps a candidate with a
// description only when its printf %q form starts with the word typed, and
// its fix. bash 5.2's printf %q escapes a comma (orders\,payments), so the
// element of a list after a comma (-t orders,pay<Tab>) matched nothing;
// the fix also keeps a candidate whose plain form starts with the word.
const (
	bashListMatch      = `[[ $comp == "$cur"* ]] || continue`
	bashListMatchFixed = `[[ $comp == "$cur"* || ${compline%%$tab*} == "$cur"* ]] || continue`
)

// fixBashListMatch applies the fix to cobra's bash script; a script without
// the line (another cobra) is an error rather than a silent regression.
func fixBashListMatch(script string) (string, error) {
	if n := strings.Count(script, bashListMatch); n != 1 {
		return "", fmt.Errorf("bash completion script: found the candidate match %d times, want once: has cobra's script changed?", n)
	}
	return strings.Replace(script, bashListMatch, bashListMatchFixed, 1), nil
}
