package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	toolkit "github.com/prometheus/exporter-toolkit/web"

	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/view"
)

// promHandler serves the metrics g gathers from reg, in the format the
// scrape asks; a series that cannot be gathered is left out, the others
// served, and counted in reg (promhttp_metric_handler_errors_total).
func promHandler(reg *prometheus.Registry, g prometheus.Gatherer) http.Handler {
	return promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(g, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          reg,
	}))
}

// serveMux serves metrics (reg's, renders shared) at /metrics, health at
// /healthz (200 when it says ok, else 503, with its reason) and a line
// naming both at /.
func serveMux(metrics *sharedRenders, health func() (bool, string), name string) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		ok, why := health()
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		io.WriteString(w, escape.Text(why)+"\n") // errors name applications, topics and channels

	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, name+": /metrics (Prometheus text or OpenMetrics), /healthz\n")
	})
	return mux
}

// Health reports whether the gate behind src runs, and says why not: "ok",
// "ok: disconnected (retrying, 7s)", or e.g. "failed closed at
// payments/0@6: truncated".
func Health(src Snapshots) (ok bool, why string) {
	s, have := src.Latest()
	switch {
	case !have:
		return false, "starting: no snapshot yet"
	case s.Failure != nil:
		return false, fmt.Sprintf("failed closed at %s@%d: %s", s.Failure.Channel, s.Failure.Offset, s.Failure.Code)
	case s.State == engine.StateError:
		return false, "stopped: " + s.Err
	case s.State == engine.StateDisconnected:
		// Retrying: the gate runs, and restarting it would not bring the
		// brokers back.
		return true, "ok: " + view.Retrying(s.RetryingFor)
	case s.State != engine.StateRunning:
		return false, view.StateText(s.State)
	}
	return true, "ok"
}

// Server is the metrics endpoint, listening.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// Serve binds addr (HOST:PORT; port 0 picks a free one) and serves h there
// until Close.
func Serve(addr string, h http.Handler) (*Server, error) {
	return ServeWeb(addr, h, "")
}

// ServeWeb is Serve with a web configuration file (--web.config.file, the
// Prometheus exporters' format read by exporter-toolkit): TLS and basic
// auth with bcrypt hashes, for every path served. "" serves plain HTTP.
// The file is checked before anything listens.
func ServeWeb(addr string, h http.Handler, webConfig string) (*Server, error) {
	if webConfig != "" {
		if err := toolkit.Validate(webConfig); err != nil {
			return nil, fmt.Errorf("--web.config.file %s: %w", webConfig, err)
		}
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("metrics address %q: %w", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics endpoint: %w", err)
	}
	s := &Server{
		ln: ln,
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
		},
		done: make(chan error, 1),
	}
	flags := &toolkit.FlagConfig{WebConfigFile: &webConfig}
	// The toolkit logs only its TLS handshake errors: not ours to print.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { s.done <- toolkit.Serve(ln, s.srv, flags, quiet) }()
	return s, nil
}

// Addr returns the address listened on, HOST:PORT.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening and waits, up to a few seconds, for scrapes under
// way to finish.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
