package check

import (
	"context"
	"flag"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/iostreams"
)

var (
	benchFile   = flag.String("check.capture", "", "BenchmarkCheckFile audits this capture `FILE` (causalbench's generated one)")
	benchScopes = flag.String("check.scopes", "", "and these --scopes `FILE`")
	benchArgs   = []string{"--topic-id", "up1=be0c0100-0000-0000-0000-000000000000", "--topic-id", "up2=be0c0200-0000-0000-0000-000000000000"}
)

// BenchmarkCheckFile runs check -f over a capture given by -check.capture,
// for profiling the audit end to end on causalbench's load:
//
//	go test ./internal/cli/check -run - -bench CheckFile -check.capture FILE -cpuprofile cpu.out
func BenchmarkCheckFile(b *testing.B) {
	if *benchFile == "" {
		b.Skip("no -check.capture FILE")
	}
	args := append([]string{"-f", *benchFile, "-o", "json"}, benchArgs...)
	if *benchScopes != "" {
		args = append(args, "--scopes", *benchScopes)
	}
	for b.Loop() {
		ios, _, _, _ := iostreams.Test()
		cmd := cmdutiltest.AsRoot(NewCmdCheck(cmdutiltest.Factory(ios, ""), nil))
		cmd.SetArgs(args)
		if err := cmd.ExecuteContext(context.Background()); cmdutil.ExitCode(err) != 0 {
			b.Fatalf("check: %v", err)
		}
	}
}
