package docs_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/cli/docs"
	"github.com/causalctl/causalctl/internal/cli/root"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/spf13/cobra"
)

// checkout is the repository root seen from this package.
const checkout = "../../.."

func tree(getenv func(string) string) *cobra.Command {
	ios, _, _, _ := iostreams.Test()
	f := cmdutiltest.Factory(ios, "")
	f.Getenv = getenv
	return root.NewCmdRoot(f)
}

func noEnv(string) string { return "" }

// TestGeneratedFilesAreFresh fails when man/ or completions/ differ from
// what the current command tree generates: a command or flag changed
// without `go generate ./...`.
func TestGeneratedFilesAreFresh(t *testing.T) {
	stale, err := docs.Stale(tree(noEnv), checkout, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Errorf("generated files are stale: %s\nrun `go generate ./...` and commit the result", strings.Join(stale, ", "))
	}
}

// TestStaleFindsEveryKindOfDrift: the freshness check catches a changed,
// a missing and a left-over file, and passes right after a generation.
func TestStaleFindsEveryKindOfDrift(t *testing.T) {
	dir := t.TempDir()
	if err := docs.Generate(tree(noEnv), dir); err != nil {
		t.Fatal(err)
	}
	if stale, err := docs.Stale(tree(noEnv), dir, t.TempDir()); err != nil || len(stale) != 0 {
		t.Fatalf("fresh generation reported stale: %v %v", stale, err)
	}
	page := filepath.Join(dir, "man", "causalctl-replay.1")
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(page, bytes.Replace(b, []byte("OPTIONS"), []byte("OPTS"), 1), 0o644))
	must(t, os.Remove(filepath.Join(dir, "completions", "causalctl.fish")))
	must(t, os.WriteFile(filepath.Join(dir, "man", "causalctl-gone.1"), []byte("old"), 0o644))
	stale, err := docs.Stale(tree(noEnv), dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(stale)
	want := []string{"completions/causalctl.fish", "man/causalctl-gone.1", "man/causalctl-replay.1"}
	if !slices.Equal(stale, want) {
		t.Errorf("stale = %v, want %v", stale, want)
	}
	// A new generation removes the page of the command that is gone.
	must(t, docs.Generate(tree(noEnv), dir))
	if _, err := os.Stat(filepath.Join(dir, "man", "causalctl-gone.1")); !os.IsNotExist(err) {
		t.Errorf("page of a removed command survived a generation: %v", err)
	}
}

// TestGenerationIsReproducible: the output depends on the tree alone, not
// on the environment of whoever runs the generation (home directory,
// config path, brokers, clock).
func TestGenerationIsReproducible(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	must(t, docs.Generate(tree(noEnv), a))
	env := map[string]string{"HOME": "/home/someone", "XDG_CONFIG_HOME": "/home/someone/.cfg", "CAUSALCTL_BROKERS": "kafka-9.example:9092", "CAUSALCTL_PROFILE": "prod"}
	must(t, docs.Generate(tree(func(k string) string { return env[k] }), b))
	stale, err := docs.Stale(tree(noEnv), b, t.TempDir())
	if err != nil || len(stale) != 0 {
		t.Errorf("generation depends on the environment: %v %v", stale, err)
	}
	page, err := os.ReadFile(filepath.Join(a, "man", "causalctl.1"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte(`.TH "CAUSALCTL" "1" "Dec 2026"`)) {
		t.Errorf("man page header does not carry the fixed date %s:\n%s", docs.ManDate, firstLines(page, 3))
	}
	if home := os.Getenv("HOME"); len(home) > 1 && bytes.Contains(page, []byte(home)) {
		t.Errorf("man page mentions this machine's home directory %q", home)
	}
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(string(b), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestScriptsParse: each generated completion script is valid syntax for
// its shell (`bash -n`, `zsh -n`, `fish -n`), and every man page renders
// without groff warnings. .ci/run installs the shells and man-db; a
// machine without one skips that part.
func TestScriptsParse(t *testing.T) {
	dir := t.TempDir()
	must(t, docs.Generate(tree(noEnv), dir))
	for shell, script := range map[string]string{"bash": "causalctl.bash", "zsh": "causalctl.zsh", "fish": "causalctl.fish"} {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("%s is not installed", shell)
			}
			path := filepath.Join(dir, "completions", script)
			if out, err := exec.Command(shell, "-n", path).CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("%s -n %s: %v\n%s", shell, script, err, out)
			}
			// The check can fail: a broken script is refused.
			broken := filepath.Join(dir, "broken."+shell)
			must(t, os.WriteFile(broken, []byte("if true; then\n"), 0o644))
			if err := exec.Command(shell, "-n", broken).Run(); err == nil {
				t.Errorf("%s -n accepted a broken script: the check proves nothing", shell)
			}
		})
	}
	t.Run("man", func(t *testing.T) {
		if _, err := exec.LookPath("man"); err != nil {
			t.Skip("man is not installed")
		}
		pages, _ := filepath.Glob(filepath.Join(dir, "man", "*.1"))
		if len(pages) < 2 {
			t.Fatalf("only %d man pages", len(pages))
		}
		for _, page := range pages {
			cmd := exec.Command("man", "--warnings", "-l", page)
			cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Errorf("man -l %s: %v\n%s", filepath.Base(page), err, stderr.String())
			}
			if !bytes.Contains(out, []byte("SYNOPSIS")) {
				t.Errorf("man -l %s rendered no SYNOPSIS:\n%s", filepath.Base(page), firstLines(out, 5))
			}
		}
	})
}
