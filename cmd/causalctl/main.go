// Command causalctl inspects causally ordered Kafka pipelines.
package main

import (
	"os"

	"github.com/causalctl/causalctl/internal/cli"
)

//go:generate go run . gen-docs --dir ../..

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Getenv))
}
