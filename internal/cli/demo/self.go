package demo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// selfCommand is how the user can run this causalctl again, for the
// demo's hints: what invocation finds for this process.
func selfCommand() string {
	exe, _ := os.Executable()
	arg0 := ""
	if len(os.Args) > 0 {
		arg0 = os.Args[0]
	}
	return invocation(arg0, exe, exec.LookPath)
}

// invocation says how to run the binary exe, started as arg0: "causalctl"
// when that name on the PATH is this binary (installed, or `go install`ed);
// the `go run ./cmd/causalctl` form when go run built it (a binary in the
// go tool's build cache, gone when it exits); else the path it was started
// by ("./causalctl", a built path), quoted for a shell when it needs it.
func invocation(arg0, exe string, lookPath func(string) (string, error)) string {
	const name = "causalctl"
	if p, err := lookPath(name); err == nil && sameFile(p, exe) {
		return name
	}
	if strings.Contains(filepath.ToSlash(exe), "/go-build") || strings.Contains(filepath.ToSlash(arg0), "/go-build") {
		return "go run ./cmd/causalctl"
	}
	if arg0 == "" || !strings.ContainsRune(arg0, filepath.Separator) && !strings.ContainsRune(arg0, '/') {
		// Found on the PATH by a shell, yet not the PATH's causalctl now:
		// the path of this binary says which.
		arg0 = exe
	}
	if arg0 == "" {
		return name
	}
	return shellQuote(arg0)
}

func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./+,:@.
func shellQuote(s string) string {
	plain := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+,:@", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
