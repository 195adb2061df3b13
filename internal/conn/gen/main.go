// Command gen writes the Markdown documentation of the connection settings
// (conn.Markdown) to the file named by its argument.
package main

import (
	"fmt"
	"os"

	"github.com/causalctl/causalctl/internal/conn"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen FILE")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(conn.Markdown()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
