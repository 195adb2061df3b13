package version

import (
	"runtime"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/spf13/cobra"
)

func run(t *testing.T, f *cmdutil.Factory, args ...string) (string, error) {
	t.Helper()
	return runTTY(t, f, false, args...)
}

// runTTY runs version with stdout a terminal or a pipe.
func runTTY(t *testing.T, f *cmdutil.Factory, tty bool, args ...string) (string, error) {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	ios.SetTTY(tty)
	f.IOStreams = ios
	root := &cobra.Command{Use: "causalctl", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(NewCmdVersion(f, nil))
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestVersion(t *testing.T) {
	full := cmdutiltest.Factory(nil, "")
	full.Version = "v1.4.0"
	full.Commit = "abc123"
	full.BuildDate = "2026-12-01T10:00:00Z"
	got, err := run(t, full, "version")
	want := "causalctl version v1.4.0\ncommit:     abc123\nbuild date: 2026-12-01T10:00:00Z\ngo:         " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if err != nil || got != want {
		t.Errorf("text: %q (%v)\nwant %q", got, err, want)
	}
	got, err = run(t, full, "version", "-o", "json")
	want = `{"version":"v1.4.0","commit":"abc123","date":"2026-12-01T10:00:00Z","go_version":"` + runtime.Version() + `","os":"` + runtime.GOOS + `","arch":"` + runtime.GOARCH + `"}` + "\n"
	if err != nil || got != want {
		t.Errorf("json: %q (%v)\nwant %q", got, err, want)
	}
	// Unknown commit and date: "unknown" in text, null in JSON.
	bare := cmdutiltest.Factory(nil, "")
	bare.Version = "" // nothing stamped
	got, _ = run(t, bare, "version")
	if !strings.HasPrefix(got, "causalctl version (devel)\ncommit:     unknown\nbuild date: unknown\n") {
		t.Errorf("unknown build: %q", got)
	}
	got, _ = run(t, bare, "version", "-o", "json")
	if !strings.Contains(got, `"commit":null,"date":null`) {
		t.Errorf("unknown build json: %q", got)
	}
	if _, err := run(t, full, "version", "-o", "ndjson"); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Errorf("-o ndjson: %v, want a usage error", err)
	}
	if _, err := run(t, full, "version", "extra"); err == nil {
		t.Errorf("an argument was accepted")
	}
}

// TestTerminalAndPipe: what version prints does not depend on where it
// goes, so a script reads what a person sees.
func TestTerminalAndPipe(t *testing.T) {
	f := cmdutiltest.Factory(nil, "")
	f.Version = "v1.4.0"
	f.Commit = "abc123"
	f.BuildDate = "2026-12-01T10:00:00Z"
	for _, args := range [][]string{{"version"}, {"version", "-o", "json"}} {
		onTTY, err1 := runTTY(t, f, true, args...)
		inPipe, err2 := runTTY(t, f, false, args...)
		if err1 != nil || err2 != nil || onTTY != inPipe || !strings.Contains(onTTY, "v1.4.0") {
			t.Errorf("%q: terminal %q (%v), pipe %q (%v)", args, onTTY, err1, inPipe, err2)
		}
	}
}
