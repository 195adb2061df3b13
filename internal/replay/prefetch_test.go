package replay

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/record"
)

func prefetchInput(n int, bad bool) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"topic":"t","topic_id":"00000000-0000-0000-0000-00000000000%d","partition":%d,"offset":%d,"headers":[{"key":"a","value":"AQA="},{"key":"b","value":null},{"key":"c","value":""}],"value":"%s"}`+"\n",
			1+i%3, i%2, i, strings.Repeat("QUJD", i%2000))
	}
	if bad {
		b.WriteString("{\n")
	}
	return b.String()
}

func readAll(src engine.Source) ([]record.Item, error) {
	var out []record.Item
	for {
		it, err := src.Next()
		if err != nil {
			return out, err
		}
		c := *it
		c.Headers = nil
		for _, h := range it.Headers {
			if h.Value != nil {
				h.Value = append([]byte{}, h.Value...)
			}
			c.Headers = append(c.Headers, h)
		}
		c.Value = append([]byte(nil), it.Value...)
		out = append(out, c)
	}
}

func TestPrefetchMatchesSource(t *testing.T) {
	for _, bad := range []bool{false, true} {
		in := prefetchInput(1000, bad)
		want, wantErr := readAll(capture.NewReader(strings.NewReader(in)))
		p := Prefetch(capture.NewReader(strings.NewReader(in)))
		got, err := readAll(p)
		p.Close()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("bad=%v: prefetched items differ from the source's", bad)
		}
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || (bad && !strings.HasPrefix(err.Error(), "line 1001: ")) || (!bad && err != io.EOF) {
			t.Fatalf("bad=%v: error %v, want %v", bad, err, wantErr)
		}
		// Null and empty header values stay apart.
		if h := got[0].Headers; h[1].Value != nil || h[2].Value == nil || len(h[2].Value) != 0 {
			t.Fatalf("header values %q", h)
		}
	}
}

func TestPrefetchCloseEarly(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 20 {
		p := Prefetch(capture.NewReader(strings.NewReader(prefetchInput(3000, false))))
		if _, err := p.Next(); err != nil {
			t.Fatal(err)
		}
		p.Close()
		if _, err := p.Next(); !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("Next after Close: %v", err)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left behind", n-before)
	}
}
