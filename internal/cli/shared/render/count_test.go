package render

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 entries"}, {1, "1 entry"}, {2, "2 entries"}, {-1, "-1 entries"}} {
		if got := Count(c.n, "entry", "entries"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := Noun(1, "head", "heads"); got != "head" {
		t.Errorf("Noun(1) = %q", got)
	}
}
