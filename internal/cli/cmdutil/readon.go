package cmdutil

import (
	"github.com/spf13/cobra"

	"github.com/causalctl/causalctl/internal/inspect"
)

// AddReadOnMaxRecordsFlag registers --read-on-max-records, the bound of a
// process's read on from its committed offsets (processes, exporter),
// into n: 0 reads to the log end (process.ReadOnBound turns it into
// ReadOnOptions.MaxRecords).
func AddReadOnMaxRecordsFlag(cmd *cobra.Command, n *int64) {
	cmd.Flags().Int64Var(n, "read-on-max-records", inspect.DefaultReadOnMaxRecords,
		"read each process on from its committed offsets at most `N` records (0: to the log end); a process further behind is reported as read so far, PARTIAL, not guessed")
}
