package cli

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoCommandImportsAnother: a command package imports the shared
// packages (cmdutil, render), never another command; only root, which
// assembles the tree, imports commands.
func TestNoCommandImportsAnother(t *testing.T) {
	const prefix = "github.com/causalctl/causalctl/internal/cli/"
	shared := map[string]bool{"cmdutil": true, "render": true}
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "root" || shared[d.Name()] {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(d.Name(), "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if rest, ok := strings.CutPrefix(path, prefix); ok && !shared[strings.Split(rest, "/")[0]] {
					t.Errorf("%s imports the command package %s: share through cmdutil or render instead", file, path)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d files: the command packages moved?", checked)
	}
}
