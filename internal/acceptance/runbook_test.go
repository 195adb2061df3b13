package acceptance

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/metrics"
	"github.com/causalctl/causalctl/internal/parsley"
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
			w.deleteUnread(t)
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
	tr, _ := refreshed(t, ctx, w.addr, time.Now())
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

// TestRetentionClock: a stopped process's committed read position on
// orders/1 has records past it, written at t0 on a topic that keeps them
// a day. On a clock the test moves, state, processes and the exporter
// tell the same time left, then that it may go any time; with the group's
// offsets expired the read position is the covered position + 1; once the
// log start passes the position (DeleteRecords, as retention does), each
// says it passed, and the next start is refused.
func TestRetentionClock(t *testing.T) {
	w := newStartWorld(t, false)
	w.setConfig(t, "orders", "retention.ms", "86400000")
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	var recs []*kgo.Record
	for range 5 {
		recs = append(recs, &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("y"), Timestamp: t0})
	}
	kafkatest.Produce(t, w.c, recs...)

	type clockJSON struct {
		Channel     string  `json:"channel"`
		Read        int64   `json:"read"`
		LogStart    int64   `json:"log_start"`
		End         int64   `json:"end"`
		Headroom    int64   `json:"headroom"`
		Expired     bool    `json:"offsets_expired"`
		Passed      bool    `json:"passed"`
		Written     *string `json:"written"`
		RetentionMs *int64  `json:"retention_ms"`
		LeftMs      *int64  `json:"left_ms"`
	}
	state := func(now time.Time) ([]clockJSON, string, []string) {
		t.Helper()
		_, out, stderr := runAt(t, w.addr, now, "state", "--app", startApp, "-o", "json")
		for _, e := range loadSchemas(t).Validate("state.schema.json", out) {
			t.Errorf("state: %s", e)
		}
		var rep struct {
			Clocks    []clockJSON `json:"retention_clock"`
			NextStart struct {
				Refusals []struct{ Reason string } `json:"refusals"`
			} `json:"next_start"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("state: %v: %s%s", err, out, stderr)
		}
		var reasons []string
		for _, r := range rep.NextStart.Refusals {
			reasons = append(reasons, r.Reason)
		}
		_, text, _ := runAt(t, w.addr, now, "state", "--app", startApp)
		return rep.Clocks, text, reasons
	}
	processes := func(now time.Time) (string, []clockJSON) {
		t.Helper()
		_, text, _ := runAt(t, w.addr, now, "processes")
		cell := ""
		for _, line := range strings.Split(text, "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[0] == startApp {
				cell = f[len(f)-2]
			} else if len(f) > 2 && f[0] == healthyApp && f[len(f)-2] != "-" {
				t.Errorf("processes: %s has a retention clock: %s", healthyApp, line)
			}
		}
		_, out, _ := runAt(t, w.addr, now, "processes", "-o", "json")
		var rep struct {
			Processes []struct {
				App    string      `json:"app"`
				Clocks []clockJSON `json:"retention_clock"`
			} `json:"processes"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		for _, p := range rep.Processes {
			if p.App == startApp {
				return cell, p.Clocks
			}
		}
		t.Fatalf("processes: no %s: %s", startApp, out)
		return "", nil
	}
	exporter := func(now time.Time) (secs, positions float64, known bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tr, _ := refreshed(t, ctx, w.addr, now)
		reg := prometheus.NewRegistry()
		reg.MustRegister(metrics.NewProcessCollector(tr, func() time.Time { return now }, metrics.Options{}))
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		positions = -1e9
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["app"] != startApp && strings.HasPrefix(mf.GetName(), "parsley_channel_retention_") {
					t.Errorf("the exporter has a retention clock for %s", labels["app"])
				}
				if labels["app"] != startApp || labels["topic"] != "orders" || labels["partition"] != "1" {
					continue
				}
				switch mf.GetName() {
				case "parsley_channel_retention_headroom_seconds":
					secs, known = m.GetGauge().GetValue(), true
				case "parsley_channel_retention_headroom_positions":
					positions = m.GetGauge().GetValue()
				}
			}
		}
		return secs, positions, known
	}
	check := func(how string, got []clockJSON, headroom int64, left time.Duration) {
		t.Helper()
		if len(got) != 1 {
			t.Fatalf("%s: retention clocks %+v, want orders/1's alone", how, got)
		}
		c := got[0]
		if c.Channel != "orders/1" || c.Read != 5 || c.Headroom != headroom || c.Passed != (headroom < 0) ||
			c.RetentionMs == nil || *c.RetentionMs != 86400000 || c.LeftMs == nil || *c.LeftMs != left.Milliseconds() {
			t.Errorf("%s: %+v (left %v), want headroom %d, left %v", how, c, c.LeftMs, headroom, left)
		}
	}

	// 20 hours after: 4 hours left, 5 positions of headroom.
	now := t0.Add(20 * time.Hour)
	clocks, text, reasons := state(now)
	check("state at t0+20h", clocks, 5, 4*time.Hour)
	if !strings.Contains(text, "orders/1: reads at 5 (committed), log 0–10: 5 positions of headroom, 4h0m0s left") || len(reasons) != 0 {
		t.Errorf("state at t0+20h: refusals %v, text:\n%s", reasons, text)
	}
	cell, clocks := processes(now)
	check("processes at t0+20h", clocks, 5, 4*time.Hour)
	if cell != "4h00m" {
		t.Errorf("processes at t0+20h: RETENTION %q, want 4h00m", cell)
	}
	if secs, pos, known := exporter(now); !known || secs != (4*time.Hour).Seconds() || pos != 5 {
		t.Errorf("exporter at t0+20h: %v s (%v), %v positions", secs, known, pos)
	}

	// 25 hours after: the record at the read position may go any time.
	now = t0.Add(25 * time.Hour)
	clocks, text, _ = state(now)
	check("state at t0+25h", clocks, 5, -time.Hour)
	if !strings.Contains(text, "may go any time") {
		t.Errorf("state at t0+25h:\n%s", text)
	}
	if cell, _ := processes(now); cell != "0s" {
		t.Errorf("processes at t0+25h: RETENTION %q, want 0s", cell)
	}

	// The group's offsets expire: the read position is the covered
	// position + 1, the same 5 here (fed up to 4).
	dr, err := w.adm.DeleteGroups(context.Background(), startApp)
	mustOK(t, err, dr.Error())
	clocks, text, _ = state(now)
	check("state, offsets expired", clocks, 5, -time.Hour)
	if !clocks[0].Expired || !strings.Contains(text, "orders/1: reads at 5 (covered + 1, the group's offsets expired)") {
		t.Errorf("state, offsets expired: %+v\n%s", clocks, text)
	}

	// Retention deletes up to offset 7: it passed the read position.
	to := kadm.Offsets{}
	to.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 7})
	r, err := w.adm.DeleteRecords(context.Background(), to)
	mustOK(t, err, r.Error())
	clocks, text, reasons = state(now)
	if !strings.Contains(text, "the group's offsets expired, so the start succeeds") {
		t.Errorf("state once passed: the refusal does not say the offsets expired:\n%s", text)
	}
	if len(clocks) != 1 || !clocks[0].Passed || clocks[0].Headroom != -2 || clocks[0].LogStart != 7 {
		t.Errorf("state once passed: %+v", clocks)
	}
	if !slices.Equal(reasons, []string{string(parsley.ReasonPositionsDiscarded)}) || !strings.Contains(text, "retention passed it by 2 positions") {
		t.Errorf("state once passed: refusals %v, text:\n%s", reasons, text)
	}
	if cell, _ := processes(now); cell != "passed" {
		t.Errorf("processes once passed: RETENTION %q, want passed", cell)
	}
	if _, pos, _ := exporter(now); pos != -2 {
		t.Errorf("exporter once passed: %v positions, want -2", pos)
	}
}
