// Package docs implements the hidden `causalctl gen-docs`, which writes the
// files generated from the command tree: a man page per command and the
// shell completion scripts (and, on request, Markdown pages). The committed
// man/ and completions/ directories are its output; `go generate ./...`
// rewrites them and a test fails when they are stale.
package docs

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// ManDate is the date printed in every man page's header (YYYY-MM-DD). It
// is fixed so that the same tree always gives the same files (the pages are
// committed and checked for freshness); move it forward when cutting a
// release.
const ManDate = "2026-12-01"

// The directories Generate writes, relative to its target.
const (
	ManDir         = "man"
	CompletionsDir = "completions"
)

// NewCmdGenDocs returns the gen-docs command; root builds the tree to
// document (a fresh one, so that generating leaves the running tree alone).
func NewCmdGenDocs(root func() *cobra.Command) *cobra.Command {
	var dir, markdown string
	cmd := &cobra.Command{
		Use:   "gen-docs --dir DIR [--markdown DIR]",
		Short: "Write the man pages and completion scripts generated from the commands",
		Long: `Write DIR/man (one man page per command, section 1) and DIR/completions
(the bash, zsh, fish and PowerShell completion scripts), all generated from
the command tree's own help and flags, so that they never drift from it.
Files are written in full, and pages of commands that no longer exist are
removed. The output depends on nothing but the tree: the same tree gives the
same bytes.

The repository's man/ and completions/ are this command's output:
go generate ./... runs it on the checkout root.`,
		Example: `  causalctl gen-docs --dir .
  causalctl gen-docs --dir /tmp/out --markdown /tmp/out/md`,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if dir == "" {
				return cmdutil.Usagef("give the output directory with --dir")
			}
			if err := Generate(root(), dir); err != nil {
				return err
			}
			if markdown != "" {
				return GenerateMarkdown(root(), markdown)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "write `DIR`/man and DIR/completions")
	cmd.Flags().StringVar(&markdown, "markdown", "", "also write a Markdown page per command to `DIR`")
	return cmd
}

// Generate writes the man pages of tree to dir/man and its completion
// scripts to dir/completions, replacing what was there.
func Generate(tree *cobra.Command, dir string) error {
	prepare(tree)
	man := filepath.Join(dir, ManDir)
	if err := clean(man, "causalctl*.1"); err != nil {
		return err
	}
	date, err := time.Parse(time.DateOnly, ManDate)
	if err != nil {
		return fmt.Errorf("ManDate: %w", err)
	}
	header := &doc.GenManHeader{Section: "1", Date: &date, Source: "causalctl", Manual: "causalctl manual"}
	if err := doc.GenManTree(tree, header, man); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	comp := filepath.Join(dir, CompletionsDir)
	if err := os.MkdirAll(comp, 0o755); err != nil {
		return err
	}
	for _, shell := range cmdutil.CompletionShells() {
		var buf bytes.Buffer
		if err := cmdutil.WriteCompletion(tree, shell, &buf); err != nil {
			return fmt.Errorf("%s completion: %w", shell, err)
		}
		if err := os.WriteFile(filepath.Join(comp, cmdutil.CompletionFileName(shell)), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// GenerateMarkdown writes a Markdown page per command of tree to dir.
func GenerateMarkdown(tree *cobra.Command, dir string) error {
	prepare(tree)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return doc.GenMarkdownTree(tree, dir)
}

// prepare drops cobra's "auto generated" footer, which carries a date, and
// adds the --version flag cobra otherwise adds only when the tree runs.
func prepare(tree *cobra.Command) {
	tree.InitDefaultVersionFlag()
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(tree)
}

// clean creates dir and removes the files in it matching pattern, so that
// a page of a removed command does not linger.
func clean(dir, pattern string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return err
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// Stale compares the generated files under dir with a fresh generation
// into tmp and returns the paths (relative to dir) that differ, are
// missing or should not be there.
func Stale(tree *cobra.Command, dir, tmp string) ([]string, error) {
	if err := Generate(tree, tmp); err != nil {
		return nil, err
	}
	var stale []string
	for _, sub := range []string{ManDir, CompletionsDir} {
		want, err := readTree(filepath.Join(tmp, sub))
		if err != nil {
			return nil, err
		}
		have, err := readTree(filepath.Join(dir, sub))
		if err != nil {
			return nil, err
		}
		for name, b := range want {
			if h, ok := have[name]; !ok || !bytes.Equal(h, b) {
				stale = append(stale, filepath.Join(sub, name))
			}
		}
		for name := range have {
			if _, ok := want[name]; !ok {
				stale = append(stale, filepath.Join(sub, name))
			}
		}
	}
	return stale, nil
}

// readTree reads every regular file of dir by its name; a missing dir is
// empty.
func readTree(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return files, nil
		}
		return nil, err
	}
	for _, e := range entries {
		if e.Type()&fs.ModeType != 0 || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files[e.Name()] = b
	}
	return files, nil
}
