package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// Shared returns the path of elem in ../shared, the spec's vectors and
// conformance data beside the checkout (found from the module root, so
// any package's tests may call it). When that path is missing the test is
// skipped on a developer's machine, but fails on CI (CI set): CI checks
// ../shared out, and a test that skips there proves nothing.
func Shared(tb testing.TB, elem ...string) string {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
		return ""
	}
	path := filepath.Join(append([]string{filepath.Dir(root), "shared"}, elem...)...)
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("%v: CI must check out ../shared beside the checkout", err)
		} else {
			tb.Skipf("%v: ../shared is not beside the checkout", err)
		}
	}
	return path
}

// moduleRoot returns the directory holding the go.mod above the working
// directory, where go test runs a package's tests.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", os.ErrNotExist
		}
		dir = up
	}
}
