package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Scenario files: data-driven tests in testdata/<dir>/*.txt at the module
// root, as testdata/gate's. A file is blocks of commands, a "----" line
// and the output they must produce, ended by a blank line; comment ("#")
// and blank lines before a block's commands are kept. A block whose
// commands print nothing expects "ok".

// ScenarioDriver runs one scenario file's commands: Exec runs one
// command (where is FILE:LINE, for errors) and returns the lines it
// prints. A new driver is made for every file.
type ScenarioDriver interface {
	Exec(t *testing.T, where, cmd string) []string
}

// RunScenarios runs every testdata/dir/*.txt with a driver from
// newDriver, one subtest per file; with update set it rewrites each file's
// expected output with what the commands printed (review the diff by
// hand).
func RunScenarios(t *testing.T, dir string, update bool, newDriver func() ScenarioDriver) {
	t.Helper()
	files, err := filepath.Glob(Testdata(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in testdata/%s: %v", dir, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			runScenarioFile(t, file, update, newDriver())
		})
	}
}

type scenarioBlock struct {
	pre      []string // comment and blank lines before the commands
	cmds     []string
	cmdLines []int // 1-based line numbers of cmds
	want     []string
}

func parseScenarioBlocks(t *testing.T, file string) (blocks []scenarioBlock, tail []string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var cur scenarioBlock
	for n := 0; n < len(lines); n++ {
		l := lines[n]
		switch {
		case l == "----":
			if len(cur.cmds) == 0 {
				t.Fatalf("%s:%d: ---- without commands", file, n+1)
			}
			for n+1 < len(lines) && lines[n+1] != "" {
				n++
				cur.want = append(cur.want, lines[n])
			}
			blocks = append(blocks, cur)
			cur = scenarioBlock{}
		case len(cur.cmds) == 0 && (l == "" || strings.HasPrefix(l, "#")):
			cur.pre = append(cur.pre, l)
		default:
			cur.cmds = append(cur.cmds, l)
			cur.cmdLines = append(cur.cmdLines, n+1)
		}
	}
	if len(cur.cmds) > 0 {
		t.Fatalf("%s: commands at the end without ----", file)
	}
	return blocks, cur.pre
}

func runScenarioFile(t *testing.T, file string, update bool, d ScenarioDriver) {
	t.Helper()
	blocks, tail := parseScenarioBlocks(t, file)
	var out strings.Builder
	for _, b := range blocks {
		var got []string
		for k, cmd := range b.cmds {
			got = append(got, d.Exec(t, fmt.Sprintf("%s:%d", file, b.cmdLines[k]), cmd)...)
		}
		if len(got) == 0 {
			got = []string{"ok"}
		}
		if !update && strings.Join(got, "\n") != strings.Join(b.want, "\n") {
			t.Errorf("%s:%d:\n%s\n---- got\n%s\n---- want\n%s", file, b.cmdLines[0],
				strings.Join(b.cmds, "\n"), strings.Join(got, "\n"), strings.Join(b.want, "\n"))
		}
		for _, l := range b.pre {
			out.WriteString(l + "\n")
		}
		for _, l := range b.cmds {
			out.WriteString(l + "\n")
		}
		out.WriteString("----\n")
		for _, l := range got {
			out.WriteString(l + "\n")
		}
	}
	for _, l := range tail {
		out.WriteString(l + "\n")
	}
	if update {
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ScenarioCommand splits a scenario's command line into the command and
// its arguments; arity fails t at where (FILE:LINE) unless there are lo
// to hi arguments.
func ScenarioCommand(t testing.TB, where, line string) (cmd string, args []string, arity func(lo, hi int)) {
	f := strings.Fields(line)
	cmd, args = f[0], f[1:]
	return cmd, args, func(lo, hi int) {
		t.Helper()
		if len(args) < lo || len(args) > hi {
			t.Fatalf("%s: %s: want %d to %d arguments", where, cmd, lo, hi)
		}
	}
}
