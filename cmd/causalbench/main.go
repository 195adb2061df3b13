// Command causalbench is causalctl's performance harness: it measures
// replaying and capturing a broker range against the fetch they rest on,
// and against kcat, as separate processes whose CPU time and peak RSS come
// from the OS.
//
// Run it from the repository root:
//
//	go run ./cmd/causalbench                 # 1 M records, 5 runs of each scenario
//	go run ./cmd/causalbench -n 1000000,4000000 -runs 7
//
// It builds causalctl (or takes -causalctl PATH), starts an in-process kfake
// broker, seeds N committed records over 6 channels (1–8-entry
// parsley.causes clocks, committed and aborted transactions among them),
// and then runs every scenario in turn, round after round, so that load
// from other work on the machine spreads over all of them:
//
//	floor           a plain franz-go consumer with the range's fetch sizes, counting only
//	replay          causalctl replay --topic bench --offsets :end -o json
//	replay-file     the same with --interleave file
//	kcat            kcat -C -e -q -o beginning (when kcat is installed)
//	capture         causalctl capture --topic bench --offsets :end -f FILE
//	kcat-json       kcat -C -e -q -o beginning -J > FILE (when kcat is installed)
//	replay-capture  causalctl replay -f FILE -o json, the file capture wrote
//	replay-offline  causalctl replay -f FILE -o json over a capture the harness writes itself
//	check           causalctl check -f FILE -o json over that capture, one scope
//	check-8         the same with --scopes of eight nodes
//	state           causalctl state --app bench-state -o json, a 1 M-entry changelog
//	processes       causalctl processes -o json, 200 processes × 8 tasks (-procs)
//	scrape          GET /metrics of causalctl exporter following the same processes
//
// replay-offline, check and check-8 need no broker: with -only naming them
// alone, none is started, and they run at sizes (10 M records) a broker in memory could
// not hold. -best judges the targets on the best run instead of the median;
// -svg FILE plots the cost per record against the sizes of -n, -plot FILE
// the fleet scenarios' cost per process against the counts of -procs. The
// fleet scenarios (state, processes, scrape) seed clusters of their own.
//
// It prints a Markdown table of medians (with the spread) of wall time, CPU
// time and peak RSS, ratios to the floor, and the targets of
// docs/performance.md with whether each is met. Every run is checked: the
// replays must receive and deliver every record with nothing held, the
// floor and kcat must count them all.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/parsley"
)

func main() {
	if ok, code := runChild(os.Args[1:]); ok {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "causalbench:", err)
		os.Exit(2)
	}
	if err := run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "causalbench:", err)
		os.Exit(1)
	}
}

// config is the harness's flags.
type config struct {
	Sizes     []int64
	Runs      int
	Warmup    int
	Channels  int
	Shards    int    // the N of replay-shards
	Causalctl string // "" builds it
	Kcat      string // "" skips the kcat scenarios
	Dir       string // "" uses a temporary directory
	Seed      uint64
	Only      []string // scenario names; empty runs all
	Best      bool     // targets take the best run, not the median
	SVG       string   // "" writes no plot
	ScaleSVG  string   // "" writes no plot of replay --tasks past one machine
	// The fleet scenarios: process counts, changelog entries of the state
	// scenario, and where to write the plot ("" writes none).
	Fleet        []int
	StateEntries int64
	Plot         string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	fs := flag.NewFlagSet("causalbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizes := fs.String("n", "1000000", "records to seed, comma-separated for several sizes (each on a fresh broker)")
	fs.IntVar(&cfg.Runs, "runs", 5, "measured runs of each scenario")
	fs.IntVar(&cfg.Warmup, "warmup", 1, "unmeasured rounds before the measured ones")
	fs.IntVar(&cfg.Channels, "channels", 6, "partitions of the bench topic")
	fs.IntVar(&cfg.Shards, "shards", 3, "shards of the replay-shards scenario (replay --tasks --shard K/N, then --merge)")
	fs.StringVar(&cfg.Causalctl, "causalctl", "", "causalctl binary to measure (default: go build ./cmd/causalctl)")
	kcat, _ := exec.LookPath("kcat")
	fs.StringVar(&cfg.Kcat, "kcat", kcat, "kcat binary (empty: skip the kcat scenarios)")
	fs.StringVar(&cfg.Dir, "dir", "", "working directory for binaries and capture files (default: a temporary one, removed)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the generated records")
	fs.BoolVar(&cfg.Best, "best", false, "judge the targets on the best (minimum) of the runs instead of the median: for a machine others share")
	fs.StringVar(&cfg.ScaleSVG, "scale-svg", "", "write docs/scale.md's plot, hours of replay-tasks and replay-shards measured at the sizes of -n and extrapolated to 10^10 records, to `FILE` (SVG)")
	fs.StringVar(&cfg.SVG, "svg", "", "write a plot of CPU and wall time per record against the input size to `FILE` (SVG)")
	fleet := fs.String("procs", "200", "Parsley processes (of 8 tasks) of the processes and scrape scenarios, comma-separated for several counts (each on a fresh broker)")
	fs.Int64Var(&cfg.StateEntries, "state-entries", 1_000_000, "changelog entries of the state scenario (30 % tombstones)")
	fs.StringVar(&cfg.Plot, "plot", "", "write an SVG plot of the fleet scenarios' cost per process against the process count to `FILE`")
	only := fs.String("only", "", "run only these scenarios, comma-separated: "+strings.Join(scenarioNames, ","))
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./cmd/causalbench [flags]\n\nMeasures causalctl replay and capture against a plain consumer and kcat; see docs/performance.md.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n <= 0 {
			return cfg, fmt.Errorf("-n %q: want positive record counts", *sizes)
		}
		cfg.Sizes = append(cfg.Sizes, n)
	}
	for _, s := range strings.Split(*fleet, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return cfg, fmt.Errorf("-procs %q: want positive process counts", *fleet)
		}
		cfg.Fleet = append(cfg.Fleet, n)
	}
	if cfg.StateEntries <= 0 {
		return cfg, fmt.Errorf("-state-entries must be positive")
	}
	if cfg.Runs < 1 || cfg.Warmup < 0 || cfg.Channels < 1 || cfg.Shards < 1 {
		return cfg, fmt.Errorf("-runs, -channels and -shards must be positive, -warmup not negative")
	}
	if *only != "" {
		for _, name := range strings.Split(*only, ",") {
			if !known(name) {
				return cfg, fmt.Errorf("-only: unknown scenario %q (want %s)", name, strings.Join(scenarioNames, ", "))
			}
			cfg.Only = append(cfg.Only, name)
		}
	}
	return cfg, nil
}

// run seeds a broker for each size, measures the scenarios and writes the
// report to out, progress to logw.
func run(ctx context.Context, cfg config, out, logw io.Writer) error {
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "causalbench-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	bin := cfg.Causalctl
	if bin == "" {
		bin = filepath.Join(dir, "causalctl")
		fmt.Fprintln(logw, "building causalctl")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/causalctl/causalctl/cmd/causalctl")
		if b, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, b)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	base, err := baseline(ctx, self)
	if err != nil {
		return fmt.Errorf("measuring the wrapper: %w", err)
	}
	var reports []sizeReport
	for _, n := range cfg.Sizes {
		if !wantsBench(cfg.Only) {
			break
		}
		rep, err := measureSize(ctx, cfg, n, bin, self, dir, logw)
		if err != nil {
			return fmt.Errorf("%d records: %w", n, err)
		}
		reports = append(reports, rep)
	}
	if cfg.SVG != "" {
		if err := writePlot(cfg.SVG, cfg, reports); err != nil {
			return fmt.Errorf("writing the plot: %w", err)
		}
	}
	if cfg.ScaleSVG != "" {
		if err := writeScalePlot(cfg.ScaleSVG, cfg, reports); err != nil {
			return fmt.Errorf("writing the plot: %w", err)
		}
	}
	var fl fleetReport
	if wants(cfg.Only, "state") {
		if fl.State, err = measureState(ctx, cfg, bin, self, logw); err != nil {
			return fmt.Errorf("state: %w", err)
		}
	}
	for _, n := range cfg.Fleet {
		if !wants(cfg.Only, "processes") && !wants(cfg.Only, "scrape") {
			break
		}
		fs, err := measureFleet(ctx, cfg, n, bin, self, logw)
		if err != nil {
			return fmt.Errorf("%d processes: %w", n, err)
		}
		fl.Fleet = append(fl.Fleet, fs)
	}
	if cfg.Plot != "" && len(fl.Fleet) > 0 {
		if err := writeFleetPlot(cfg.Plot, fl.Fleet); err != nil {
			return fmt.Errorf("writing the fleet plot: %w", err)
		}
	}
	return writeReport(out, cfg, base, reports, fl)
}

// fleetReport is what the fleet scenarios measured.
type fleetReport struct {
	State *stateReport
	Fleet []fleetSize
}

// stateReport is the state scenario's runs over its seeded changelog.
type stateReport struct {
	Entries, Deleted, Held int64
	LiveBytes              int64  // the live store's keys and values
	Floor, Result          result // a plain consumer of the changelog; causalctl state
}

// fleetSize is the processes and scrape scenarios at one process count.
type fleetSize struct {
	Procs     int
	LiveBytes int64 // of every process's live store
	Processes *result
	Scrape    *scrapeResult
}

// rounds runs each of scs in turn, cfg.Warmup + cfg.Runs rounds, and
// keeps the measured runs.
func rounds(ctx context.Context, cfg config, self string, logw io.Writer, scs ...scenario) ([]result, error) {
	res := make([]result, len(scs))
	for round := range cfg.Warmup + cfg.Runs {
		for i, sc := range scs {
			res[i].Name = sc.name
			m, err := measure(ctx, self, sc)
			if err != nil {
				return res, fmt.Errorf("%s: %w", sc.name, err)
			}
			if round >= cfg.Warmup {
				res[i].Runs = append(res[i].Runs, m)
			}
			fmt.Fprintf(logw, "round %d %-15s wall %6.3fs cpu %6.3fs rss %4.0f MiB\n", round+1, sc.name, m.Wall.Seconds(), m.CPU.Seconds(), m.RSS)
		}
	}
	return res, nil
}

// measureState seeds a changelog of cfg.StateEntries entries and reads it
// with causalctl state.
func measureState(ctx context.Context, cfg config, bin, self string, logw io.Writer) (*stateReport, error) {
	fmt.Fprintf(logw, "seeding an ordering changelog of %d entries\n", cfg.StateEntries)
	seed, err := seedState(ctx, cfg.StateEntries, rand.New(rand.NewPCG(cfg.Seed, 27)))
	if err != nil {
		return nil, err
	}
	defer seed.cluster.Close()
	fmt.Fprintf(logw, "seeded in %s: %d entries, %d tombstones, %d held records live, %.1f MiB live\n", seed.took.Round(1e7), seed.entries, seed.deleted, seed.held, float64(seed.liveBytes)/(1<<20))
	brokers := strings.Join(seed.cluster.ListenAddrs(), ",")
	floor := scenario{
		name: "state-floor",
		cmd: func(ctx context.Context) (*exec.Cmd, error) {
			c := exec.CommandContext(ctx, self, "-brokers", brokers, "-topic", parsley.ChangelogTopic(stateApp))
			c.Env = append(os.Environ(), childEnv+"=floor")
			return c, nil
		},
		check: func(out []byte) error { return wantCount(out, seed.entries) },
	}
	res, err := rounds(ctx, cfg, self, logw, floor, stateScenario(brokers, bin, seed))
	if err != nil {
		return nil, err
	}
	return &stateReport{Entries: seed.entries, Deleted: seed.deleted, Held: seed.held, LiveBytes: seed.liveBytes, Floor: res[0], Result: res[1]}, nil
}

// measureFleet seeds procs Parsley processes and runs the processes and
// scrape scenarios over them.
func measureFleet(ctx context.Context, cfg config, procs int, bin, self string, logw io.Writer) (fleetSize, error) {
	out := fleetSize{Procs: procs}
	fmt.Fprintf(logw, "seeding %d Parsley processes of %d tasks\n", procs, fleetTasks)
	fl, err := seedFleet(ctx, procs)
	if err != nil {
		return out, err
	}
	defer fl.cluster.Close()
	fmt.Fprintf(logw, "seeded in %s, %.2f MiB of live stores\n", fl.took.Round(1e7), float64(fl.liveBytes)/(1<<20))
	out.LiveBytes = fl.liveBytes
	brokers := strings.Join(fl.cluster.ListenAddrs(), ",")
	if wants(cfg.Only, "processes") {
		res, err := rounds(ctx, cfg, self, logw, processesScenario(brokers, bin, procs))
		if err != nil {
			return out, err
		}
		out.Processes = &res[0]
	}
	if wants(cfg.Only, "scrape") {
		sr, err := measureScrape(ctx, bin, brokers, procs, max(cfg.Runs, 5))
		if err != nil {
			return out, fmt.Errorf("scrape: %w", err)
		}
		fmt.Fprintf(logw, "scrape of %d processes: %v (first refresh %s, idle %s, %s CPU each)\n", procs, sr.Scrapes, sr.FirstRefresh, sr.IdleRefresh, sr.IdleCPU)
		out.Scrape = &sr
	}
	return out, nil
}

// measureSize seeds a fresh broker with n records and runs every scenario
// cfg.Runs times, alternating.
func measureSize(ctx context.Context, cfg config, n int64, bin, self, dir string, logw io.Writer) (sizeReport, error) {
	rep := sizeReport{Records: n}
	env := scenarioEnv{
		causalctl: bin, self: self, kcat: cfg.Kcat,
		capture:   filepath.Join(dir, fmt.Sprintf("capture-%d.ndjson", n)),
		kcatOut:   filepath.Join(dir, fmt.Sprintf("kcat-%d.json", n)),
		generated: filepath.Join(dir, fmt.Sprintf("generated-%d.ndjson", n)),
		scopes:    filepath.Join(dir, "scopes-8.txt"),
		records:   n,
		shards:    cfg.Shards,
		shardDir:  dir,
	}
	broker, gen := false, false
	for _, sc := range scenarios(env, cfg.Only) {
		broker = broker || !offline(sc.name)
		gen = gen || offline(sc.name)
	}
	if broker {
		cluster, err := startBroker(cfg.Channels)
		if err != nil {
			return rep, err
		}
		defer cluster.Close()
		addrs := cluster.ListenAddrs()
		env.brokers = strings.Join(addrs, ",")
		fmt.Fprintf(logw, "seeding %d records on %d channels at %s\n", n, cfg.Channels, env.brokers)
		rep.Seeded, err = seed(ctx, addrs, cfg.Channels, n, rand.New(rand.NewPCG(cfg.Seed, uint64(n))))
		if err != nil {
			return rep, err
		}
		fmt.Fprintf(logw, "seeded in %s: %d records (%d aborted), %.2f clock entries a record\n",
			rep.Seeded.Took.Round(1e7), rep.Seeded.Records, rep.Seeded.Aborted, rep.Seeded.MeanClock)
	}
	if gen {
		fmt.Fprintf(logw, "writing a capture of %d records on %d channels\n", n, cfg.Channels)
		g, err := generate(env.generated, cfg.Channels, n, rand.New(rand.NewPCG(cfg.Seed, uint64(n))))
		if err != nil {
			return rep, fmt.Errorf("writing the generated capture: %w", err)
		}
		defer os.Remove(env.generated)
		if err := scopesFile(env.scopes, cfg.Channels, 8); err != nil {
			return rep, err
		}
		fmt.Fprintf(logw, "written in %s\n", g.Took.Round(1e7))
		if !broker {
			rep.Seeded = g
		}
	}

	scs := scenarios(env, cfg.Only)
	rep.Results = make([]result, len(scs))
	for i, sc := range scs {
		rep.Results[i].Name = sc.name
	}
	for round := range cfg.Warmup + cfg.Runs {
		for i, sc := range scs {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			m, err := measure(ctx, self, sc)
			if err != nil {
				return rep, fmt.Errorf("%s: %w", sc.name, err)
			}
			if round >= cfg.Warmup {
				rep.Results[i].Runs = append(rep.Results[i].Runs, m)
			}
			fmt.Fprintf(logw, "round %d %-15s wall %6.3fs cpu %6.3fs rss %4.0f MiB\n", round+1, sc.name, m.Wall.Seconds(), m.CPU.Seconds(), m.RSS)
		}
	}
	return rep, nil
}

// baseline measures a child that does nothing (causalbench itself, with no
// scenario): the peak RSS any measured child starts from.
func baseline(ctx context.Context, self string) (measurement, error) {
	return measure(ctx, self, scenario{name: "baseline", cmd: func(ctx context.Context) (*exec.Cmd, error) {
		c := exec.CommandContext(ctx, self)
		c.Env = append(os.Environ(), childEnv+"=none")
		return c, nil
	}})
}
