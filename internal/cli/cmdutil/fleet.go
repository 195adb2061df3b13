package cmdutil

import (
	"os"

	"github.com/causalctl/causalctl/internal/upstream"
	"github.com/spf13/cobra"
)

// AddFleetFlag declares --fleet FILE: which application sends which
// topics, for the writers the cluster cannot tell (upstream.ParseFleet,
// docs/fleet.md). The file is read as the flag is parsed: one that cannot
// be read or parsed is a usage error naming the file and the line.
func AddFleetFlag(cmd *cobra.Command, w *upstream.Writers) {
	cmd.Flags().Var(&fleetFlag{w: w}, "fleet", "read which application sends which topics from `FILE` (lines APP: TOPIC, TOPIC; docs/fleet.md), beside what the cluster tells")
	_ = cmd.MarkFlagFilename("fleet")
}

type fleetFlag struct {
	w    *upstream.Writers
	name string
}

func (f *fleetFlag) String() string { return f.name }
func (f *fleetFlag) Type() string   { return "FILE" }
func (f *fleetFlag) Set(name string) error {
	file, err := os.Open(name)
	if err != nil {
		return err
	}
	defer file.Close()
	w, err := upstream.ParseFleet(name, file)
	if err != nil {
		return err
	}
	f.name, *f.w = name, w
	return nil
}
