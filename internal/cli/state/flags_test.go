package state

import (
	"context"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/iostreams"
)

// TestTaskRange: --task is a partition, an int32; 2^32 used to be read
// as task 0 and 2^31 as a negative task.
func TestTaskRange(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want int32
		ok   bool
	}{
		{"0", 0, true},
		{"2147483647", 2147483647, true},
		{"2147483648", 0, false},
		{"4294967296", 0, false},
		{"-2", 0, false},
	} {
		ios, _, _, _ := iostreams.Test()
		var got *Options
		cmd := NewCmdState(cmdutiltest.Factory(ios, "localhost:9092"), func(_ context.Context, o *Options) error {
			got = o
			return nil
		})
		err := cmdutiltest.Execute(cmdutiltest.AsRoot(cmd), "--app", "a", "--task", tc.arg)
		switch {
		case tc.ok && (err != nil || got.Task != tc.want):
			t.Errorf("--task %s: %v, task %v", tc.arg, err, got)
		case !tc.ok && (cmdutil.ExitCode(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "--task "+tc.arg)):
			t.Errorf("--task %s: exit %d, %v (want a usage error naming the flag)", tc.arg, cmdutil.ExitCode(err), err)
		}
	}
}
