package metrics

import (
	"bytes"
	"net/http"
	"sync"
)

// maxVariants bounds the renders kept at once: one per kind of scrape
// (its Accept and Accept-Encoding headers) seen within the current
// snapshot and second. Scrapers send the same headers every time, so a
// few suffice; a scrape of a kind beyond them is rendered for itself.
const maxVariants = 4

// sharedRenders serves the scrapes of one snapshot (Source.Snapshot) from
// one render: the first scrape renders the whole
// response (every collector, encoded and compressed as it asked) and
// every scrape of the same kind that arrives while it renders, or after
// it, is sent the same bytes. Parallel scrapes of tens of thousands of
// series then cost one render's memory, not one each.
type sharedRenders struct {
	next http.Handler
	// key identifies what a render shows, or is nil when there is nothing
	// to share (no snapshot yet): it must be comparable.
	key func() any

	mu     sync.Mutex
	at     any // the key of the renders kept
	byKind map[string]*render
	kinds  map[string]*http.Request // a scrape of each kind seen, for prepare
	asked  bool                     // a scrape came since the last prepare
}

// render is one response, made once.
type render struct {
	done   chan struct{} // closed once made
	status int
	header http.Header
	body   []byte
}

func shareRenders(next http.Handler, key func() any) *sharedRenders {
	return &sharedRenders{next: next, key: key, byKind: map[string]*render{}, kinds: map[string]*http.Request{}}
}

// prepare renders the current snapshot for every kind of scrape seen so
// far that has no render of it yet, so that the scrapes to come are
// served at once (the exporter calls it after each refresh, on the
// refresh's goroutine, rather than have a scrape render while the next
// refresh competes with it for the CPU). Nothing is rendered while no
// scrape came since the last prepare: nobody is scraping.
func (s *sharedRenders) prepare() {
	s.mu.Lock()
	if !s.asked {
		s.mu.Unlock()
		return
	}
	s.asked = false
	kinds := make([]*http.Request, 0, len(s.kinds))
	for _, req := range s.kinds {
		kinds = append(kinds, req)
	}
	s.mu.Unlock()
	for _, req := range kinds {
		if r, first := s.renderFor(req); first {
			s.make(r, req)
		}
	}
}

// make renders r for req.
func (s *sharedRenders) make(r *render, req *http.Request) {
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	s.next.ServeHTTP(rec, req)
	r.status, r.header, r.body = rec.status, rec.header, rec.body.Bytes()
	close(r.done)
}

func (s *sharedRenders) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	s.asked = true
	s.mu.Unlock()
	r, first := s.renderFor(req)
	if r == nil {
		s.next.ServeHTTP(w, req)
		return
	}
	if first {
		s.make(r, req)
	} else {
		select {
		case <-r.done:
		case <-req.Context().Done():
			return
		}
	}
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.WriteHeader(r.status)
	w.Write(r.body)
}

// renderFor returns the render req shares and whether req makes it; nil
// when it is rendered for itself.
func (s *sharedRenders) renderFor(req *http.Request) (*render, bool) {
	key := s.key()
	if key == nil {
		return nil, false
	}
	kind := req.Header.Get("Accept") + "\x00" + req.Header.Get("Accept-Encoding")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.kinds[kind]; !ok && len(s.kinds) < maxVariants {
		k, _ := http.NewRequest(http.MethodGet, "/metrics", nil)
		k.Header.Set("Accept", req.Header.Get("Accept"))
		k.Header.Set("Accept-Encoding", req.Header.Get("Accept-Encoding"))
		s.kinds[kind] = k
	}
	if s.at != key {
		s.at = key
		clear(s.byKind)
	}
	if r, ok := s.byKind[kind]; ok {
		return r, false
	}
	if len(s.byKind) == maxVariants {
		return nil, false
	}
	r := &render{done: make(chan struct{})}
	s.byKind[kind] = r
	return r, true
}

// recorder keeps a response in memory.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.status = code }
