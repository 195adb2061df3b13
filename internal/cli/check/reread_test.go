package check

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// A capture whose claims name records later in the file is audited from a
// second reading: c/0@0 claims u/0@0, which claims a/0@0, each written
// before what it claims. For a node consuming a and c that is a hole,
// from a file and from stdin (read again from its spool) alike.
func TestCheckClaimsOfLaterLines(t *testing.T) {
	topic := func(name string, k byte) (string, clock.Channel) {
		var id clock.TopicID
		id[0], id[15] = 0x7e, k
		return name, clock.Channel{Topic: id}
	}
	an, a := topic("a", 1)
	un, u := topic("u", 2)
	cn, c := topic("c", 3)
	stamp := func(ch clock.Channel) []clock.Header {
		return []clock.Header{{Key: clock.HeaderCauses, Value: clock.Encode(clock.MustNew(clock.Entry{Channel: ch, Position: 0}))}}
	}
	var buf bytes.Buffer
	w := capture.NewWriter(&buf)
	for _, it := range []*record.Item{
		{Kind: record.KindRecord, Topic: cn, TopicID: c.Topic, Headers: stamp(u)},
		{Kind: record.KindRecord, Topic: un, TopicID: u.Topic, Headers: stamp(a)},
		{Kind: record.KindRecord, Topic: an, TopicID: a.Topic},
	} {
		if err := w.Write(it); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "later.ndjson")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, stdin, file string }{{"file", "", path}, {"stdin", buf.String(), "-"}} {
		code, out, errOut := exec(t, false, tc.stdin, "-f", tc.file, "--scope", "a,c", "-o", "text")
		if code != cmdutil.ExitFound || errOut != "" || !strings.Contains(out, "1 finding: hole (1).") {
			t.Errorf("%s: exit %d, stderr %q: want 4, one hole\n%s", tc.name, code, errOut, out)
		}
	}
}
