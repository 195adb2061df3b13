package completion

import (
	"bytes"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/spf13/cobra"
)

// TestScripts: each shell's script is the one for that shell and for this
// program, and an unknown shell is a usage error.
func TestScripts(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios}
	root := &cobra.Command{Use: "causalctl"}
	root.AddCommand(NewCmdCompletion(f))
	for shell, marker := range map[string]string{
		"bash":       "__causalctl_init_completion",
		"zsh":        "#compdef causalctl",
		"fish":       "complete -c causalctl",
		"powershell": "Register-ArgumentCompleter -CommandName 'causalctl'",
	} {
		out.Reset()
		root.SetArgs([]string{"completion", shell})
		if err := root.Execute(); err != nil {
			t.Fatalf("%s: %v", shell, err)
		}
		if !strings.Contains(out.String(), marker) {
			t.Errorf("%s script lacks %q", shell, marker)
		}
	}
	var buf bytes.Buffer
	err := cmdutil.WriteCompletion(root, "tcsh", &buf)
	if cmdutil.ExitCode(err) != cmdutil.ExitUsage || buf.Len() != 0 {
		t.Errorf("tcsh: %v (exit %d), wrote %d bytes", err, cmdutil.ExitCode(err), buf.Len())
	}
}
