// Package docs implements the hidden `causalctl gen-docs`: man pages or
// Markdown for every command, generated from the commands' own help.
package docs

import (
	"os"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// NewCmdGenDocs returns the gen-docs command; root is the tree to document.
func NewCmdGenDocs(root func() *cobra.Command) *cobra.Command {
	var dir, format string
	cmd := &cobra.Command{
		Use:    "gen-docs --dir DIR [--format man|markdown]",
		Short:  "Write the manual of every command to a directory",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if dir == "" {
				return cmdutil.Usagef("give the output directory with --dir")
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			tree := root()
			tree.DisableAutoGenTag = true // the same tree gives the same files
			switch format {
			case "man":
				return doc.GenManTree(tree, &doc.GenManHeader{Title: "CAUSALCTL", Section: "1", Source: "causalctl"}, dir)
			case "markdown":
				return doc.GenMarkdownTree(tree, dir)
			}
			return cmdutil.Usagef("--format %s: want man or markdown", format)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "directory to write the pages to")
	cmd.Flags().StringVar(&format, "format", "man", "man or markdown")
	return cmd
}
