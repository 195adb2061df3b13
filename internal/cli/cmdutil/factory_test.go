package cmdutil

import (
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/iostreams"
)

// TestNewFactory: the Factory reads the environment it is given, the wall
// clock, and has connection settings for the root's flags to fill.
func TestNewFactory(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := NewFactory(ios, func(k string) string { return "v-" + k })
	if f.IOStreams != ios || f.Getenv("X") != "v-X" || f.Conn == nil || f.Now == nil {
		t.Fatalf("factory %+v", f)
	}
	if d := time.Since(f.Now()); d < 0 || d > time.Hour {
		t.Errorf("Now is %v from the wall clock", d)
	}
}
