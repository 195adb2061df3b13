package acceptance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
)

// stateCapture writes a capture of a changelog of two tasks: task 0 holds
// orders/0@2, which waits for payments/0@9, never written (beyond the
// log end of the log facts), and payments/0@1 behind nothing (ready);
// task 1 has one corrupt entry.
func stateCapture(t *testing.T) string {
	t.Helper()
	orders, payments := clock.TopicID{0x0a, 15: 1}, clock.TopicID{0x0b, 15: 2}
	clID := clock.TopicID{0x0c, 15: 3}
	topic := parsley.ChangelogTopic("shop")
	path := filepath.Join(t.TempDir(), "state.ndjson")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := capture.NewWriter(f)
	put := func(it *record.Item) {
		if err := w.Write(it); err != nil {
			t.Fatal(err)
		}
	}
	off := map[int32]int64{}
	entry := func(p int32, k parsley.Key, v []byte) {
		put(&record.Item{Kind: record.KindRecord, Topic: topic, TopicID: clID, Partition: p, Offset: off[p],
			Timestamp: 1764450000000, HasTimestamp: true, Key: parsley.AppendKey(nil, k), Value: v})
		off[p]++
	}
	o0, p0 := clock.Channel{Topic: orders}, clock.Channel{Topic: payments}
	for p := range int32(2) {
		put(&record.Item{Kind: record.KindPosition, Topic: topic, TopicID: clID, Partition: p, Offset: 0})
		entry(p, parsley.Key{Tag: parsley.TagVersion}, []byte{1})
		entry(p, parsley.Key{Tag: parsley.TagName, Name: "orders"}, parsley.AppendNameValue(nil, orders))
		entry(p, parsley.Key{Tag: parsley.TagName, Name: "payments"}, parsley.AppendNameValue(nil, payments))
	}
	entry(0, parsley.Key{Tag: parsley.TagFedUpTo, Channel: o0}, parsley.AppendPosition(nil, 4))
	entry(0, parsley.Key{Tag: parsley.TagFedUpTo, Channel: p0}, parsley.AppendPosition(nil, 1))
	entry(0, parsley.Key{Tag: parsley.TagHeld, Channel: o0, Position: 2}, parsley.AppendHeldRecord(nil, &parsley.HeldRecord{
		Timestamp: 1764450000000, Key: []byte("k"), Causes: []clock.Entry{{Channel: p0, Position: 9}}}))
	entry(0, parsley.Key{Tag: parsley.TagHeld, Channel: p0, Position: 1}, parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: -1}))
	entry(1, parsley.Key{Tag: parsley.TagFedUpTo, Channel: clock.Channel{Topic: orders, Partition: 1}}, []byte{1})
	for p := range int32(2) {
		put(&record.Item{Kind: record.KindPosition, Topic: topic, TopicID: clID, Partition: p, Offset: off[p]})
	}
	for _, ch := range []struct {
		name string
		id   clock.TopicID
	}{{"orders", orders}, {"payments", payments}} {
		for p := range int32(2) {
			put(&record.Item{Kind: record.KindLogFacts, Topic: ch.name, TopicID: ch.id, Partition: p,
				Facts: &record.LogFacts{LogStart: 0, LastStable: 5, HighWatermark: 5}})
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStateJSONMatchesTheSchemas: state -o json (offline: a capture with
// a held head, a ready one and a corrupt entry) and decode --state-key
// (every tag) against docs/schemas.
func TestStateJSONMatchesTheSchemas(t *testing.T) {
	s := loadSchemas(t)
	path := stateCapture(t)
	const held = "680102030405060708090a0b0c0d0e0f10000000020000000000000029"
	runs := []struct {
		schema string
		args   []string
		want   []string // fragments the run must print, so the schema sees them
	}{
		{"state.schema.json", []string{"state", "-f", path, "-o", "json"}, []string{`"cause":"beyond-log-end"`, `"cause":"ready"`, `"corrupt":[{`, `"group":null`, `"timestamp":null`}},
		{"state.schema.json", []string{"state", "-f", path, "--task", "0", "-o", "json"}, []string{`"blockers":[{`}},
		{"decode-state.schema.json", []string{"decode", "--state-key", "76", "--state-value", "01", "-o", "json"}, []string{`"version":1`}},
		{"decode-state.schema.json", []string{"decode", "--state-key", "76", "-o", "json"}, []string{`"value":null`}},
		{"decode-state.schema.json", []string{"decode", "--state-key", "660102030405060708090a0b0c0d0e0f1000000002", "--state-value", "7fffffffffffffff", "-o", "json"}, []string{`"deleted":true`}},
		{"decode-state.schema.json", []string{"decode", "--state-key", "630102030405060708090a0b0c0d0e0f1000000002", "--state-value", "ffffffffffffffff", "--topic-id", ordersID, "-o", "json"}, []string{`"position":null`, `"topic":"orders"`}},
		{"decode-state.schema.json", []string{"decode", "--state-key", "6e6f7264657273", "--state-value", "0102030405060708090a0b0c0d0e0f1000000000", "-o", "json"}, []string{`"name":"orders"`}},
		{"decode-state.schema.json", []string{"decode", "--state-key", held, "--topic-id", ordersID, "-o", "json", "--state-value",
			"010000019ad16a606703000000020000000574726163650000000361626300000005656d70747900000000000000030102030405060708090a0b0c0d0e0f100000000200000000000000290102030405060708090a0b0c0d0e0f100000000500000000000000071102030405060708090a0b0c0d0e0f10000000000000000000000009"},
			[]string{`"record":{`, `"headers":[{`}},
	}
	for _, r := range runs {
		_, out, stderr := run(t, false, "", r.args...)
		objs := lines(out)
		if len(objs) != 1 {
			t.Errorf("%q printed %d objects (stderr %q)", r.args, len(objs), stderr)
			continue
		}
		for _, e := range s.Validate(r.schema, objs[0]) {
			t.Errorf("%q against %s: %s\n%s", r.args, r.schema, e, objs[0])
		}
		for _, w := range r.want {
			if !strings.Contains(objs[0], w) {
				t.Errorf("%q: no %s in %s", r.args, w, objs[0])
			}
		}
	}
	// The optional next_start object the start check adds is declared.
	doc := `{"schema":"causalctl.state/v3","app":"a","changelog":"a-__parsley.ordering-changelog","now":"2026-12-01T12:00:00.000Z","group":null,"held_heads":0,"held_records":0,"corrupt":[],"tasks":[],"retention_clock":[],
		"next_start":{"refused":true,"refusals":[{"reason":"POSITIONS_DISCARDED_UNREAD","topic":"orders","channels":["orders/0"],"detail":"d","next_step":"n","records_lost":3}]}}`
	if errs := s.Validate("state.schema.json", doc); len(errs) != 0 {
		t.Errorf("next_start: %v", errs)
	}
	if errs := s.Validate("state.schema.json", strings.Replace(doc, `"records_lost":3`, `"records_lost":3,"extra":1`, 1)); len(errs) == 0 {
		t.Error("an undeclared field in a refusal passes")
	}
}
