// Package exporter implements `causalctl exporter`: one Prometheus
// exporter per cluster reporting every Parsley process's real holds, per
// process and task, from the ordering changelogs (internal/fleet follows
// them, internal/metrics renders what it found).
package exporter

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/fleet"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/metrics"
	"github.com/causalctl/causalctl/internal/process"
	"github.com/causalctl/causalctl/internal/upstream"
	"github.com/causalctl/causalctl/internal/web"
)

// DefaultMetricsAddr is where the exporter listens by default: every
// interface, the port the project's metrics use.
const DefaultMetricsAddr = ":9464"

// Options are the parsed flags and dependencies of exporter.
type Options struct {
	IO          *iostreams.IOStreams
	MetricsAddr string
	// Fleet is --fleet's writers (nil: the cluster alone).
	Fleet upstream.Writers
	// MetricsMaxChannels bounds the task channels with lag series
	// (--metrics-max-channels; 0 none).
	MetricsMaxChannels int
	// MaxSeries bounds the series by task and topic or channel
	// (--max-series; 0 none): the tasks beyond it are folded.
	MaxSeries int
	AppPrefix string
	Refresh   time.Duration
	Discover  time.Duration
	TxnWait   time.Duration
	// ReadOnMaxRecords bounds each process's read on from its committed
	// offsets (--read-on-max-records; 0: to the log end).
	ReadOnMaxRecords int64
	// UnhealthyAfter is how long refreshes may fail before /healthz says
	// 503.
	UnhealthyAfter time.Duration
	// ExternalURL is where users reach the pages (--web.external-url):
	// its path prefixes every route; nil when not given.
	ExternalURL *url.URL
	externalURL string
	// WebConfig is the --web.config.file (TLS, basic auth); "" none.
	WebConfig string

	// Dial connects to the cluster (Factory.Dial).
	Dial func(context.Context) (*kafka.Client, error)
	Now  func() time.Time
}

// NewCmdExporter returns the exporter command. runF replaces the work in
// tests of flag parsing; nil runs Run.
func NewCmdExporter(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Dial: f.Dial, Now: time.Now}
	if f.Now != nil {
		opts.Now = f.Now
	}
	cmd := &cobra.Command{
		Use:   "exporter [--metrics-addr HOST:PORT] [--app-prefix PREFIX] [flags]",
		Short: "Export every Parsley process's real holds as Prometheus metrics, one exporter per cluster",
		Long: `Serve Prometheus metrics of every Parsley process on the cluster, read
from the processes' own ordering state: per process (app) and task, the
records held per topic and the age of the oldest since it was written, the
held heads by cause (the causes of holds and state), whether a group member
is assigned the task, and per channel how far fed-up-to and the committed
offset are behind the log's end. Consumer-lag exporters read zero while
records sit in hold queues; these are the holds.

Every topic named APP-__parsley.ordering-changelog is a process (narrow
them with --app-prefix); the topics are listed again every
--discover-interval, so new processes are picked up and deleted ones
dropped. Each changelog is read read_committed from its log start to its
last stable offset, then, at every refresh, on from there when its end
moved: only the live store is kept, so memory follows the stores, not the
changelogs. Every --refresh-interval the groups (described,
never joined), committed offsets and the business topics' log facts are
read, and the tasks whose store or facts changed are diagnosed again,
read on from the committed offsets as processes reads them: at most
--read-on-max-records records of the process (0: to the log end); a
refresh that met the bound says so in parsley_task_read_on_partial
rather than guessing what lies past it.
Nothing is joined, committed or written.

Each task's upstream root — the stuck process that writes a topic its
held heads wait on, or the cycle of processes waiting on each other — is
parsley_task_upstream_root{app,task,upstream,reason}; --fleet FILE names
writers the cluster cannot tell (docs/fleet.md).

The series by task and topic or channel are bounded by --max-series:
over the processes by application id and their tasks in order, the first
task that would pass it, and every task after it, is folded — its holds
are one series pair of topic "_other" carrying its totals (records held,
the oldest's age), without per-topic or lag series — and
causalctl_exporter_tasks_folded counts them. A process's start-refusal
series (one per reason), counted after its tasks, fold too: only the
reasons met, and a total. The first scrape that folds says so on stderr.
Held and refusal totals stay right; only detail is dropped. Application
ids and topic names are exported escaped where they are not printable
UTF-8 (causalctl_exporter_series_escaped).

Beside them it serves pages (docs/web.md), read-only: / lists every
process, stuck first; /processes/APP its tasks; /processes/APP/tasks/N
every held head with its cause, blockers, chain to the root, ages, next
step and the record's metadata (never its key or value); /api/v1/… the
same as JSON in the documents of processes -o json and holds --app -o
json. --web.external-url is where users reach them (the alert rules link
there); --web.config.file enables TLS and basic auth (the Prometheus
exporters' web configuration) for every path, /metrics included.

/metrics serves the metrics (docs/metrics.md), /healthz answers 200 while
refreshing works and 503 once it has failed, or a refresh has run past
when it was due, for longer than --unhealthy-after, and while the latest
render of the metrics dropped a series. The address is announced on stderr,
and every failed refresh is said there. Ctrl-C or SIGTERM ends it: the
refresh under way ends, the endpoint closes, and it exits 0.`,
		Example: `  causalctl exporter --brokers kafka:9092 --metrics-addr :9464
  causalctl exporter --app-prefix shop- --refresh-interval 30s
  causalctl exporter --web.external-url https://parsley.example.com/ --web.config.file web.yml
  curl -s localhost:9464/metrics | grep '^parsley_records_held'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := cmdutil.CheckListenAddr("--metrics-addr", opts.MetricsAddr); err != nil {
				return err
			}
			if opts.MetricsAddr == "" {
				return cmdutil.Usagef("--metrics-addr: the exporter needs an address to serve, e.g. %s", DefaultMetricsAddr)
			}
			if err := cmdutil.CheckMaxChannels(opts.MetricsMaxChannels); err != nil {
				return err
			}
			if opts.ReadOnMaxRecords < 0 {
				return cmdutil.Usagef("--read-on-max-records must not be negative (0 reads to the log end)")
			}
			if opts.MaxSeries < 0 {
				return cmdutil.Usagef("--max-series %d: want a count of series, or 0 for no bound", opts.MaxSeries)
			}
			for _, d := range []struct {
				flag string
				v    time.Duration
			}{{"--refresh-interval", opts.Refresh}, {"--discover-interval", opts.Discover}, {"--txn-wait", opts.TxnWait}, {"--unhealthy-after", opts.UnhealthyAfter}} {
				if d.v <= 0 {
					return cmdutil.Usagef("%s must be positive", d.flag)
				}
			}
			if opts.externalURL != "" {
				u, err := url.Parse(opts.externalURL)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return cmdutil.Usagef("--web.external-url %q: want an absolute http or https URL", opts.externalURL)
				}
				opts.ExternalURL = u
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.MetricsAddr, "metrics-addr", DefaultMetricsAddr, "serve Prometheus metrics at http://`HOST:PORT`/metrics and health at /healthz (port 0: a free port)")
	cmdutil.AddMetricsMaxChannelsFlag(fs, &opts.MetricsMaxChannels, "the lag series of task channels")
	fs.IntVar(&opts.MaxSeries, "max-series", metrics.DefaultMaxSeries, "export at most `N` series by task and topic or channel and by start-refusal reason; the tasks beyond are folded into one topic=\"_other\" pair of totals each, the processes beyond export only the refusal reasons met and a total (0: no bound)")
	fs.StringVar(&opts.AppPrefix, "app-prefix", "", "export only the processes whose application id starts with `PREFIX`")
	fs.DurationVar(&opts.Refresh, "refresh-interval", fleet.DefaultRefresh, "how often groups, committed offsets and log facts are read and changed tasks diagnosed")
	fs.DurationVar(&opts.Discover, "discover-interval", fleet.DefaultDiscover, "how often the topics are listed for ordering changelogs created or deleted")
	cmdutil.AddFleetFlag(cmd, &opts.Fleet)
	fs.DurationVar(&opts.TxnWait, "txn-wait", kafka.DefaultTxnWait, "how long a changelog read may make no progress (a broker failing, a leader moving) before that process's refresh fails")
	cmdutil.AddReadOnMaxRecordsFlag(cmd, &opts.ReadOnMaxRecords)
	fs.DurationVar(&opts.UnhealthyAfter, "unhealthy-after", 2*time.Minute, "how long refreshes may fail, or one run past when it was due, before /healthz answers 503")
	fs.StringVar(&opts.externalURL, "web.external-url", "", "the `URL` users reach the pages at (behind a proxy): its path prefixes every route, and the pages' and alerts' links start with it")
	fs.StringVar(&opts.WebConfig, "web.config.file", "", "a web configuration `FILE` (Prometheus exporter-toolkit format) enabling TLS and basic auth for the pages, the API and /metrics")
	return cmd
}

// Run serves the metrics until ctx is done.
func Run(ctx context.Context, opts *Options) error {
	cl, err := opts.Dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	// Each failed read is said once, on stderr, as it fails (OnError
	// runs on the tracker's one goroutine).
	say := errorLines(opts.IO.ErrOut)
	// Each refresh's snapshot is rendered once, after the refresh: the
	// scrapes until the next are served that render.
	var h *metrics.Endpoint
	readOn := process.ReadOnOptions{MaxRecords: process.ReadOnBound(opts.ReadOnMaxRecords)}
	tr := fleet.New(fleet.Config{Client: cl, AppPrefix: opts.AppPrefix, Refresh: opts.Refresh, Discover: opts.Discover,
		TxnWait: opts.TxnWait, ReadOn: readOn, Now: opts.Now, Fleet: opts.Fleet, OnError: say, OnRefresh: func() { h.Prepare() }})
	mopts := metrics.Options{MaxChannels: opts.MetricsMaxChannels, MaxSeries: opts.MaxSeries, Folded: foldedWarning(opts.IO.ErrOut, opts.MaxSeries)}
	if opts.ExternalURL != nil {
		mopts.ExternalURL = strings.TrimSuffix(opts.ExternalURL.String(), "/")
	}
	h = metrics.NewEndpoint(metrics.FleetSource(tr, metrics.HealthBounds{Failing: opts.UnhealthyAfter, Refresh: opts.Refresh}, opts.Now, mopts), "causalctl exporter", opts.Now)
	pages := web.Handler(&web.Cluster{Client: cl, Select: process.Selection{Prefix: opts.AppPrefix, ReadOn: readOn}, TxnWait: opts.TxnWait,
		Concurrency: process.DefaultConcurrency, RetentionWarn: inspect.DefaultRetentionWarn, MaxAge: opts.Refresh, Now: opts.Now},
		h, web.Options{ExternalURL: opts.ExternalURL, Title: "causalctl exporter", Now: opts.Now})
	srv, err := metrics.ServeWeb(opts.MetricsAddr, pages, opts.WebConfig)
	if err != nil {
		return err
	}
	closeSrv := sync.OnceValue(srv.Close) // at the stop, or on the way out
	defer closeSrv()
	cmdutil.AnnounceMetrics(opts.IO.ErrOut, srv.Addr())

	began := opts.Now()
	tctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr.Run(tctx)
	}()
	defer func() { stop(); <-done }()
	<-ctx.Done()
	// Ctrl-C or SIGTERM, the way an exporter ends: the refresh under way
	// ends, the endpoint closes, and that is a clean stop (exit 0).
	stop()
	<-done
	if err := closeSrv(); err != nil {
		return fmt.Errorf("closing the metrics endpoint: %w", err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "exporter stopped after %s\n", opts.Now().Sub(began).Round(time.Second))
	return cmdutil.ErrStopped
}

// foldedWarning returns the collector's Folded: the first scrape that
// folds anything says so on w, once (scrapes run concurrently).
func foldedWarning(w io.Writer, max int) func(tasks, refusals int) {
	var once sync.Once
	return func(tasks, refusals int) {
		once.Do(func() {
			fmt.Fprintf(w, "causalctl: exporter: --max-series %d reached: %s exported folded, their holds as one topic=\"_other\" series pair of totals each, without per-topic or lag series (causalctl_exporter_tasks_folded); %s start refusals exported only by the reasons met, with a total (causalctl_exporter_refusals_folded); raise --max-series or narrow with --app-prefix\n",
				max, render.Count(tasks, "task is", "tasks are"), render.Count(refusals, "process has its", "processes have their"))
		})
	}
}

// errorLines returns the exporter's OnError: each error one line on w, a
// joined error's lines separated by "; ", and escaped (escape.Text) —
// application ids, topic names and a broker's messages are not ours.
func errorLines(w io.Writer) func(error) {
	return func(err error) {
		fmt.Fprintf(w, "causalctl: exporter: %s\n", escape.Text(strings.ReplaceAll(err.Error(), "\n", "; ")))
	}
}
