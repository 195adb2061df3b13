package testutil

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser starts Debian's headless chromium with a fresh profile and
// returns a chromedp context on a tab of it, and the console messages and
// exceptions the pages logged. Without chromium the test is skipped on a
// developer's machine and fails in CI (.ci/run installs it).
func Browser(t testing.TB) (context.Context, func() []string) {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed: .ci/run installs Debian's chromium for the browser tests")
		}
		t.Skip("chromium is not installed (apt-get install chromium): the browser tests are skipped")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.NoFirstRun,
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1200, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelC := context.WithTimeout(ctx, 2*time.Minute) // ends only a hung test
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	var logged []string
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			for _, a := range e.Args {
				logged = append(logged, string(e.Type)+": "+string(a.Value))
			}
		case *runtime.EventExceptionThrown:
			logged = append(logged, "exception: "+e.ExceptionDetails.Text)
		}
	}); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx, func() []string { return logged }
}
