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
		{`{"topic":"a","partition":0,"log_facts":{"log_start":0},"headers":[]}`, `not allowed on a log-facts line`},
		{`{"topic":"a","log_facts":{"log_start":0}}`, `missing "partition"`},
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
