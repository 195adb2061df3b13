package check_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A real transactional topic in kfake: commit markers and an aborted
// record leave offsets without records, which the read_committed range
// proves; claims on them are not-a-record, claims at or past a high
// watermark (of the range, or of a topic outside it) beyond-log-end. And
// check writes, joins and commits nothing.
func TestCheckTransactionalTopic(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "a", "c", "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("t"), kgo.DefaultProduceTopic("a"), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	txn := func(commit bool) {
		if err := w.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := w.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := w.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	txn(true)  // a@0, commit marker a@1
	txn(false) // aborted a@2, abort marker a@3
	txn(true)  // a@4, commit marker a@5: the high watermark is 6
	md, err := kadm.NewClient(w).Metadata(ctx, "a", "x")
	if err != nil {
		t.Fatal(err)
	}
	ch := func(topic string, pos int64) clock.Entry {
		return clock.Entry{Channel: clock.Channel{Topic: clock.TopicID(md.Topics[topic].ID)}, Position: pos}
	}
	plain, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("c"), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, claim := range []clock.Entry{ch("a", 1), ch("a", 2), ch("a", 4), ch("a", 6), ch("a", 5), ch("x", 0), ch("a", 0)} {
		r := &kgo.Record{Value: []byte("v"), Headers: []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(claim))}}}
		if err := plain.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	writes := map[int16]int{}
	c.ControlKey(-1, func(req kmsg.Request) (kmsg.Response, error, bool) {
		switch req.Key() {
		case 0, 1, 8, 11, 22, 24, 26: // Produce, Fetch, OffsetCommit, JoinGroup, InitProducerID, AddPartitionsToTxn, EndTxn
			mu.Lock()
			writes[req.Key()]++
			mu.Unlock()
		}
		c.KeepControl()
		return nil, nil, false
	})

	got := checkFindings(t, addr, "check", "-t", "a", "-t", "c", "-o", "json")
	want := []string{
		"beyond-log-end c/0@3 a/0=6 hwm 6",
		"beyond-log-end c/0@5 x/0=0 hwm 0",
		"not-a-record c/0@0 a/0=1 hwm 0", // the commit marker
		"not-a-record c/0@1 a/0=2 hwm 0", // the aborted record
		"not-a-record c/0@4 a/0=5 hwm 0", // the last commit marker, below the range end
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Offline, from a capture: its position lines prove the same gaps, its
	// log-facts lines give the same high watermarks — for the captured
	// channels only. Topic x is not in the capture: its claim is on an
	// unknown topic, unless --topic-id names it; either way its high
	// watermark is not known.
	file := filepath.Join(t.TempDir(), "c.ndjson")
	if code, _, errOut := run(t, addr, "capture", "-t", "a", "-t", "c", "-f", file); code != 0 {
		t.Fatalf("capture: exit %d: %s", code, errOut)
	}
	offline := slices.Delete(slices.Clone(want), 1, 2)
	got = checkFindings(t, "", "check", "-f", file, "-o", "json", "--topic-id", "x="+clock.TopicID(md.Topics["x"].ID).String())
	if strings.Join(got, "\n") != strings.Join(offline, "\n") {
		t.Errorf("from the capture:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(offline, "\n"))
	}
	got = checkFindings(t, "", "check", "-f", file, "-o", "json")
	offline = append(offline, fmt.Sprintf("unknown-topic c/0@5 %s/0=0 hwm 0", clock.TopicID(md.Topics["x"].ID)))
	if strings.Join(got, "\n") != strings.Join(offline, "\n") {
		t.Errorf("from the capture, x unnamed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(offline, "\n"))
	}
	mu.Lock()
	defer mu.Unlock()
	if writes[1] == 0 {
		t.Error("no Fetch seen: the observer is not working")
	}
	delete(writes, 1)
	if len(writes) > 0 {
		t.Errorf("check sent write, join or commit requests: %v", writes)
	}
}

// checkFindings runs check and lists its findings, sorted.
func checkFindings(t *testing.T, addr string, args ...string) []string {
	t.Helper()
	code, out, errOut := run(t, addr, args...)
	var rep struct {
		Findings []struct {
			Kind          string `json:"kind"`
			Channel       string `json:"channel"`
			Offset        int64  `json:"offset"`
			HighWatermark int64  `json:"high_watermark"`
			Claim         struct {
				Channel  string `json:"channel"`
				Position int64  `json:"position"`
			} `json:"claim"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 4 {
		t.Fatalf("exit %d, stderr %q, output %q: %v", code, errOut, out, err)
	}
	var got []string
	for _, f := range rep.Findings {
		got = append(got, fmt.Sprintf("%s %s@%d %s=%d hwm %d", f.Kind, f.Channel, f.Offset, f.Claim.Channel, f.Claim.Position, f.HighWatermark))
	}
	sort.Strings(got)
	return got
}
