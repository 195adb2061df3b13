package root

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func testTree() *cobra.Command {
	ios, _, _, _ := iostreams.Test()
	return NewCmdRoot(cmdutiltest.Factory(ios, ""))
}

// walk calls fn on every command of the tree, hidden ones included.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// undocumented lists what the tree leaves without help text: commands
// without Short, Long or Example, and flags without usage.
func undocumented(tree *cobra.Command) (missing, seen []string) {
	walk(tree, func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		path := c.CommandPath()
		seen = append(seen, path)
		for _, f := range []struct{ field, text string }{{"Short", c.Short}, {"Long", c.Long}, {"Example", c.Example}} {
			if strings.TrimSpace(f.text) == "" {
				missing = append(missing, path+": no "+f.field)
			}
		}
		check := func(fl *pflag.Flag) {
			if strings.TrimSpace(fl.Usage) == "" {
				missing = append(missing, path+": flag --"+fl.Name+" has no usage text")
			}
		}
		c.LocalFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
	})
	return missing, seen
}

// TestEveryCommandIsDocumented: the man pages, --help and the completion
// descriptions come from these texts, so every command has a Short, a Long
// and an Example, and every flag a usage line. A new command or flag
// without them fails here.
func TestEveryCommandIsDocumented(t *testing.T) {
	missing, seen := undocumented(testTree())
	for _, m := range missing {
		t.Error(m)
	}
	// The walk reached the commands, not just the root.
	for _, want := range []string{"causalctl", "causalctl decode", "causalctl replay", "causalctl watch", "causalctl completion", "causalctl gen-docs"} {
		if !slices.Contains(seen, want) {
			t.Errorf("the walk missed %s (saw %v)", want, seen)
		}
	}
}

// TestUndocumentedIsCaught: the check above reports a command without
// texts and a flag without usage, at any depth.
func TestUndocumentedIsCaught(t *testing.T) {
	tree := testTree()
	bare := &cobra.Command{Use: "bare", Run: func(*cobra.Command, []string) {}}
	bare.Flags().String("silent", "", "")
	deep := &cobra.Command{Use: "deeper", Short: "s", Long: "l", Run: func(*cobra.Command, []string) {}}
	bare.AddCommand(deep)
	tree.AddCommand(bare)
	missing, _ := undocumented(tree)
	want := []string{
		"causalctl bare: no Short", "causalctl bare: no Long", "causalctl bare: no Example",
		"causalctl bare: flag --silent has no usage text", "causalctl bare deeper: no Example",
	}
	slices.Sort(want)
	slices.Sort(missing)
	if !slices.Equal(missing, want) {
		t.Errorf("missing = %q\nwant %q", missing, want)
	}
}

// TestReadmeShowsEveryCommand: the README is the quick start, with one
// example per command; a new command adds its line there.
func TestReadmeShowsEveryCommand(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := map[string]bool{}
	inShell := false
	for _, line := range strings.Split(string(readme), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			inShell = true
		case strings.HasPrefix(line, "```"):
			inShell = false
		case inShell:
			if f := strings.Fields(line); len(f) > 1 && f[0] == "causalctl" {
				examples[f[1]] = true
			}
		}
	}
	for _, c := range testTree().Commands() {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		if !examples[c.Name()] {
			t.Errorf("README.md has no example of `causalctl %s` (a line starting so in a sh block)", c.Name())
		}
	}
}
