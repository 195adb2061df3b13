package cli

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// commandShape is the one constructor of a command (DEVELOPERS.md, "Adding
// a command").
const commandShape = "func(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command"

// TestEveryCommandIsBuiltTheSameWay: each command package's NewCmd… has
// commandShape, and its Run takes the context and the options. gen-docs, a
// generator over the tree rather than a command of it, is the exception.
func TestEveryCommandIsBuiltTheSameWay(t *testing.T) {
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, d := range dirs {
		switch d.Name() {
		case "root", "cmdutil", "shared", "docs":
			continue
		}
		if !d.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(d.Name(), "*.go"))
		found := map[string]string{}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || !(strings.HasPrefix(fn.Name.Name, "NewCmd") || fn.Name.Name == "Run") {
					continue
				}
				var b bytes.Buffer
				_ = printer.Fprint(&b, fset, fn.Type)
				found[fn.Name.Name] = b.String()
			}
		}
		checked++
		newCmds := 0
		for name, shape := range found {
			switch {
			case strings.HasPrefix(name, "NewCmd"):
				newCmds++
				if shape != commandShape {
					t.Errorf("%s.%s is %s, want %s", d.Name(), name, shape, commandShape)
				}
			case name == "Run" && !strings.HasPrefix(shape, "func(ctx context.Context, opts *Options)") && !strings.HasPrefix(shape, "func(_ context.Context, opts *Options)"):
				t.Errorf("%s.Run is %s, want func(ctx context.Context, opts *Options) …", d.Name(), shape)
			}
		}
		if newCmds != 1 {
			t.Errorf("%s has %d NewCmd… constructors, want one", d.Name(), newCmds)
		}
	}
	if checked < 10 {
		t.Errorf("checked %d command packages: moved?", checked)
	}
}
