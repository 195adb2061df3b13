package capture

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestLogFactsLineRoundTrips(t *testing.T) {
	a := mustID(t, idA)
	facts := &LogFacts{LogStart: 3, LastStable: 57, HighWatermark: 60,
		Retention:        &Retention{Ms: 604800000, Bytes: -1, CleanupPolicy: "delete"},
		OpenTransactions: []OpenTransaction{{ProducerID: 7, ProducerEpoch: 2, TransactionalID: "payments-tx", FirstOffset: 57, StartedAt: 1764450000123}},
		At:               1764450001000}
	in := []Item{
		{Kind: KindLogFacts, Topic: "orders", TopicID: a, Partition: 2, Facts: facts},
		{Kind: KindPosition, Topic: "orders", TopicID: a, Partition: 2, Offset: 3},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range in {
		if err := w.Write(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	const want = `"partition":2,"log_facts":{"log_start":3,"last_stable":57,"high_watermark":60,"retention":{"ms":604800000,"bytes":-1,"cleanup_policy":"delete"},"open_transactions":[{"producer_id":7,"producer_epoch":2,"transactional_id":"payments-tx","first_offset":57,"started_at":1764450000123}],"at":1764450001000}}`
	if !strings.HasSuffix(first, want) {
		t.Errorf("log-facts line\n%s\nwant it to end\n%s", first, want)
	}
	rd := NewReader(&buf)
	it, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	if it.Kind != KindLogFacts || it.Partition != 2 || it.TopicID != a || !reflect.DeepEqual(it.Facts, facts) {
		t.Errorf("read back %+v (facts %+v), want %+v", it, it.Facts, facts)
	}
	it, err = rd.Next()
	if err != nil || it.Kind != KindPosition || it.Facts != nil {
		t.Errorf("next item %+v, %v: want the position line, without facts", it, err)
	}
}

func TestLogFactsLineErrors(t *testing.T) {
	for _, c := range []struct{ line, msg string }{
		{`{"topic":"a","partition":0,"position":1,"log_facts":{"log_start":0,"high_watermark":1}}`, `a log-facts line is neither a record nor a position`},
		{`{"topic":"a","partition":0,"log_facts":{"log_start":5,"high_watermark":1}}`, `high_watermark 1 below log_start 5`},
		{`{"topic":"a","partition":0,"log_facts":{"log_start":-1,"high_watermark":1}}`, `negative log_start`},
		{`{"topic":"a","partition":0,"log_facts":{"log_start":0,"last_stable":9,"high_watermark":1}}`, `last_stable 9 outside`},
		{`{"topic":"a","partition":0,"log_facts":{"log_start":"x"}}`, `field "log_facts"`},
		{`{"topic":"a","partition":0,"log_facts":{"log_start":0,"high_watermark":1},"headers":[]}`, `not allowed on a log-facts line`},
		{`{"topic":"a","log_facts":{"log_start":0,"high_watermark":1}}`, `missing "partition"`},
	} {
		_, err := NewReader(strings.NewReader(c.line + "\n")).Next()
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: error %v, want line 1 and %q", c.line, err, c.msg)
		}
	}
	// Unknown fields inside the facts are ignored, as on every line.
	it, err := NewReader(strings.NewReader(`{"topic":"a","partition":0,"log_facts":{"log_start":1,"high_watermark":4,"future":{"x":[1]}}}` + "\n")).Next()
	if err != nil || it.Facts.LastStable != -1 || it.Facts.HighWatermark != 4 {
		t.Errorf("unknown field in log facts: %+v, %v (last_stable absent means -1)", it, err)
	}
}

// TestLogFactsValidatedAsAWhole: a log-facts line is refused, naming its
// line and what is wrong, when a field is missing (never read as 0), given
// twice, spelt in another case, of the wrong type, or contradicts another,
// and when it holds what no broker reports.
func TestLogFactsValidatedAsAWhole(t *testing.T) {
	const ok = `"log_start":0,"last_stable":5,"high_watermark":9`
	const ret = `"retention":{"ms":1000,"bytes":-1,"cleanup_policy":"delete"}`
	const txn = `"producer_id":7,"producer_epoch":0,"first_offset":5`
	for _, c := range []struct{ name, facts, msg string }{
		{"missing log_start", `{"last_stable":5,"high_watermark":9}`, `missing "log_start"`},
		{"missing high_watermark", `{"log_start":0,"last_stable":5}`, `missing "high_watermark"`},
		{"null high_watermark", `{"log_start":0,"high_watermark":null}`, `missing "high_watermark"`},
		{"duplicate key", `{` + ok + `,"log_start":3}`, `duplicate field "log_start"`},
		{"duplicate unknown key", `{` + ok + `,"x":1,"x":2}`, `duplicate field "x"`},
		{"another case", `{"LOG_START":0,"high_watermark":9}`, `missing "log_start"`},
		{"fraction", `{"log_start":0.5,"high_watermark":9}`, `want an integer, got 0.5`},
		{"exponent", `{"log_start":0,"high_watermark":1e3}`, `want an integer, got 1e3`},
		{"string", `{"log_start":"0","high_watermark":9}`, `want an integer`},
		{"not an object", `[1]`, `want an object`},
		{"high below start", `{"log_start":5,"high_watermark":4}`, `high_watermark 4 below log_start 5`},
		{"stable past high", `{"log_start":0,"last_stable":10,"high_watermark":9}`, `last_stable 10 outside`},
		{"stable below -1", `{"log_start":0,"last_stable":-2,"high_watermark":9}`, `last_stable -2 outside`},
		{"retention without ms", `{` + ok + `,"retention":{"bytes":-1,"cleanup_policy":"delete"}}`, `missing "ms"`},
		{"retention without bytes", `{` + ok + `,"retention":{"ms":1,"cleanup_policy":"delete"}}`, `missing "bytes"`},
		{"retention without policy", `{` + ok + `,"retention":{"ms":1,"bytes":-1}}`, `missing "cleanup_policy"`},
		{"retention ms twice", `{` + ok + `,"retention":{"ms":1,"ms":2,"bytes":-1,"cleanup_policy":"delete"}}`, `duplicate field "ms"`},
		{"retention ms below -1", `{` + ok + `,"retention":{"ms":-2,"bytes":-1,"cleanup_policy":"delete"}}`, `retention.ms -2`},
		{"policy not a string", `{` + ok + `,"retention":{"ms":1,"bytes":-1,"cleanup_policy":1}}`, `want a string`},
		{"txn without first_offset", `{` + ok + `,"open_transactions":[{"producer_id":7,"producer_epoch":0}]}`, `[0]: missing "first_offset"`},
		{"txn without producer", `{` + ok + `,"open_transactions":[{"producer_epoch":0,"first_offset":5}]}`, `missing "producer_id"`},
		{"txn epoch too wide", `{` + ok + `,"open_transactions":[{"producer_id":7,"producer_epoch":40000,"first_offset":5}]}`, `out of range`},
		{"txn negative producer", `{` + ok + `,"open_transactions":[{"producer_id":-1,"producer_epoch":0,"first_offset":5}]}`, `negative producer_id`},
		{"txn producer twice", `{` + ok + `,"open_transactions":[{` + txn + `},{` + txn + `}]}`, `producer_id 7 has two open transactions`},
		{"txns not a list", `{` + ok + `,"open_transactions":{}}`, `want a list`},
	} {
		line := `{"topic":"a","partition":0,"log_facts":` + c.facts + `}`
		rd := NewReader(strings.NewReader(`{"topic":"a","partition":0,"position":0}` + "\n" + line + "\n"))
		if _, err := rd.Next(); err != nil {
			t.Fatalf("%s: the first line: %v", c.name, err)
		}
		_, err := rd.Next()
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), `line 2: field "log_facts": `) {
			t.Errorf("%s: error %v, want line 2, the field and %q", c.name, err, c.msg)
		}
	}
	// The complete line reads, whatever order its fields come in, and the
	// first pass (channels only) checks it as the full reading does.
	for _, opts := range [][]ReaderOption{nil, {ChannelsOnly()}} {
		line := `{"topic":"a","partition":0,"log_facts":{"at":3,"open_transactions":[{` + txn + `,"transactional_id":"t"}],` + ret + `,` + ok + `}}`
		it, err := NewReader(strings.NewReader(line+"\n"), opts...).Next()
		if err != nil || it.Facts == nil || it.Facts.HighWatermark != 9 || it.Facts.Retention.Ms != 1000 || it.Facts.OpenTransactions[0].TransactionalID != "t" {
			t.Errorf("%v: %+v, %v", opts, it, err)
		}
		bad := `{"topic":"a","partition":0,"log_facts":{"log_start":0}}`
		if _, err := NewReader(strings.NewReader(bad+"\n"), opts...).Next(); err == nil {
			t.Errorf("%v: incomplete facts accepted", opts)
		}
	}
}
