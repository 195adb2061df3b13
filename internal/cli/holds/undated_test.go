package holds

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/testutil"
)

// TestOlderThanKeepsUndatedHeads: --older-than cannot show a head whose
// record has no timestamp younger than the threshold, so it keeps it,
// marked undated in text and with a null age in JSON, and exits 4.
func TestOlderThanKeepsUndatedHeads(t *testing.T) {
	data, err := os.ReadFile(testutil.Testdata("captures", "basic.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	undated := regexp.MustCompile(`"timestamp":\d+,`).ReplaceAll(data, nil)
	path := filepath.Join(t.TempDir(), "undated.ndjson")
	os.WriteFile(path, undated, 0o644)
	for _, format := range []string{"text", "json"} {
		ios, _, out, _ := iostreams.Test()
		f := cmdutiltest.Factory(ios, "")
		f.Now = func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }
		err := cmdutiltest.Execute(newCmd(f, nil), "-f", path, "--older-than", "1h", "-o", format)
		if cmdutil.ExitCode(err) != cmdutil.ExitFound {
			t.Errorf("%s: %v (exit %d), want %d: the undated heads are kept", format, err, cmdutil.ExitCode(err), cmdutil.ExitFound)
		}
		want := "payments/0@2  held (undated: the record has no timestamp)"
		if format == "json" {
			want = `"written_ms_ago":null`
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s lacks %q:\n%s", format, want, out)
		}
	}
}
