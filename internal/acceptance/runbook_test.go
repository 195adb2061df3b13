package acceptance

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/tracker"
)

// runbookNextStart is what these tests read of next_start beyond
// nextStart: each refusal's triage answers and the warnings.
type runbookNextStart struct {
	Refusals []struct {
		Reason        parsley.Reason `json:"reason"`
		Detail        string         `json:"detail"`
		RestartAlone  string         `json:"restart_alone"`
		RestartClears bool           `json:"restart_clears"`
		Reset         string         `json:"reset"`
		Check         string         `json:"check"`
		Recorded      bool           `json:"recorded"`
	} `json:"refusals"`
	Warnings []struct {
		Reason parsley.Reason `json:"reason"`
		Detail string         `json:"detail"`
	} `json:"warnings"`
}

// TestRunbookRefusals makes each reason of Parsley's runbook that the
// cluster can show, beyond TestStartRefusals' — SUBSTRATE_MISCONFIGURED's
// shapes, METADATA_BUDGET_EXCEEDED and its warning, ORDERING_STATE_LOST
// from a changelog not compacted, OUT_OF_ORDER_FEED on a channel recorded
// as gone, the stops Parsley records no reason for, and
// POSITIONS_DISCARDED_UNREAD at the first fetch after the group's offsets
// expired — the way it happens to a process on a kfake cluster, beside a
// healthy process, and checks that state (JSON and text, live and from a
// capture), processes and the exporter's tracker all predict it, and it
// alone, with the triage table's answers.
//
// A topic without a topic ID (brokers below 3.7.0) is checked by
// parsley's own tests only: kfake gives every topic an ID at every
// metadata version it serves, and causalctl's client names channels by
// topic ID, so no kfake world can show one.
func TestRunbookRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		make func(t *testing.T, w *startWorld)
		want parsley.Reason // "" for none
		// topic and channels the refusal names; detail a part of its detail
		topic    string
		channels []string
		detail   string
		lost     int64
		// warn is the one warning expected ("" for none)
		warn parsley.Reason
		// offline is what a capture predicts; gone the topics deleted.
		offline parsley.Reason
		gone    []string
	}{
		{name: "a consumer using the application id as its group.id", make: func(t *testing.T, w *startWorld) {
			w.join(t, "inventory-report")
		}, want: parsley.ReasonSubstrateMisconfigured, detail: "a consumer using the application id as its group.id"},
		{name: "a bootstrap member that never left", make: func(t *testing.T, w *startWorld) {
			w.join(t, "parsley-bootstrap-7f3a")
		}, want: parsley.ReasonSubstrateMisconfigured, detail: "a bootstrap member that never left"},
		{name: "a held record larger than the changelog's max.message.bytes", make: func(t *testing.T, w *startWorld) {
			w.setConfig(t, parsley.ChangelogTopic(startApp), "max.message.bytes", "2000")
			// Received next, held (its cause is never written), and its
			// persisted form is over 2 000 bytes.
			w.produceCaused(t, "orders", 0, make([]byte, 4000), clock.Entry{Channel: clock.Channel{Topic: w.ids["payments"]}, Position: 99})
		}, want: parsley.ReasonSubstrateMisconfigured, topic: "orders", channels: []string{"orders/0"}, detail: "max.message.bytes (2000)"},
		{name: "a causes header over the metadata budget, received next", make: func(t *testing.T, w *startWorld) {
			kafkatest.Produce(t, w.c, &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("x"),
				Headers: []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: make([]byte, parsley.DefaultMetadataBudget+1)}}})
		}, want: parsley.ReasonMetadataBudgetExceeded, topic: "orders", channels: []string{"orders/1"}, detail: "over the 262144-byte budget"},
		{name: "a frontier past the metadata budget", make: func(t *testing.T, w *startWorld) {
			w.frontier(t, 10100) // 10 100 one-partition topics: 26 bytes each
		}, want: parsley.ReasonMetadataBudgetExceeded, detail: "against a budget of 262144 bytes", offline: parsley.ReasonMetadataBudgetExceeded},
		{name: "a frontier past 80 % of the budget", make: func(t *testing.T, w *startWorld) {
			w.frontier(t, 8500)
		}, warn: parsley.ReasonMetadataBudgetExceeded},
		{name: "the changelog not compacted, retention aged a partition out", make: func(t *testing.T, w *startWorld) {
			cl := parsley.ChangelogTopic(startApp)
			w.setConfig(t, cl, "cleanup.policy", "delete")
			ends, err := w.adm.ListEndOffsets(ctx, cl)
			mustOK(t, err)
			to := kadm.Offsets{}
			end, _ := ends.Lookup(cl, 1)
			to.Add(kadm.Offset{Topic: cl, Partition: 1, At: end.Offset})
			r, err := w.adm.DeleteRecords(ctx, to)
			mustOK(t, err, r.Error())
		}, want: parsley.ReasonOrderingStateLost, detail: "cleanup.policy is delete"},
		{name: "the changelog not compacted, nothing aged out yet", make: func(t *testing.T, w *startWorld) {
			w.setConfig(t, parsley.ChangelogTopic(startApp), "cleanup.policy", "delete")
		}, warn: parsley.ReasonOrderingStateLost},
		{name: "records on a channel recorded as gone", make: func(t *testing.T, w *startWorld) {
			// An identity check that misjudged shipments as deleted fed
			// its channel to the end; the topic lives on, with records.
			ch := clock.Channel{Topic: w.ids["shipments"]}
			kafkatest.Produce(t, w.c, &kgo.Record{Topic: parsley.ChangelogTopic(startApp), Partition: 0,
				Key: parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch}), Value: parsley.AppendPosition(nil, parsley.DeletedPosition)})
		}, want: parsley.ReasonOutOfOrderFeed, topic: "shipments", channels: []string{"shipments/0"}, offline: parsley.ReasonOutOfOrderFeed},
		{name: "a received topic missing", make: func(t *testing.T, w *startWorld) {
			r, err := w.adm.DeleteTopics(ctx, "shipments")
			mustOK(t, err, r.Error())
		}, want: parsley.StopSourceTopicMissing, topic: "shipments", gone: []string{"shipments"}},
		{name: "a partition added while running", make: func(t *testing.T, w *startWorld) {
			r, err := w.adm.CreatePartitions(ctx, 1, "shipments")
			mustOK(t, err, r.Error())
		}, want: parsley.StopPartitionAdded, topic: "shipments", channels: []string{"shipments/1"}},
		{name: "the group's offsets expired, records deleted past the covered position", make: func(t *testing.T, w *startWorld) {
			var more []*kgo.Record
			for range 5 {
				more = append(more, &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("y")})
			}
			kafkatest.Produce(t, w.c, more...)
			to := kadm.Offsets{}
			to.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 8})
			r, err := w.adm.DeleteRecords(ctx, to)
			mustOK(t, err, r.Error())
			// Expired: the group's offsets are gone, its changelog stays.
			dr, err := w.adm.DeleteGroups(ctx, startApp)
			mustOK(t, err, dr.Error())
		}, want: parsley.ReasonPositionsDiscarded, topic: "orders", channels: []string{"orders/1"}, lost: 3,
			detail: "the group's offsets expired, so the start succeeds at the covered position + 1 (5) and the first fetch refuses", offline: parsley.ReasonPositionsDiscarded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newStartWorld(t, false)
			tc.make(t, w)
			file := w.capture(t, tc.gone)
			args := []string{"--brokers", w.addr, "--app", startApp}
			code, ns, text := w.state(t, args...)
			checkNextStart(t, "live", code, ns, text, false, tc.want, tc.topic, tc.channels, tc.lost)
			rb := w.runbookState(t, args...)
			checkTriage(t, "live", rb, tc.want, tc.detail, tc.warn)
			if tc.want != "" && !strings.Contains(text, "restart alone: "+tc.want.Triage().Restart+"; reset: "+tc.want.Triage().Reset) {
				t.Errorf("live: the text does not give the triage answers:\n%s", text)
			}
			if tc.warn != "" && !strings.Contains(text, "  warning: "+string(tc.warn)+": ") {
				t.Errorf("live: the text does not give the warning:\n%s", text)
			}
			// processes: every changelog here exists, so both are listed.
			pcode, rows := w.processes(t)
			if pcode != 0 || len(rows) != 2 {
				t.Errorf("processes: exit %d, rows %v", pcode, slices.Sorted(maps.Keys(rows)))
			}
			checkRow(t, "processes: "+healthyApp, rows[healthyApp], "", "", nil, 0)
			checkRow(t, "processes: "+startApp, rows[startApp], tc.want, tc.topic, tc.channels, tc.lost)
			// The exporter's tracker agrees.
			if got := w.exporterRefusals(t); !slices.Equal(got, reasonList(tc.want)) {
				t.Errorf("the exporter predicts %v, state %v", got, reasonList(tc.want))
			}
			code, ns, text = w.state(t, "--input", file, "--app", startApp)
			checkNextStart(t, "offline", code, ns, text, false, tc.offline, tc.topic, tc.channels, tc.lost)
		})
	}
}

func reasonList(r parsley.Reason) []string {
	if r == "" {
		return nil
	}
	return []string{string(r)}
}

// checkTriage checks the triage answers of the one refusal (want, "" for
// none) against the runbook's, its detail, and the warnings (warn).
func checkTriage(t *testing.T, how string, ns runbookNextStart, want parsley.Reason, detail string, warn parsley.Reason) {
	t.Helper()
	if want != "" && len(ns.Refusals) == 1 {
		r, tr := ns.Refusals[0], want.Triage()
		if r.RestartAlone != tr.Restart || r.RestartClears != tr.Clears || r.Reset != tr.Reset || r.Check != tr.Check || r.Recorded != tr.Recorded ||
			r.RestartAlone == "" || r.Reset == "" || r.Check == "" {
			t.Errorf("%s: triage %+v, want %+v", how, r, tr)
		}
		if !strings.Contains(r.Detail, detail) {
			t.Errorf("%s: detail %q lacks %q", how, r.Detail, detail)
		}
	}
	var warned []parsley.Reason
	for _, w := range ns.Warnings {
		warned = append(warned, w.Reason)
	}
	if !slices.Equal(warned, []parsley.Reason(nil)) && warn == "" || warn != "" && !slices.Equal(warned, []parsley.Reason{warn}) {
		t.Errorf("%s: warnings %+v, want %q", how, ns.Warnings, warn)
	}
}

// runbookState runs state -o json and returns its next_start's triage
// answers and warnings.
func (w *startWorld) runbookState(t *testing.T, args ...string) runbookNextStart {
	t.Helper()
	code, out, stderr := runEnv(t, nil, append([]string{"state", "-o", "json"}, args...)...)
	var rep struct {
		NextStart *runbookNextStart `json:"next_start"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.NextStart == nil {
		t.Fatalf("state %v: exit %d, %v: %s%s", args, code, err, out, stderr)
	}
	return *rep.NextStart
}

// join makes a consumer with client id clientID a member of startApp's
// group, subscribed to orders, and keeps it there until the test ends.
func (w *startWorld) join(t *testing.T, clientID string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.addr), kgo.ClientID(clientID), kgo.ConsumerGroup(startApp), kgo.ConsumeTopics("orders"),
		kgo.DisableAutoCommit(), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		cl.PollFetches(pctx)
		pcancel()
		gs, err := w.adm.DescribeGroups(ctx, startApp)
		if err == nil && len(gs[startApp].Members) > 0 && gs[startApp].State == "Stable" {
			return
		}
	}
	t.Fatalf("%s never joined %s's group", clientID, startApp)
}

// setConfig sets a topic's config key, as an operator does.
func (w *startWorld) setConfig(t *testing.T, topic, key, value string) {
	t.Helper()
	r, err := w.adm.AlterTopicConfigs(context.Background(), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: key, Value: &value}}, topic)
	if err == nil {
		_, err = r.On(topic, nil)
	}
	mustOK(t, err)
}

// produceCaused writes a record of value to topic/partition whose
// parsley.causes header names causes.
func (w *startWorld) produceCaused(t *testing.T, topic string, partition int32, value []byte, causes ...clock.Entry) {
	t.Helper()
	c, err := clock.New(causes...)
	if err != nil {
		t.Fatal(err)
	}
	kafkatest.Produce(t, w.c, &kgo.Record{Topic: topic, Partition: partition, Value: value,
		Headers: []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: clock.Encode(c)}}})
}

// frontier writes task 0's frontier as the process does when what it
// delivered names n upstream topics of one partition each: one frontier
// entry per channel.
func (w *startWorld) frontier(t *testing.T, n int) {
	t.Helper()
	recs := make([]*kgo.Record, 0, n)
	for i := range n {
		id := clock.TopicID{0xfe, byte(i >> 16), byte(i >> 8), byte(i), 15: 1}
		recs = append(recs, &kgo.Record{Topic: parsley.ChangelogTopic(startApp), Partition: 0,
			Key: parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagFrontier, Channel: clock.Channel{Topic: id}}), Value: parsley.AppendPosition(nil, 1)})
	}
	kafkatest.Produce(t, w.c, recs...)
}

// exporterRefusals is the exporter's tracker's prediction for startApp,
// sorted, after one refresh; it must also say shop-billing starts.
func (w *startWorld) exporterRefusals(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: []string{w.addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	tr := tracker.New(tracker.Config{Client: cl, Now: time.Now})
	if err := tr.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tr.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	snap, _ := tr.Latest()
	var out []string
	for _, p := range snap.Processes {
		for _, r := range slices.Sorted(maps.Keys(p.StartRefusals)) {
			if p.StartRefusals[r] == 0 {
				continue
			}
			if p.App != startApp {
				t.Errorf("the exporter predicts %s for %s", r, p.App)
				continue
			}
			for range p.StartRefusals[r] {
				out = append(out, string(r))
			}
		}
	}
	return out
}
