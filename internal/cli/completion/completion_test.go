package completion_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/cli/root"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/spf13/cobra"
)

// asCLI makes the test binary causalctl's command tree, for the shell
// scripts to call, as they call the real program.
const asCLI = "CAUSALCTL_COMPLETION_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) != "" {
		ios := &iostreams.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
		root := testTree(cmdutiltest.Factory(ios, ""))
		root.SetArgs(os.Args[1:])
		if err := root.Execute(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testTree(f *cmdutil.Factory) *cobra.Command { return root.NewCmdRoot(f) }

// TestScripts: each shell's script is the one for that shell and for this
// program, and an unknown shell is a usage error.
func TestScripts(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	f := cmdutiltest.Factory(ios, "")
	root := testTree(f)
	for shell, marker := range map[string]string{
		"bash":       "__start_causalctl",
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

// TestBashCompletes: bash, with the script `completion bash` writes, asks
// the program for the completions of `causalctl demo --fault ` and offers
// the demo's faults.
func TestBashCompletes(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bash is not installed")
		}
		t.Skip("bash is not installed")
	}
	ios, _, out, _ := iostreams.Test()
	root := testTree(cmdutiltest.Factory(ios, ""))
	root.SetArgs([]string{"completion", "bash"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "causalctl.bash")
	if err := os.WriteFile(script, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The script runs "causalctl __complete …": this test binary.
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\nexec env " + asCLI + "=1 '" + self + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "causalctl"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	complete := func(line string) []string {
		t.Helper()
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", `source "$1"
if [[ -r /usr/share/bash-completion/bash_completion ]]; then
	source /usr/share/bash-completion/bash_completion
elif ! declare -F _get_comp_words_by_ref >/dev/null; then
	# Without the bash-completion package, what the script needs of it:
	# the words, split only where bash splits them.
	_get_comp_words_by_ref() {
		cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cword=$COMP_CWORD
		words=("${COMP_WORDS[@]}")
	}
fi
COMP_LINE=$2
COMP_POINT=${#COMP_LINE}
read -ra COMP_WORDS <<<"$COMP_LINE"
[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_TYPE=9
__start_causalctl causalctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"`, "bash", script, line)
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash completing %q: %v", line, err)
		}
		return strings.Fields(string(got))
	}
	got := complete("causalctl demo --fault ")
	for _, want := range []string{"none", "dangling", "undecodable", "marker-claim"} {
		if !slices.Contains(got, want) {
			t.Errorf("completing --fault: no %q among %q", want, got)
		}
	}
	if got := complete("causalctl demo --fault dang"); !slices.Equal(got, []string{"dangling"}) {
		t.Errorf("completing --fault dang: %q, want [dangling]", got)
	}
}
