package iostreams

import "testing"

func TestColorWanted(t *testing.T) {
	for _, c := range []struct {
		tty  bool
		env  map[string]string
		want bool
	}{
		{true, nil, true},
		{false, nil, false},
		{true, map[string]string{"NO_COLOR": "1"}, false},
		{true, map[string]string{"NO_COLOR": ""}, true},
		{true, map[string]string{"TERM": "dumb"}, false},
		{true, map[string]string{"TERM": "xterm-256color"}, true},
	} {
		if got := ColorWanted(c.tty, func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("terminal %v, env %v: colour %v, want %v", c.tty, c.env, got, c.want)
		}
	}
}

func TestCanTakeScreen(t *testing.T) {
	s, _, _, _ := Test()
	if s.CanTakeScreen() {
		t.Error("a pipe can take the screen")
	}
	s.SetTTY(true)
	if !s.CanTakeScreen() {
		t.Error("a foreground terminal cannot take the screen")
	}
	s.Foreground = false
	if s.CanTakeScreen() {
		t.Error("a terminal of a background job can take the screen")
	}
}
