package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/metrics"
)

// fake is a Source whose world the test controls: it can clear a hold.
type fake struct {
	mu    sync.Mutex
	list  render.ProcessesJSON
	holds map[string]render.HoldsJSON
}

func (f *fake) Processes(context.Context) (render.ProcessesJSON, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.list, nil
}

func (f *fake) Process(_ context.Context, app string) (render.HoldsJSON, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h, ok := f.holds[app]
	if !ok {
		return h, ErrNoProcess
	}
	return h, nil
}

var testNow = time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// hostile is a name a broker could hand us: markup, quotes and a terminal
// escape.
const hostile = "<script>window.pwned=1</script>\"'><img src=x onerror=alert(1)>\x1b]8;;http://x\x07"

// world is processes ok and stuck: "stuck" holds one head dangling on a
// topic named hostile, written by a producer whose transactional id and
// group member are hostile too.
func world(n int) *fake {
	f := &fake{holds: map[string]render.HoldsJSON{}}
	f.list = render.ProcessesJSON{Schema: render.ProcessesSchema, Now: render.Time(testNow), Processes: []render.ProcessJSON{}}
	for i := range n {
		app := fmt.Sprintf("app-%04d", i)
		f.list.Processes = append(f.list.Processes, render.ProcessJSON{App: app, Tasks: 2, Causes: map[string]int{}, Receives: []string{}, FailedClosed: []render.ProcessFailedClosed{},
			Group: &render.GroupJSON{State: "Stable", Members: []string{"m-1"}}, NextStart: &render.NextStart{Refusals: []render.Refusal{}}})
	}
	f.list.Processes = append(f.list.Processes, render.ProcessJSON{App: "stuck" + hostile, Tasks: 1, HeldRecords: 7, HeldHeads: 1, OldestWrittenMsAgo: ptr(int64(754000)),
		Causes: map[string]int{string(inspect.CauseBeyondLogEnd): 1}, Receives: []string{hostile}, FailedClosed: []render.ProcessFailedClosed{},
		Group: &render.GroupJSON{State: "Stable", Members: []string{"member-" + hostile}}, NextStart: &render.NextStart{Refusals: []render.Refusal{}}})
	task := int32(0)
	f.holds["stuck"+hostile] = render.HoldsJSON{Schema: render.HoldsSchema, Now: render.Time(testNow), App: "stuck" + hostile, HeldHeads: 1, HeldRecords: 7,
		Tasks: []render.HoldsTask{{Task: 0, Scope: []string{hostile + "/0", "orders/0"}, HeldHeads: 1, HeldRecords: 7}},
		Roots: []render.RootJSON{{Channel: hostile + "/0", Offset: 31, Cause: inspect.CauseBeyondLogEnd, NextStep: "find the writer of " + hostile, Heads: []string{hostile + "/0@31"}, Task: &task}},
		Heads: []render.HeadJSON{{Channel: hostile + "/0", Offset: 31, Timestamp: ptr(render.Time(testNow.Add(-754 * time.Second))), WrittenMsAgo: ptr(int64(754000)), Queued: 7,
			Headers: []render.HeaderSizeJSON{{Key: "parsley.causes", Size: ptr(27)}, {Key: hostile, Size: nil}},
			Causes:  "orders/0=1000027", Cause: inspect.CauseBeyondLogEnd, Root: &render.RootRef{Channel: hostile + "/0", Offset: 31, Cause: inspect.CauseBeyondLogEnd},
			Chain: []string{hostile + "/0"}, ChainLength: 1, NextStep: "find the writer of " + hostile, Task: &task,
			Blockers: []render.BlockerJSON{{Channel: "orders/0", Required: 1000027, Settled: ptr(int64(40)), Cause: inspect.CauseBeyondLogEnd,
				Producer: &render.ProducerJSON{OpenTransaction: recordTxn(hostile)}}}}},
		Cycles: [][]string{},
	}
	return f
}

func get(t *testing.T, h http.Handler, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Result(), rec.Body.String()
}

func TestStuckFirstFilterAndPages(t *testing.T) {
	h := Handler(world(250), nil, Options{Now: func() time.Time { return testNow }})
	res, body := get(t, h, "/")
	if res.StatusCode != 200 {
		t.Fatalf("/: %d", res.StatusCode)
	}
	rows := strings.Split(body, "<tr class=")
	if len(rows) != PageSize+1 {
		t.Fatalf("/ lists %d rows, want a page of %d", len(rows)-1, PageSize)
	}
	if !strings.HasPrefix(rows[1], `"stuck"`) || !strings.Contains(rows[1], "stuck&lt;script&gt;") {
		t.Errorf("the stuck process is not first: %.300s", rows[1])
	}
	if !strings.Contains(body, `rel="next" href="/?page=2"`) {
		t.Error("no link to page 2")
	}
	_, p3 := get(t, h, "/?page=3")
	if n := strings.Count(p3, "<tr class="); n != 51 {
		t.Errorf("page 3 lists %d rows, want 51", n)
	}
	_, byName := get(t, h, "/?name=app-000")
	if n := strings.Count(byName, "<tr class="); n != 10 {
		t.Errorf("name filter: %d rows, want 10", n)
	}
	_, byCause := get(t, h, "/?cause=beyond-log-end")
	if n := strings.Count(byCause, "<tr class="); n != 1 || !strings.Contains(byCause, "stuck&lt;") {
		t.Errorf("cause filter: %d rows", n)
	}
	_, api := get(t, h, "/api/v1/processes?cause=beyond-log-end")
	var doc render.ProcessesJSON
	if err := json.Unmarshal([]byte(api), &doc); err != nil || doc.Schema != render.ProcessesSchema || len(doc.Processes) != 1 {
		t.Errorf("API with the cause filter: %v %+v", err, doc)
	}
}

func TestHostileNamesAreText(t *testing.T) {
	h := Handler(world(1), nil, Options{Now: func() time.Time { return testNow }})
	app := "stuck" + hostile
	for _, path := range []string{"/", "/processes/" + pathEscape(app), "/processes/" + pathEscape(app) + "/tasks/0"} {
		res, body := get(t, h, path)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, res.StatusCode, body)
		}
		for _, bad := range []string{"<script>window", "<img src=x", "\x1b", `"'>`} {
			if strings.Contains(body, bad) {
				t.Errorf("%s carries %q unescaped", path, bad)
			}
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if strings.Count(body, "<script") != 1 {
			t.Errorf("%s: a script besides our own", path)
		}
	}
	_, task := get(t, h, "/processes/"+pathEscape(app)+"/tasks/0")
	for _, want := range []string{"Root cause", "beyond-log-end", "find the writer of &lt;script&gt;", "1000027", "transaction <code>&lt;script&gt;", `title="2026-12-04T02:47:26.000Z"`} {
		if !strings.Contains(task, want) {
			t.Errorf("task page lacks %q", want)
		}
	}
}

func TestGetOnly(t *testing.T) {
	h := Handler(world(1), nil, Options{})
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(m, "/api/v1/processes", nil))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d, want 405", m, rec.Code)
		}
	}
	if res, _ := get(t, h, "/processes/nope/tasks/0"); res.StatusCode != 404 {
		t.Errorf("unknown process: %d", res.StatusCode)
	}
}

func TestExternalURLPrefix(t *testing.T) {
	u, _ := urlParse("https://ops.example.com/parsley/")
	h := Handler(world(1), nil, Options{ExternalURL: u})
	res, body := get(t, h, "/parsley/")
	if res.StatusCode != 200 || !strings.Contains(body, `href="/parsley/static/web.css"`) || !strings.Contains(body, `href="/parsley/processes/stuck`) {
		t.Fatalf("prefixed page: %d %.400s", res.StatusCode, body)
	}
}

// TestWebConfigTLSAndBasicAuth: with a web config of TLS and basic auth,
// every path — pages, API, /metrics — is 401 without credentials and 200
// with them.
func TestWebConfigTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "web.yml")
	os.WriteFile(cfg, fmt.Appendf(nil, "tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  oncall: %s\n", cert, key, hash), 0o600)
	m := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "parsley_records_held 1\n") })
	srv, err := metrics.ServeWeb("127.0.0.1:0", Handler(world(1), m, Options{}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 30 * time.Second}
	for _, path := range []string{"/", "/processes/app-0000", "/api/v1/processes", "/metrics", "/healthz"} {
		for _, c := range []struct {
			user, pass string
			want       int
		}{{"", "", 401}, {"oncall", "wrong", 401}, {"oncall", "s3cret", 200}} {
			req, _ := http.NewRequest(http.MethodGet, "https://"+srv.Addr()+path, nil)
			if c.user != "" {
				req.SetBasicAuth(c.user, c.pass)
			}
			res, err := cl.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if path == "/processes/app-0000" && c.want == 200 {
				c.want = 404 // listed, but the fake has no holds of it
			}
			if res.StatusCode != c.want {
				t.Errorf("%s as %q: %d, want %d", path, c.user, res.StatusCode, c.want)
			}
			if strings.Contains(string(body), "s3cret") || strings.Contains(string(body), string(hash)) {
				t.Errorf("%s: the secret is on the page", path)
			}
		}
	}
	plain, err := http.Get("http://" + srv.Addr() + "/")
	if err == nil && plain.StatusCode == 200 {
		t.Error("plain HTTP served a page")
	}
	if plain != nil {
		plain.Body.Close()
	}
	if _, err := metrics.ServeWeb("127.0.0.1:0", m, filepath.Join(dir, "missing.yml")); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a missing web config: %v", err)
	}
}

func selfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

// BenchmarkIndex1000 renders / over 1 000 processes: the page's size
// (bytes/page) and time per render.
func BenchmarkIndex1000(b *testing.B) {
	h := Handler(world(999), nil, Options{Now: func() time.Time { return testNow }})
	var size int
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "bytes/page")
}

// TestUpstreamAndRetentionOnPages: a process holding behind a stuck
// upstream process, with a retention clock running, says both on / and on
// its page, the upstream linking to its page.
func TestUpstreamAndRetentionOnPages(t *testing.T) {
	w := world(2)
	up, code := "enricher", "POSITIONS_DISCARDED_UNREAD"
	left, other := int64(3*3600*1000), int64(90*3600*1000)
	row := &w.list.Processes[len(w.list.Processes)-1] // the stuck one, whose holds the world has
	row.Upstream = &render.Upstream{App: &up, Kind: "refusing", Code: &code, Reason: "refusing " + code, Topic: "enriched", Via: []string{}, Cycle: []string{}}
	row.RetentionClock = []render.RetentionClock{{Channel: "orders/1", Read: 40, Headroom: 900, LeftMs: &other}, {Channel: "orders/0", Read: 12, Headroom: 12, LeftMs: &left}}
	h := Handler(w, nil, Options{Now: func() time.Time { return testNow }})
	_, index := get(t, h, "/")
	_, page := get(t, h, "/processes/"+pathEscape(row.App))
	for name, body := range map[string]string{"/": index, "the process page": page} {
		for _, want := range []string{`href="/processes/enricher"`, "refusing POSITIONS_DISCARDED_UNREAD", "<code>orders/0</code>", "3h0m0s left"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	if strings.Contains(index, "90h0m0s") {
		t.Error("/ shows a later retention clock, not the soonest")
	}
}

// TestTaskPageSizes: a held head's page gives the record's header keys and
// value sizes, never a value, a hostile key as text.
func TestTaskPageSizes(t *testing.T) {
	h := Handler(world(1), nil, Options{Now: func() time.Time { return testNow }})
	_, body := get(t, h, "/processes/"+pathEscape("stuck"+hostile)+"/tasks/0")
	for _, want := range []string{"<code>parsley.causes</code> 27 bytes", "null (never the bytes themselves)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the task page lacks %q", want)
		}
	}
}
