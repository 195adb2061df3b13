package web

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/testutil"
)

// TestBrowserHostileAndLive: in a real browser, hostile names in a topic,
// a transactional id and a group member render as text and run nothing
// (the console and the DOM are checked), and the task page shows the hold
// clearing without a reload, in a world whose clearing the test controls.
func TestBrowserHostileAndLive(t *testing.T) {
	ctx, logged := testutil.Browser(t)
	w := world(3)
	srv := httptest.NewServer(Handler(w, nil, Options{Refresh: 300 * time.Millisecond}))
	defer srv.Close()
	app := "stuck" + hostile
	taskURL := srv.URL + "/processes/" + pathEscape(app) + "/tasks/0"
	var first, pwned, text, procText string
	var imgs int
	var err error
	must := func(e error) {
		t.Helper()
		if e != nil && err == nil {
			err = e
			t.Fatal(e)
		}
	}
	_, e := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/"))
	must(e)
	first, e = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#processes tbody tr:first-child th").innerText`))
	must(e)
	_, e = chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/processes/"+pathEscape(app)))
	must(e)
	procText, e = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText`))
	must(e)
	_, e = chromedp.Run(ctx, chromedp.Navigate(taskURL))
	must(e)
	text, e = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText`))
	must(e)
	pwned, e = chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.pwned)`))
	must(e)
	imgs, e = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("img").length`))
	must(e)
	// docs/web.md's pictures: CAUSALCTL_SCREENSHOTS=1 go test ./internal/web -run Browser
	if png, e := chromedp.Run(ctx, chromedp.FullScreenshot(100)); e == nil && os.Getenv("CAUSALCTL_SCREENSHOTS") != "" {
		os.WriteFile(testutil.Testdata("..", "docs", "web-task.png"), png, 0o644)
	}
	if !strings.HasPrefix(first, "stuck<script>") {
		t.Errorf("first row %q: want the stuck process, its name as text", first)
	}
	if pwned != "undefined" || imgs != 0 {
		t.Errorf("a hostile name ran: window.pwned=%s, %d img elements", pwned, imgs)
	}
	for _, want := range []string{"<script>window.pwned=1</script>", "transaction <script>", "find the writer of <script>"} {
		if !strings.Contains(text, want) {
			t.Errorf("task page text lacks %q", want)
		}
	}
	if !strings.Contains(procText, "member-<script>") {
		t.Error("the hostile member is not shown as text")
	}
	// Mark this document; a reload would lose the mark.
	var cleared string
	_, e = chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded = true`))
	must(e)
	w.mu.Lock()
	h := w.holds[app]
	h.Heads, h.Roots, h.HeldHeads, h.HeldRecords = []render.HeadJSON{}, []render.RootJSON{}, 0, 0
	h.Tasks = []render.HoldsTask{{Task: 0, Scope: h.Tasks[0].Scope}}
	w.holds[app] = h
	w.mu.Unlock()
	var kept bool
	_, e = chromedp.Run(ctx, chromedp.WaitVisible(".ok-text"))
	must(e)
	cleared, e = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".ok-text").innerText`))
	must(e)
	kept, e = chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded === true`))
	must(e)
	if png, e := chromedp.Run(ctx, chromedp.FullScreenshot(100)); e == nil && os.Getenv("CAUSALCTL_SCREENSHOTS") != "" {
		os.WriteFile(testutil.Testdata("..", "docs", "web-cleared.png"), png, 0o644)
	}
	if cleared != "Nothing held." || !kept {
		t.Errorf("after the hold cleared: %q, same document %v", cleared, kept)
	}
	for _, l := range logged() {
		if strings.Contains(l, "exception") || strings.Contains(l, "pwned") || strings.Contains(l, "Content Security Policy") {
			t.Errorf("console: %s", l)
		}
	}
}
