// Command causalctl inspects causally ordered Kafka pipelines.
package main

import (
	"os"

	"github.com/causalctl/causalctl/internal/cli"
)

//go:generate go run . gen-docs --dir ../..

// Set by the release build: -ldflags "-X main.version=… -X main.commit=… -X main.date=…".
var version, commit, date string

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Getenv, cli.Build{Version: version, Commit: commit, Date: date}))
}
