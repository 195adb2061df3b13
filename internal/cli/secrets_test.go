package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLooseConfigFileWarned: a broker command reading a config file that
// others may read says so on stderr in one line, once, and goes on.
func TestLooseConfigFileWarned(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permissions are not mode bits")
	}
	p := newPipeline(t)
	for _, mode := range []os.FileMode{0o600, 0o640, 0o644} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(path, []byte("current_profile: p\nprofiles:\n  p:\n    brokers: ["+p.addr+"]\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			code, out, stderr := runEnv(t, map[string]string{"CAUSALCTL_CONFIG": path}, "check", "-t", "orders,payments")
			if code != 0 && code != 4 || !strings.Contains(out, "orders") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
			}
			want := ""
			if mode != 0o600 {
				want = fmt.Sprintf("warning: config file %s is readable by others (mode %04o); chmod 600 it\n", path, mode)
			}
			if stderr != want {
				t.Errorf("stderr %q, want %q", stderr, want)
			}
		})
	}
}
