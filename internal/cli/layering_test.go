package cli

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestNoCommandImportsAnother: a command package imports the shared
// packages (cmdutil, and those under shared/), never another command; only
// root, which assembles the tree, imports commands.
func TestNoCommandImportsAnother(t *testing.T) {
	const prefix = "github.com/causalctl/causalctl/internal/cli/"
	shared := map[string]bool{"cmdutil": true, "shared": true}
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
			checked++
			for _, path := range fileImports(t, file) {
				if rest, ok := strings.CutPrefix(path, prefix); ok && !shared[strings.Split(rest, "/")[0]] {
					t.Errorf("%s imports the command package %s: share through cmdutil or a package under shared/ instead", file, path)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d files: the command packages moved?", checked)
	}
}

// TestLayeringTable: every package's imports point down the layering
// table of DEVELOPERS.md — the table matches the code. Helpers only tests
// import (…test, testutil) and generators are left out.
// module is the import path prefix of this repository's packages.
const module = "github.com/causalctl/causalctl/"

// layeringRows returns the packages of DEVELOPERS.md's layering table,
// top (imports the most) to bottom.
func layeringRows(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../DEVELOPERS.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(string(doc), "\n") {
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			if i := strings.Index(rest, "`"); i > 0 {
				rows = append(rows, rest[:i])
			}
		}
	}
	return rows
}

func TestLayeringTable(t *testing.T) {
	rows := layeringRows(t)
	row := func(pkg string) int {
		for i, r := range rows {
			if r == pkg {
				return i
			}
		}
		if strings.HasPrefix(pkg, "internal/cli/") {
			for i, r := range rows {
				if r == "internal/cli/<command>" {
					return i
				}
			}
		}
		return -1
	}
	helper := func(pkg string) bool {
		base := filepath.Base(pkg)
		return strings.HasSuffix(base, "test") || base == "testutil" || base == "gen"
	}
	checked := 0
	for _, top := range []string{"../../cmd", "../../internal"} {
		err := filepath.WalkDir(top, func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() || d.Name() == "testdata" {
				return err
			}
			pkg := strings.TrimPrefix(filepath.ToSlash(path), "../../")
			files, _ := filepath.Glob(filepath.Join(path, "*.go"))
			if helper(pkg) || len(files) == 0 {
				return nil
			}
			me := row(pkg)
			if me < 0 {
				t.Errorf("%s is not in the layering table of DEVELOPERS.md", pkg)
				return nil
			}
			checked++
			for _, file := range files {
				if strings.HasSuffix(file, "_test.go") {
					continue
				}
				f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
				if err != nil {
					return err
				}
				for _, imp := range f.Imports {
					p, _ := strconv.Unquote(imp.Path.Value)
					dep, ok := strings.CutPrefix(p, module)
					if !ok || helper(dep) {
						continue
					}
					if r := row(dep); r <= me && dep != pkg {
						t.Errorf("%s imports %s, which the layering table does not put below it", file, dep)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 25 {
		t.Errorf("checked %d packages", checked)
	}
	// And every row names a package that is there: the table describes
	// the code as it is, not as it was.
	for _, r := range rows {
		if r == "internal/cli/<command>" {
			continue
		}
		if files, _ := filepath.Glob(filepath.Join("../..", r, "*.go")); len(files) == 0 {
			t.Errorf("the layering table of DEVELOPERS.md names %s, which holds no Go package", r)
		}
	}
}

// TestSourcesStayApart: the broker client imports neither the file format
// nor Parsley's ordering state (it reads a compacted topic; parsley folds it),
// and the diagnosis, which takes facts and reads none, imports neither
// source; all three share the record types of internal/record. And
// cmdutil, which holds flags, the factory and output, reads no process:
// the openers are internal/input's.
func TestSourcesStayApart(t *testing.T) {
	const module = "github.com/causalctl/causalctl/"
	forbidden := map[string][]string{
		"internal/kafka":         {"internal/capture", "internal/parsley"},
		"internal/cli/cmdutil":   {"internal/process"}, // flags, the factory and output: reading a process is internal/input's
		"internal/inspect":       {"internal/kafka", "internal/capture"},
		"internal/inspect/audit": {"internal/kafka", "internal/capture"},
	}
	for pkg, deps := range forbidden {
		files, _ := filepath.Glob(filepath.Join("../..", pkg, "*.go"))
		if len(files) == 0 {
			t.Errorf("%s holds no Go files: moved?", pkg)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			for _, p := range fileImports(t, file) {
				for _, dep := range deps {
					if p == module+dep {
						t.Errorf("%s imports %s, which TestSourcesStayApart keeps from it (DEVELOPERS.md, Layering)", file, dep)
					}
				}
			}
		}
	}
}

// fileImports returns the import paths of a Go file.
func fileImports(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		paths = append(paths, p)
	}
	return paths
}

// TestCompletionImportsNoDomain: value completions are registered where
// flags are declared, so the completion command needs nothing of ours but
// cmdutil.
func TestCompletionImportsNoDomain(t *testing.T) {
	files, _ := filepath.Glob("completion/*.go")
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		checked++
		for _, p := range fileImports(t, file) {
			if strings.HasPrefix(p, "github.com/causalctl/causalctl/") && p != "github.com/causalctl/causalctl/internal/cli/cmdutil" {
				t.Errorf("%s imports %s: register a flag's completion where the flag is declared", file, p)
			}
		}
	}
	if checked == 0 {
		t.Error("no files in completion/: moved?")
	}
}

// TestRecordTypesOneName: outside internal/capture the record types are
// named as record's (record.Item, record.LogFacts, …); capture's aliases
// serve its own code only, so each type has one name in the code base.
func TestRecordTypesOneName(t *testing.T) {
	alias := regexp.MustCompile(`\bcapture\.(Item|Kind|KindRecord|KindPosition|KindLogFacts|LogFacts|Retention|OpenTransaction|Gap)\b`)
	checked := 0
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || path == filepath.Join("..", "..", "internal", "capture")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if m := alias.Find(b); m != nil {
			t.Errorf("%s names %s: use the record package's type", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Errorf("checked %d files: the walk went wrong", checked)
	}
}

// TestEngineBelowReplay: the gate-driving engine that live, replay and demo
// drive imports neither the offline replay nor anything the layering table
// puts above the engine — in no file, its tests and its test helpers
// included (a test helper may read the diagnosis above, never the
// replay) — and the table keeps the replay above the engine, so that the
// first check cannot be passed by moving a row.
func TestEngineBelowReplay(t *testing.T) {
	rows := layeringRows(t)
	engine, replay := slices.Index(rows, "internal/engine"), slices.Index(rows, "internal/replay")
	if engine < 0 || replay < 0 || replay > engine {
		t.Fatalf("the layering table must put internal/replay (row %d) above internal/engine (row %d)", replay, engine)
	}
	checked := 0
	err := filepath.WalkDir("../../internal/engine", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		// A helper only tests import (enginetest) may read the diagnosis
		// above, as every helper may; the offline replay, never.
		helper := strings.HasSuffix(filepath.Base(filepath.Dir(path)), "test")
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			dep, ok := strings.CutPrefix(p, module)
			if !ok || strings.HasPrefix(dep, "internal/engine") || dep == "internal/testutil" {
				continue
			}
			if dep == "internal/replay" || strings.HasPrefix(dep, "internal/replay/") {
				t.Errorf("%s imports %s: the engine must not know the offline replay", path, dep)
			} else if r := slices.Index(rows, dep); r <= engine && !helper {
				t.Errorf("%s imports %s, which the layering table does not put below internal/engine", path, dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 3 {
		t.Errorf("checked %d files of internal/engine", checked)
	}
}
