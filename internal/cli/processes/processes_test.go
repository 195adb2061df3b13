package processes

import "testing"

func TestPeek(t *testing.T) {
	w := threeProcesses(t)
	for _, tty := range []bool{false, true} {
		out, errOut, code := run(t, w.c, tty)
		t.Logf("exit %d stderr %s\n%s", code, errOut, out)
	}
	out, _, _ := run(t, w.c, false, "-o", "json")
	t.Log(out)
}
