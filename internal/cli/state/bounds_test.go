package state

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
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

// TestChannelJSONOutOfRange: a committed offset beyond the log's end has
// an unknown lag (null), not 0, and a head stamped 2^63−1 ms an unknown
// time, not a negative written_ms_ago.
func TestChannelJSONOutOfRange(t *testing.T) {
	id := clock.TopicID{1, 15: 1}
	ch := clock.Channel{Topic: id}
	cl := parsley.NewChangelog(parsley.ChangelogTopic(app), clock.TopicID{9, 15: 9})
	put := func(k parsley.Key, v []byte) {
		cl.Apply(0, int64(cl.Partition(0).Entries), parsley.AppendKey(nil, k), v)
	}
	put(parsley.Key{Tag: parsley.TagVersion}, []byte{1})
	put(parsley.Key{Tag: parsley.TagName, Name: "orders"}, parsley.AppendNameValue(nil, id))
	put(parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch}, parsley.AppendPosition(nil, 4))
	put(parsley.Key{Tag: parsley.TagHeld, Channel: ch, Position: 4}, parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: math.MaxInt64}))
	names := &clock.Names{}
	p := inspect.NewProcess(app, cl, names)
	p.Learn("orders", id, 0)
	p.Facts[ch] = &record.LogFacts{LastStable: 5, HighWatermark: 5}
	p.Committed = map[clock.Channel]int64{ch: 1 << 62}
	jc := channelJSON(p, &inspect.Task{State: cl.Partition(0).Store.Decode()}, ch, now)
	if jc.Lag != nil {
		t.Errorf("lag %d from a committed offset of 2^62 beyond an end of 5", *jc.Lag)
	}
	if jc.Head == nil || jc.Head.WrittenMsAgo != nil || jc.Head.Timestamp != nil {
		t.Errorf("head %+v: want a time unknown", jc.Head)
	}
	p.Committed[ch] = 3
	if jc := channelJSON(p, &inspect.Task{State: cl.Partition(0).Store.Decode()}, ch, now); jc.Lag == nil || *jc.Lag != 2 {
		t.Errorf("committed 3 of 5: lag %v", jc.Lag)
	}
}
