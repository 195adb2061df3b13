package demo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestInvocation: the demo's hints name causalctl as the user can run it.
func TestInvocation(t *testing.T) {
	dir := t.TempDir()
	installed := filepath.Join(dir, "bin", "causalctl")
	built := filepath.Join(dir, "src", "causalctl")
	for _, p := range []string{installed, built} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	onPath := func(string) (string, error) { return installed, nil }
	notOnPath := func(string) (string, error) { return "", errors.New("not found") }
	goRun := "/tmp/go-build1234/b001/exe/causalctl"
	for _, tc := range []struct {
		name, arg0, exe string
		look            func(string) (string, error)
		want            string
	}{
		{"installed, run by name", "causalctl", installed, onPath, "causalctl"},
		{"installed, run by its path", installed, installed, onPath, "causalctl"},
		{"go run, nothing installed", goRun, goRun, notOnPath, "go run ./cmd/causalctl"},
		{"go run, another causalctl installed", goRun, goRun, onPath, "go run ./cmd/causalctl"},
		{"built here, run as ./causalctl", "./causalctl", built, notOnPath, "./causalctl"},
		{"built, another installed", built, built, onPath, built},
		{"a path to quote", "/tmp/my dir/causalctl", "/tmp/my dir/causalctl", notOnPath, "'/tmp/my dir/causalctl'"},
	} {
		if got := invocation(tc.arg0, tc.exe, tc.look); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
