package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"
)

// scenarioNames are the scenarios in the order each round runs them;
// replay-capture reads the file capture wrote earlier in the round.
var scenarioNames = []string{"floor", "replay", "replay-file", "kcat", "capture", "kcat-json", "replay-capture",
	"replay-offline", "replay-tasks", "replay-shards", "check", "check-8", "state", "processes", "scrape"}

// offlineNames are the scenarios that read the generated capture and need
// no broker.
var offlineNames = []string{"replay-offline", "replay-tasks", "replay-shards", "check", "check-8"}

func offline(name string) bool { return slices.Contains(offlineNames, name) }

// fleetNames are the scenarios of ordering-state reads, on clusters of
// their own (fleet.go): not run over the bench topic's sizes.
var fleetNames = []string{"state", "processes", "scrape"}

func known(name string) bool { return slices.Contains(scenarioNames, name) }

// wants reports whether the run asks for scenario name.
func wants(only []string, name string) bool { return len(only) == 0 || slices.Contains(only, name) }

// wantsBench reports whether any scenario over the bench topic is asked for.
func wantsBench(only []string) bool {
	return slices.ContainsFunc(scenarioNames, func(n string) bool { return !slices.Contains(fleetNames, n) && wants(only, n) })
}

// scenarioEnv is what the scenarios need to run.
type scenarioEnv struct {
	brokers   string
	causalctl string
	self      string // causalbench itself, for the floor
	kcat      string
	capture   string // the capture file capture writes and replay-capture reads
	kcatOut   string // where kcat -J writes
	generated string // the capture generate wrote, for the offline scenarios
	scopes    string // a --scopes file of eight nodes
	records   int64
	shards    int    // of replay-shards
	shardDir  string // where replay-shards writes its shards' summaries
}

// scenario is one measured command and the check of what it did.
type scenario struct {
	name string
	cmd  func(context.Context) (*exec.Cmd, error)
	// check verifies the run from its standard output.
	check func(stdout []byte) error
	// exitOK are exit codes besides 0 that the command gives for a good run.
	exitOK []int
}

// scenarios returns the scenarios to run, in round order: all of them, or
// those in only. A capture is written before it is replayed, so asking
// for replay-capture runs capture too.
func scenarios(env scenarioEnv, only []string) []scenario {
	if slices.Contains(only, "replay-capture") && !slices.Contains(only, "capture") {
		only = append(only, "capture")
	}
	causalctl := func(args ...string) func(context.Context) (*exec.Cmd, error) {
		return func(ctx context.Context) (*exec.Cmd, error) {
			return exec.CommandContext(ctx, env.causalctl, args...), nil
		}
	}
	brokerRange := []string{"--brokers", env.brokers, "--topic", benchTopic, "--offsets", ":end"}
	all := []scenario{
		{
			name: "floor",
			cmd: func(ctx context.Context) (*exec.Cmd, error) {
				c := exec.CommandContext(ctx, env.self, "-brokers", env.brokers, "-topic", benchTopic)
				c.Env = append(os.Environ(), childEnv+"=floor")
				return c, nil
			},
			check: func(out []byte) error { return wantCount(out, env.records) },
		},
		{
			name:  "replay",
			cmd:   causalctl(append([]string{"replay"}, append(brokerRange, "-o", "json")...)...),
			check: func(out []byte) error { return wantSummary(out, env.records) },
		},
		{
			name:  "replay-file",
			cmd:   causalctl(append([]string{"replay"}, append(brokerRange, "-o", "json", "--interleave", "file")...)...),
			check: func(out []byte) error { return wantSummary(out, env.records) },
		},
		{
			name: "kcat",
			cmd: func(ctx context.Context) (*exec.Cmd, error) {
				return exec.CommandContext(ctx, env.kcat, kcatArgs(env)...), nil
			},
		},
		{
			name:  "capture",
			cmd:   causalctl(append([]string{"capture"}, append(brokerRange, "-f", env.capture)...)...),
			check: func([]byte) error { return wantRecordLines(env.capture, env.records) },
		},
		{
			name: "kcat-json",
			cmd: func(ctx context.Context) (*exec.Cmd, error) {
				f, err := os.Create(env.kcatOut)
				if err != nil {
					return nil, err
				}
				c := exec.CommandContext(ctx, env.kcat, append(kcatArgs(env), "-J")...)
				c.Stdout = f // closed by measure
				return c, nil
			},
			check: func([]byte) error { return wantRecordLines(env.kcatOut, env.records) },
		},
		{
			name:  "replay-capture",
			cmd:   causalctl("replay", "-f", env.capture, "-o", "json"),
			check: func(out []byte) error { return wantSummary(out, env.records) },
		},
		{
			name:  "replay-offline",
			cmd:   causalctl("replay", "-f", env.generated, "-o", "json"),
			check: func(out []byte) error { return wantSummary(out, env.records) },
		},
		{
			name:  "replay-tasks",
			cmd:   causalctl("replay", "-f", env.generated, "--tasks", "-o", "json"),
			check: func(out []byte) error { return wantSummary(out, env.records) },
		},
		{
			// The split run on one machine: every shard in turn, then the
			// merge. Its CPU time is the whole split's (wait4 counts the
			// children the shell waited for); on N machines the wall
			// time would be one shard's and the merge's (docs/scale.md).
			name:  "replay-shards",
			cmd:   func(ctx context.Context) (*exec.Cmd, error) { return shardsCmd(ctx, env), nil },
			check: func(out []byte) error { return wantSummary(out, env.records) },
		},
		{
			name:  "check",
			cmd:   causalctl(append([]string{"check", "-f", env.generated, "-o", "json"}, upstreamNames()...)...),
			check: func(out []byte) error { return wantAudit(out, env.records, 1) },
		},
		{
			name:  "check-8",
			cmd:   causalctl(append([]string{"check", "-f", env.generated, "--scopes", env.scopes, "-o", "json"}, upstreamNames()...)...),
			check: func(out []byte) error { return wantAudit(out, env.records, 8) },
		},
	}
	var out []scenario
	for _, sc := range all {
		if env.kcat == "" && (sc.name == "kcat" || sc.name == "kcat-json") {
			continue
		}
		if wants(only, sc.name) {
			out = append(out, sc)
		}
	}
	return out
}

// shardsCmd runs replay --tasks --shard K/N for every K, one after
// another, each writing its summary, then replay --merge of them all: a
// shell, so that the measuring wrapper takes the whole as one child.
func shardsCmd(ctx context.Context, env scenarioEnv) *exec.Cmd {
	script := `set -e
n=$1; bin=$2; in=$3; dir=$4
k=0; files=
while [ $k -lt $n ]; do
  "$bin" replay -f "$in" --tasks --shard $k/$n -o json > "$dir/shard-$k.json"
  files="$files $dir/shard-$k.json"; k=$((k+1))
done
exec "$bin" replay --merge $files`
	return exec.CommandContext(ctx, "sh", "-c", script, "shards", strconv.Itoa(env.shards), env.causalctl, env.generated, env.shardDir)
}

// stateScenario reads the seeded process's ordering state: every task,
// with every held record live at the changelog's end and none corrupt. It
// exits 4, something being held.
func stateScenario(brokers, causalctl string, seed *stateSeed) scenario {
	return scenario{
		name: "state",
		cmd: func(ctx context.Context) (*exec.Cmd, error) {
			return exec.CommandContext(ctx, causalctl, "state", "--brokers", brokers, "--app", stateApp, "-o", "json"), nil
		},
		check: func(out []byte) error {
			var s struct {
				HeldRecords int64 `json:"held_records"`
				Tasks       []json.RawMessage
				Corrupt     []json.RawMessage
			}
			if err := json.Unmarshal(out, &s); err != nil {
				return fmt.Errorf("state output: %w", err)
			}
			if s.HeldRecords != seed.held || len(s.Tasks) != fleetTasks || len(s.Corrupt) != 0 {
				return fmt.Errorf("state: %d held records in %d tasks (%d corrupt entries), want %d in %d", s.HeldRecords, len(s.Tasks), len(s.Corrupt), seed.held, fleetTasks)
			}
			return nil
		},
		exitOK: []int{4},
	}
}

// processesScenario lists the fleet: every process, each with its lagging
// heads on every other task.
func processesScenario(brokers, causalctl string, procs int) scenario {
	return scenario{
		name: "processes",
		cmd: func(ctx context.Context) (*exec.Cmd, error) {
			return exec.CommandContext(ctx, causalctl, "processes", "--brokers", brokers, "-o", "json"), nil
		},
		check: func(out []byte) error {
			var s struct {
				Processes []struct {
					App         string
					HeldRecords int `json:"held_records"`
					Error       any
				}
			}
			if err := json.Unmarshal(out, &s); err != nil {
				return fmt.Errorf("processes output: %w", err)
			}
			if len(s.Processes) != procs {
				return fmt.Errorf("processes listed %d processes, want %d", len(s.Processes), procs)
			}
			for _, p := range s.Processes {
				if p.HeldRecords != fleetTasks/2 || p.Error != nil {
					return fmt.Errorf("processes: %s holds %d records (error %v), want %d", p.App, p.HeldRecords, p.Error, fleetTasks/2)
				}
			}
			return nil
		},
		exitOK: []int{4},
	}
}

// kcatArgs reads the whole topic to its end, quietly. librdkafka reads
// read_committed by default, as causalctl does.
func kcatArgs(env scenarioEnv) []string {
	return []string{"-C", "-b", env.brokers, "-t", benchTopic, "-e", "-q", "-o", "beginning"}
}

// measurement is one run of a scenario.
type measurement struct {
	Wall time.Duration
	CPU  time.Duration // user + system, of the child
	RSS  float64       // peak resident set size of the child, MiB
}

// measure runs sc once as a child of the measuring wrapper (self), which
// takes its wall time, CPU time and peak RSS from the OS.
func measure(ctx context.Context, self string, sc scenario) (measurement, error) {
	inner, err := sc.cmd(ctx)
	if err != nil {
		return measurement{}, err
	}
	c := exec.CommandContext(ctx, self, append([]string{inner.Path}, inner.Args[1:]...)...)
	c.Env = inner.Env
	if c.Env == nil {
		c.Env = os.Environ()
	}
	c.Env = append(c.Env, measureEnv+"=1")
	var stdout, stderr bytes.Buffer
	c.Stdout = inner.Stdout
	if f, ok := c.Stdout.(*os.File); ok {
		defer f.Close()
	} else if c.Stdout == nil && sc.check != nil {
		c.Stdout = &stdout
	} // else os/exec's default: the null device
	c.Stderr = &stderr
	ur, uw, err := os.Pipe()
	if err != nil {
		return measurement{}, err
	}
	defer ur.Close()
	c.ExtraFiles = []*os.File{uw}
	err = c.Start()
	uw.Close()
	if err != nil {
		return measurement{}, err
	}
	var u usage
	derr := json.NewDecoder(ur).Decode(&u)
	if err := c.Wait(); err != nil && !slices.Contains(sc.exitOK, c.ProcessState.ExitCode()) {
		return measurement{}, fmt.Errorf("%v: %v\n%s", inner.Args, err, stderr.Bytes())
	}
	if derr != nil {
		return measurement{}, fmt.Errorf("reading the usage of %v: %w", inner.Args, derr)
	}
	m := measurement{Wall: u.Wall, CPU: u.User + u.System, RSS: float64(u.MaxRSSKiB) / 1024}
	if sc.check != nil {
		if err := sc.check(stdout.Bytes()); err != nil {
			return m, fmt.Errorf("wrong result: %w", err)
		}
	}
	return m, nil
}

// wantCount checks the floor's count.
func wantCount(out []byte, n int64) error {
	got, err := strconv.ParseInt(string(bytes.TrimSpace(out)), 10, 64)
	if err != nil {
		return fmt.Errorf("floor printed %q, not a count", out)
	}
	if got != n {
		return fmt.Errorf("floor counted %d records, want %d", got, n)
	}
	return nil
}

// wantSummary checks a replay's JSON summary: every record received and
// delivered, nothing held (the seeded clocks claim only records that come
// earlier), nothing failed.
func wantSummary(out []byte, n int64) error {
	var s struct {
		Received, Delivered, Held int64
		Failed                    any
	}
	if err := json.Unmarshal(out, &s); err != nil {
		return fmt.Errorf("replay summary: %w", err)
	}
	if s.Received != n || s.Delivered != n || s.Held != 0 || s.Failed != nil {
		return fmt.Errorf("replay received %d, delivered %d, held %d (failed: %v); want all %d delivered", s.Received, s.Delivered, s.Held, s.Failed, n)
	}
	return nil
}

// wantAudit checks check's JSON report: every record audited in every
// scope, no finding (the generated stamps have none).
func wantAudit(out []byte, n int64, scopes int) error {
	var r struct {
		Records   int64
		Scopes    []json.RawMessage
		Counts    map[string]int
		Unaudited int64
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return fmt.Errorf("check report: %w", err)
	}
	if r.Records != n || len(r.Scopes) != scopes || len(r.Counts) != 0 || r.Unaudited != 0 {
		return fmt.Errorf("check audited %d records in %d scopes, found %v, left %d unaudited; want %d in %d, nothing found",
			r.Records, len(r.Scopes), r.Counts, r.Unaudited, n, scopes)
	}
	return nil
}

// wantRecordLines wants n lines of path that name an offset: the record
// lines of a capture (position lines name a position) or of kcat -J.
func wantRecordLines(path string, n int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var got int64
	marker := []byte(`"offset":`)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), marker) {
			got++
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if got != n {
		return fmt.Errorf("%s: %d record lines, want %d", path, got, n)
	}
	return nil
}
