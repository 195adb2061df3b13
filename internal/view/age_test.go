package view

import (
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/inspect"
)

func TestAgeText(t *testing.T) {
	for _, c := range []struct {
		a    inspect.Age
		want string
	}{
		{inspect.Age{}, "-"},
		{inspect.Age{D: -time.Second, Known: true}, "0ms"},
		{inspect.Age{D: 850 * time.Millisecond, Known: true}, "850ms"},
		{inspect.Age{D: 12340 * time.Millisecond, Known: true}, "12.3s"},
		{inspect.Age{D: 4*time.Minute + 5*time.Second, Known: true}, "4m05s"},
		{inspect.Age{D: 2*time.Hour + 3*time.Minute, Known: true}, "2h03m"},
		{inspect.Age{D: 76 * time.Hour, Known: true}, "3d04h"},
	} {
		if got := AgeText(c.a); got != c.want {
			t.Errorf("%v: %q, want %q", c.a.D, got, c.want)
		}
	}
}
