package acceptance

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/testutil"
)

// followAlertInBrowser opens the exporter at base in a real browser (the
// demo under --fault dangling on broker): the notifier is the first
// process, one click on it opens alertPage (the alert's link), and that
// page names every beyond-log-end root of holds --app with its cause and
// next step. CAUSALCTL_SCREENSHOTS=1 writes docs/web-demo-*.png.
func followAlertInBrowser(t *testing.T, broker, base, alertPage string) {
	t.Helper()
	ctx, logged := testutil.Browser(t)
	var first, href, text string
	shot := func(name string) {
		if os.Getenv("CAUSALCTL_SCREENSHOTS") == "" {
			return
		}
		if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			os.WriteFile(testutil.Testdata("..", "docs", name), png, 0o644)
		}
	}
	if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	first, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#processes tbody tr:first-child th").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if first != demo.NotifierApp {
		t.Errorf("the first process on / is %q, want the stuck %s", first, demo.NotifierApp)
	}
	shot("web-demo-index.png")
	if _, err := chromedp.Run(ctx, chromedp.Click(`#processes tbody tr:first-child th a`)); err != nil {
		t.Fatalf("one click on the first process: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.WaitVisible(`ul.roots`)); err != nil {
		t.Fatalf("the process page after one click: %v", err)
	}
	if href, err = chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`)); err != nil {
		t.Fatal(err)
	}
	if text, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText`)); err != nil {
		t.Fatal(err)
	}
	shot("web-demo-process.png")
	if href != alertPage {
		t.Errorf("one click from / opens %s; the alert links to %s", href, alertPage)
	}
	// The roots as holds --app says them: a dangling claim waits for good,
	// so its root, cause and next step are the same whenever either reads.
	_, out, errOut := run(t, false, "", "holds", "--brokers", broker, "--app", demo.NotifierApp, "-o", "json")
	var holds struct {
		Roots []struct {
			Channel, Cause string
			Offset         int64
			NextStep       string `json:"next_step"`
		}
	}
	if err := json.Unmarshal([]byte(out), &holds); err != nil {
		t.Fatalf("holds --app: %v (%s)", err, errOut)
	}
	dangling := 0
	for _, r := range holds.Roots {
		if r.Cause != "beyond-log-end" {
			continue // catching up: may differ between two reads
		}
		dangling++
		if want := r.Cause + " at " + r.Channel + "@" + strconv.FormatInt(r.Offset, 10) + " — " + r.NextStep; !strings.Contains(text, want) {
			t.Errorf("the process page lacks the root %q:\n%s", want, text)
		}
	}
	if dangling == 0 {
		t.Errorf("holds --app names no beyond-log-end root: %s", out)
	}
	// Opened from the alert (a new navigation), the link is that page.
	if _, err := chromedp.Run(ctx, chromedp.Navigate(alertPage)); err != nil {
		t.Fatalf("the alert's link %s: %v", alertPage, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.WaitVisible(`ul.roots`)); err != nil {
		t.Fatalf("the alert's link %s shows no roots: %v", alertPage, err)
	}
	if l := logged(); len(l) > 0 {
		t.Errorf("the browser logged: %q", l)
	}
}
