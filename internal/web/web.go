// Package web serves the pages an on-call engineer opens from an alert:
// every Parsley process (stuck first), one process's tasks, one task's held
// heads — cause, blockers, chain to the root, ages, next step, the record's
// metadata — and the same as JSON under /api/v1, in the CLI's documents
// (`processes -o json`, `holds --app -o json`). It is one more renderer of
// those documents (internal/cli/shared/render): the pages are built from
// the very values the API encodes, so they cannot disagree.
//
// Pages are server-rendered with html/template (every string a broker
// controls is escaped by it) from embedded assets, work without
// JavaScript, and update in place through one small script of our own
// (assets/web.js). Everything is GET only and read-only.
package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/escape"
)

//go:embed assets templates
var files embed.FS

// PageSize is how many processes one page of / lists.
const PageSize = 100

// DefaultRefresh is how often an open page asks for its update.
const DefaultRefresh = 5 * time.Second

// Options configure the pages.
type Options struct {
	// ExternalURL is where users reach the server (--web.external-url);
	// its path is the prefix of every link and route. Nil: served at /.
	ExternalURL *url.URL
	// Refresh is how often an open page updates itself; 0 DefaultRefresh.
	Refresh time.Duration
	// Title names the server on every page (e.g. "causalctl exporter").
	Title string
	Now   func() time.Time
}

// Handler serves the pages and the API from src; metrics, when not nil,
// serves /metrics and /healthz beside them. Only GET (and HEAD) is
// answered; every answer carries a strict Content-Security-Policy.
func Handler(src Source, metrics http.Handler, opts Options) http.Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Refresh <= 0 {
		opts.Refresh = DefaultRefresh
	}
	s := &server{src: src, opts: opts, tmpl: template.Must(template.New("").Funcs(funcs).ParseFS(files, "templates/*.html"))}
	if opts.ExternalURL != nil {
		s.prefix = strings.TrimSuffix(opts.ExternalURL.Path, "/")
	}
	mux := http.NewServeMux()
	static, _ := fs.Sub(files, "assets")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /processes/{app}", s.process)
	mux.HandleFunc("GET /processes/{app}/tasks/{task}", s.task)
	mux.HandleFunc("GET /api/v1/processes", s.apiProcesses)
	mux.HandleFunc("GET /api/v1/processes/{app}", s.apiProcess)
	mux.HandleFunc("GET /api/v1/processes/{app}/tasks/{task}", s.apiTask)
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
		mux.Handle("GET /healthz", metrics)
	}
	var h http.Handler = secure(mux)
	if s.prefix != "" {
		h = http.StripPrefix(s.prefix, h)
	}
	return h
}

// csp allows our own script and style and nothing else: no inline script,
// no other origin, no framing.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

type server struct {
	src    Source
	opts   Options
	tmpl   *template.Template
	prefix string
}

// page is what every template gets.
type page struct {
	Title    string
	Prefix   string
	Refresh  int64 // milliseconds
	Now      time.Time
	Crumbs   []crumb
	Error    string
	Body     any
	NoScript bool
}

type crumb struct{ Name, Href string }

func (s *server) render(w http.ResponseWriter, status int, name string, p page) {
	p.Title = cmp(p.Title, s.opts.Title)
	p.Prefix, p.Refresh = s.prefix, s.opts.Refresh.Milliseconds()
	if p.Now.IsZero() {
		p.Now = s.opts.Now()
	}
	var b strings.Builder
	if err := s.tmpl.ExecuteTemplate(&b, name, p); err != nil {
		http.Error(w, "rendering the page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprint(w, controlsAsText(b.String()))
}

// controlsAsText writes every control byte, bidi override and invalid
// byte of the page as escape.Text writes it: html/template escapes markup,
// not a terminal escape in a topic name. Our templates hold none but
// newlines, so only broker strings are changed.
func controlsAsText(page string) string {
	var b strings.Builder
	for i, r := range page {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
			r == utf8.RuneError && strings.HasPrefix(page[i:], "\xef\xbf\xbd") == false:
			if b.Len() == 0 {
				b.WriteString(page[:i])
			}
			b.WriteString(escape.Text(string(r)))
			continue
		}
		if b.Len() > 0 {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return page
	}
	return b.String()
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// fail answers a read that failed: the error's text escaped, never more
// (the client's settings and credentials are in no error).
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusBadGateway
	if errors.Is(err, ErrNoProcess) {
		status = http.StatusNotFound
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	msg := escape.Text(err.Error())
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, status, map[string]string{"error": msg})
		return
	}
	s.render(w, status, "error.html", page{Error: msg, Crumbs: []crumb{{"Processes", s.prefix + "/"}}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// filter is /'s query: a name substring, a cause, a page.
type filter struct {
	Name  string
	Cause string
	Page  int
}

func filterOf(r *http.Request) filter {
	q := r.URL.Query()
	f := filter{Name: q.Get("name"), Cause: q.Get("cause"), Page: 1}
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 1 {
		f.Page = n
	}
	return f
}

func (f filter) keep(p *render.ProcessJSON) bool {
	if f.Name != "" && !strings.Contains(strings.ToLower(p.App), strings.ToLower(f.Name)) {
		return false
	}
	if f.Cause != "" && p.Causes[f.Cause] == 0 {
		return false
	}
	return true
}

// query is the filter's query string for page n.
func (f filter) query(n int) string {
	v := url.Values{}
	if f.Name != "" {
		v.Set("name", f.Name)
	}
	if f.Cause != "" {
		v.Set("cause", f.Cause)
	}
	if n > 1 {
		v.Set("page", strconv.Itoa(n))
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// Stuck says whether a process needs someone: it could not be read, holds
// a head, fails closed somewhere, or would be refused at its next start.
func Stuck(p *render.ProcessJSON) bool {
	return p.Error != nil || p.HeldHeads > 0 || len(p.FailedClosed) > 0 || p.Corrupt > 0 || (p.NextStart != nil && p.NextStart.Refused)
}

// Order sorts processes stuck first, then by their oldest hold (oldest
// first), then by application id.
func Order(ps []render.ProcessJSON) {
	slices.SortStableFunc(ps, func(a, b render.ProcessJSON) int {
		if sa, sb := Stuck(&a), Stuck(&b); sa != sb {
			if sa {
				return -1
			}
			return 1
		}
		oa, ob := int64(-1), int64(-1)
		if a.OldestWrittenMsAgo != nil {
			oa = *a.OldestWrittenMsAgo
		}
		if b.OldestWrittenMsAgo != nil {
			ob = *b.OldestWrittenMsAgo
		}
		if oa != ob {
			if oa > ob {
				return -1
			}
			return 1
		}
		return strings.Compare(a.App, b.App)
	})
}

// processesView is /: one page of the filtered, ordered processes.
type processesView struct {
	Filter     filter
	Causes     []string
	Rows       []render.ProcessJSON
	Total      int // after the filter
	All        int
	Unread     int
	First      int // 1-based index of the page's first row
	Prev, Next string
	Pages      int
}

func (s *server) processesDoc(r *http.Request) (render.ProcessesJSON, filter, error) {
	doc, err := s.src.Processes(r.Context())
	if err != nil {
		return doc, filter{}, err
	}
	f := filterOf(r)
	kept := []render.ProcessJSON{}
	for i := range doc.Processes {
		if f.keep(&doc.Processes[i]) {
			kept = append(kept, doc.Processes[i])
		}
	}
	Order(kept)
	doc.Processes = kept
	return doc, f, nil
}

func (s *server) index(w http.ResponseWriter, r *http.Request) {
	all, err := s.src.Processes(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	doc, f, _ := s.processesDoc(r)
	v := processesView{Filter: f, All: len(all.Processes), Total: len(doc.Processes), Unread: all.Unread}
	causes := map[string]bool{}
	for _, p := range all.Processes {
		for c := range p.Causes {
			causes[c] = true
		}
	}
	for c := range causes {
		v.Causes = append(v.Causes, c)
	}
	slices.Sort(v.Causes)
	v.Pages = max(1, (v.Total+PageSize-1)/PageSize)
	f.Page = min(f.Page, v.Pages)
	v.Filter = f
	lo := (f.Page - 1) * PageSize
	v.Rows = doc.Processes[lo:min(lo+PageSize, v.Total)]
	v.First = lo + 1
	if f.Page > 1 {
		v.Prev = s.prefix + "/" + f.query(f.Page-1)
	}
	if f.Page < v.Pages {
		v.Next = s.prefix + "/" + f.query(f.Page+1)
	}
	s.render(w, http.StatusOK, "index.html", page{Body: v, Now: parseNow(doc.Now)})
}

func (s *server) apiProcesses(w http.ResponseWriter, r *http.Request) {
	doc, _, err := s.processesDoc(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, doc)
}

// processView is /processes/APP: the process's row and its holds.
type processView struct {
	Row   *render.ProcessJSON
	Holds render.HoldsJSON
}

func (s *server) processDocs(r *http.Request) (processView, error) {
	app := r.PathValue("app")
	holds, err := s.src.Process(r.Context(), app)
	if err != nil {
		return processView{}, err
	}
	v := processView{Holds: holds}
	if list, err := s.src.Processes(r.Context()); err == nil {
		for i := range list.Processes {
			if list.Processes[i].App == app {
				v.Row = &list.Processes[i]
			}
		}
	}
	return v, nil
}

func (s *server) process(w http.ResponseWriter, r *http.Request) {
	v, err := s.processDocs(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	app := v.Holds.App
	s.render(w, http.StatusOK, "process.html", page{Title: app, Body: v, Now: parseNow(v.Holds.Now),
		Crumbs: []crumb{{"Processes", s.prefix + "/"}, {app, ""}}})
}

func (s *server) apiProcess(w http.ResponseWriter, r *http.Request) {
	v, err := s.processDocs(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v.Holds)
}

// taskView is /processes/APP/tasks/N: the holds document narrowed to
// the task.
type taskView struct {
	App   string
	Task  render.HoldsTask
	Holds render.HoldsJSON
}

func (s *server) taskDoc(r *http.Request) (taskView, error) {
	n, err := strconv.ParseInt(r.PathValue("task"), 10, 32)
	if err != nil || n < 0 {
		return taskView{}, fmt.Errorf("task %q: %w", escape.Text(r.PathValue("task")), ErrNoProcess)
	}
	holds, err := s.src.Process(r.Context(), r.PathValue("app"))
	if err != nil {
		return taskView{}, err
	}
	return narrow(holds, int32(n))
}

// narrow is doc with only task's roots, heads and cycles: holds' own
// document for one task.
func narrow(doc render.HoldsJSON, task int32) (taskView, error) {
	v := taskView{App: doc.App}
	found := false
	for _, t := range doc.Tasks {
		if t.Task == task {
			v.Task, found = t, true
		}
	}
	if !found {
		return v, fmt.Errorf("%s has no task %d: %w", escape.Text(doc.App), task, ErrNoProcess)
	}
	out := doc
	out.Tasks = []render.HoldsTask{v.Task}
	out.Roots, out.Heads = []render.RootJSON{}, []render.HeadJSON{}
	inTask := map[string]bool{}
	for _, h := range doc.Heads {
		if h.Task != nil && *h.Task == task {
			out.Heads = append(out.Heads, h)
			inTask[h.Channel] = true
		}
	}
	for _, rt := range doc.Roots {
		if rt.Task != nil && *rt.Task == task {
			out.Roots = append(out.Roots, rt)
		}
	}
	out.Cycles = [][]string{}
	for _, c := range doc.Cycles {
		if len(c) > 0 && inTask[c[0]] {
			out.Cycles = append(out.Cycles, c)
		}
	}
	out.HeldHeads, out.HeldRecords = v.Task.HeldHeads, v.Task.HeldRecords
	v.Holds = out
	return v, nil
}

func (s *server) task(w http.ResponseWriter, r *http.Request) {
	v, err := s.taskDoc(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "task.html", page{Title: fmt.Sprintf("%s task %d", v.App, v.Task.Task), Body: v, Now: parseNow(v.Holds.Now),
		Crumbs: []crumb{{"Processes", s.prefix + "/"}, {v.App, s.prefix + "/processes/" + url.PathEscape(v.App)}, {"task " + strconv.Itoa(int(v.Task.Task)), ""}}})
}

func (s *server) apiTask(w http.ResponseWriter, r *http.Request) {
	v, err := s.taskDoc(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v.Holds)
}

func parseNow(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
