package audit

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/testutil"
)

// The Parsley cluster run, all its captures as one input, audited for
// every unit's scope at once: Parsley's honest stamps have no finding.
func TestAuditParsleyCluster(t *testing.T) {
	dir := testutil.Shared(t, "conformance", "parsley-cluster")
	units, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(units) == 0 {
		t.Fatalf("no conformance units in %s: %v", dir, err)
	}
	names := &clock.Names{}
	var items []record.Item
	var scopes []struct {
		name     string
		channels []string
	}
	for _, unit := range units {
		var u struct {
			Unit  string   `json:"unit"`
			Scope []string `json:"scope"`
		}
		b, err := os.ReadFile(unit)
		if err == nil {
			err = json.Unmarshal(b, &u)
		}
		if err != nil {
			t.Fatal(err)
		}
		scopes = append(scopes, struct {
			name     string
			channels []string
		}{u.Unit, u.Scope})
		f, err := os.Open(strings.TrimSuffix(unit, ".json") + ".ndjson")
		if err != nil {
			t.Fatal(err)
		}
		r := capture.NewReader(f)
		for {
			it, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			c := *it
			c.Headers = append([]clock.Header(nil), it.Headers...)
			for i := range c.Headers {
				c.Headers[i].Value = append([]byte(nil), c.Headers[i].Value...)
			}
			items = append(items, c)
		}
		f.Close()
	}
	for _, it := range items { // the scopes name the captures' topics
		if err := names.Add(it.Topic, it.TopicID); err != nil {
			t.Fatal(err)
		}
	}
	var ss []Scope
	for _, s := range scopes {
		sc := Scope{Name: s.name}
		for _, ch := range s.channels {
			c, err := names.ParseChannel(ch)
			if err != nil {
				t.Fatal(err)
			}
			sc.Channels = append(sc.Channels, c)
		}
		ss = append(ss, sc)
	}
	rep := auditItems(t, New(Config{Names: names}), items, ss)
	if rep.Records != 594 || len(rep.Scopes) != 12 {
		t.Errorf("%d records, %d scopes: want the run's 594 records and 12 units", rep.Records, len(rep.Scopes))
	}
	for _, f := range all(rep) {
		t.Errorf("finding on Parsley's stamps: %+v", f)
	}
	if rep.Unaudited != 0 || len(rep.NotInInput) != 0 {
		t.Errorf("%d records unaudited, %d channels claimed outside the input: want none", rep.Unaudited, len(rep.NotInInput))
	}
}
