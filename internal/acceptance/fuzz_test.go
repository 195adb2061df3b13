package acceptance

import (
	"context"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/iostreams"
)

// FuzzTextForms feeds arbitrary text to the text forms a user types —
// --scope, --start and a clock (encode) — and checks that causalctl never
// panics, and that whatever it refuses is a usage error: exit 2, one line
// saying why plus the help hint, no control byte reaching the terminal.
func FuzzTextForms(f *testing.F) {
	for _, seed := range []struct{ scope, start, clock string }{
		{"orders,payments/0", "orders/0=1", "orders/0=41,orders/3=7"},
		{"", "", "{}"},
		{"orders/", "orders/0=", "orders/0=-1"},
		{"00000000-0000-0000-0000-00000000000a/0", "payments/0=1,payments/0=2", "00000000-0000-0000-0000-00000000000a/0=9223372036854775807"},
		{`"a,b"`, "=", "x\x1b[31m/0=1"},
		{"orders/99999999999", "orders/0=99999999999999999999", "a/1=1,a/1=2"},
		{"/", "//=1", ",,"},
	} {
		f.Add(seed.scope, seed.start, seed.clock)
	}
	f.Fuzz(func(t *testing.T, scope, start, clockText string) {
		for _, args := range [][]string{
			{"replay", "-f", basicCapture, "-o", "json", "--scope=" + scope},
			{"replay", "-f", basicCapture, "-o", "json", "--start=" + start},
			{"encode", "--topic-id", "orders=01020304-0506-0708-090a-0b0c0d0e0f10", "--", clockText},
		} {
			ios, _, _, errOut := iostreams.Test()
			fac := cmdutiltest.Factory(ios, "")
			fac.Version = "fuzz"
			code := cli.Run(context.Background(), fac, args)
			stderr := errOut.String()
			switch code {
			case cmdutil.ExitOK:
				if stderr != "" {
					t.Fatalf("%q: exit 0 with stderr %q", args, stderr)
				}
			case cmdutil.ExitUsage:
				lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
				if len(lines) != 2 || !strings.HasPrefix(lines[0], "causalctl: ") || !strings.HasPrefix(lines[1], "Run 'causalctl ") {
					t.Fatalf("%q: usage error not one line and the hint: %q", args, stderr)
				}
				for _, r := range lines[0] {
					if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
						t.Fatalf("%q: control byte %U on stderr: %q", args, r, stderr)
					}
				}
			default:
				t.Fatalf("%q: exit %d, want 0 or 2 (a refused text form is a usage error): %q", args, code, stderr)
			}
		}
	})
}
