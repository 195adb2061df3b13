// Package check implements `causalctl check`: the audit of a topic's
// stamps — is it safe for a node to ignore the clock entries on channels it
// does not consume?
package check

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/inspect/audit"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/record"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/spf13/cobra"
)

// Options are the parsed flags and dependencies of check.
type Options struct {
	IO     *iostreams.IOStreams
	Final  *cmdutil.FinalOutput // the final document is written whole or not at all (cmdutil.FinalOutput)
	Output string               // text, json or ndjson

	// InputFlags name the input: --input, the broker range, --scope, the
	// sizes, --topic-id.
	cmdutil.InputFlags
	ScopesFile string
	// ParsleyExport is --parsley-export: the records of a Parsley test
	// export, audited for the scope of each task as it changed.
	ParsleyExport string
	MaxFindings   int
	// Limit is how many findings the text report shows in detail (0:
	// every one, --all).
	Limit int

	// OpenInput opens the input (Factory.OpenInput).
	OpenInput func(context.Context, *cmdutil.InputFlags, input.Read) (*input.Source, error)
}

// NewCmdCheck returns the check command. runF replaces the work in tests of
// flag parsing; nil runs Run.
func NewCmdCheck(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	out := &cmdutil.Output{}
	opts := &Options{IO: f.IOStreams, Final: f.Final, OpenInput: f.OpenInput}
	var all bool
	cmd := &cobra.Command{
		Use:   "check (--input FILE | --topic NAME[/P]…) [--scope CH,… | --scopes FILE] [flags]",
		Short: "Audit a topic's stamps: is it safe to ignore what a node does not consume?",
		Long: `Audit the parsley.causes stamps of a capture (--input) or a broker range
(--topic …, read read_committed, nothing joined or committed) for the nodes
that consume a scope (--scope CH[,CH…] as in replay; default every channel of
the input) or several (--scopes FILE: one line per node, NAME: CH,CH,…).
--tasks audits the scopes of Parsley's tasks instead: one per task, named
task P, holding partition P of every channel in scope. --parsley-export
FILE.edn audits the records of a Parsley test export (the parsley-jepsen
format) for each task's scope as its declarations changed it: one scope per
task and execution whose scope differs from the one before, named
PROCESS/TASK from step N (docs/histories.md).

The gate ignores clock entries on channels its node does not consume. That
is safe only while every producer folds the clocks it receives into its
stamps. A finding of kind hole is a record whose causes, as the clocks state
them transitively, include a record on a consumed channel that the gate will
not make it wait for: it hides behind an unconsumed channel, and a node can
deliver the effect before its cause with nothing failing or held. Each hole
names the record, the path of claims from it to the missed ancestor, and the
producer channel whose stamp dropped the claim.

The other findings: not-a-record (a claim on an offset the input proves is
a transaction marker or aborted record), beyond-log-end (a claim at or past
the high watermark), self-cycle, unknown-topic, wait-cycle and undecodable
(every undecodable header, with its reason code). Holes can only hide
behind channels the input holds; the output lists the claimed channels it
lacks.

Output (--output): text (default: the counts, then one line per root —
the claim the findings follow from, the record that made it and how many
follow from it, most first — then the findings grouped by kind and
producer channel, the first 20 unless --limit N or --all says otherwise),
json (one report object) or ndjson (one finding per line, then the
summary); each JSON finding names its root. See docs/check.md for the
schema.

Exit codes: 0 no findings; 4 findings; 1 bad input or a broker error;
2 usage; 130 interrupted.`,
		Example: `  causalctl check -f capture.ndjson --scope orders,shipments
  causalctl check -f capture.ndjson --scope orders,shipments --all   # every finding, not the first 20
  causalctl check -f capture.ndjson --scopes nodes.txt -o json
  causalctl check --brokers localhost:9092 -t orders -t payments -t shipments --scope orders,shipments
  causalctl check -f capture.ndjson --tasks
  causalctl check --parsley-export DELIVER_PAST_DEAD_HOLDS-scenario.edn`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var err error
			if opts.Output, err = out.Resolve("text"); err != nil {
				return err
			}
			if opts.ParsleyExport != "" {
				for _, name := range []string{"input", "topic", "scope", "scopes", "tasks", "from-group", "offsets"} {
					if f := c.Flags().Lookup(name); f != nil && f.Changed {
						return cmdutil.Usagef("--parsley-export is the input and its tasks the scopes: not with --%s", name)
					}
				}
			} else if err := opts.InputFlags.Check(c.Flags()); err != nil {
				return err
			}
			if len(opts.Scope) > 0 && opts.ScopesFile != "" {
				return cmdutil.Usagef("give --scope or --scopes, not both")
			}
			if opts.Tasks.On() && opts.ScopesFile != "" {
				return cmdutil.Usagef("--tasks makes the scopes the tasks': give --scope or --scopes, not --tasks with --scopes")
			}
			if opts.MaxFindings < 0 {
				return cmdutil.Usagef("--max-findings %d: want 0 (no limit) or more", opts.MaxFindings)
			}
			fs := c.Flags()
			limitSet := fs.Changed("limit")
			if (limitSet || all) && opts.Output != "text" {
				return cmdutil.Usagef("--limit and --all shape the text report: -o %s holds every finding", opts.Output)
			}
			switch {
			case limitSet && all:
				return cmdutil.Usagef("give --limit or --all, not both")
			case all:
				opts.Limit = 0
			case opts.Limit < 1:
				return cmdutil.Usagef("--limit %d: want 1 or more (--all shows every finding)", opts.Limit)
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fs := cmd.Flags()
	cmdutil.AddInputFlags(cmd, f, &opts.InputFlags, cmdutil.InputSpec{
		InputUsage: "capture file to audit (- for stdin)",
		ScopeUsage: "channels the node consumes, `CH[,CH...]` (default: every channel in the input)",
		Tasks:      true,
	})
	fs.StringVar(&opts.ScopesFile, "scopes", "", "audit several nodes: `FILE` of lines NAME: CH,CH,…")
	fs.StringVar(&opts.ParsleyExport, "parsley-export", "", "audit the records of a Parsley test export (EDN, `FILE`) for each task's scope as its declarations changed it")
	fs.IntVar(&opts.MaxFindings, "max-findings", 0, "stop after `N` findings (0: no limit)")
	fs.IntVar(&opts.Limit, "limit", defaultLimit, "show `N` findings (and roots) in detail in the text report")
	fs.BoolVar(&all, "all", false, "show every finding and root in the text report")
	cmdutil.AddOutputFlag(cmd, out, "text", "json", "ndjson")
	return cmd
}

// defaultLimit is how many findings the text report details by default:
// a screenful, enough to see the pattern after the roots.
const defaultLimit = 20

// Run audits the capture or broker range and writes the report.
func Run(ctx context.Context, opts *Options) error {
	if opts.ParsleyExport != "" {
		return runExport(ctx, opts)
	}
	// The audit keeps every record in long-lived, pointer-free arrays
	// that are cheap to mark and only grow: collecting more often keeps
	// the peak near the live size (10 M records in well under 1 GiB)
	// instead of twice it.
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	a := audit.New(audit.Config{Names: opts.Names, MaxHeaderSize: opts.MaxHeaderSize, MaxFindings: opts.MaxFindings})
	// add and feed take every item of the readings to the auditor.
	add, feed := a.Add, a.Load
	if opts.Range.Given() {
		// The spool's lines are no one's to look up: records of a broker
		// range are named by channel and offset alone, in findings and
		// errors alike.
		add, feed = withoutLines(add), withoutLines(feed)
	}
	// The first reading of the input (a broker range spooled first), for
	// channels and names, audits the records too; a second is needed only
	// when some claim names what the rest of the input holds (Settled).
	in, err := opts.OpenInput(ctx, &opts.InputFlags, input.Read{
		LogFacts: true, Reread: true, Observe: add, ObserveClocks: true,
		OnRange: func(ctx context.Context, br *input.Range) error { return highWatermarks(ctx, br, a) },
	})
	if err != nil {
		return cmdutil.WhenInterrupted(err, notAudited)
	}
	defer in.Close()
	source := in.Name
	scopes, err := resolveScopes(opts, in.Channels)
	if err != nil {
		return err
	}
	if !a.Settled() {
		a.Reread()
		if err := load(ctx, in.Capture, feed); err != nil {
			return cmdutil.WhenInterrupted(fmt.Errorf("%s: %w", source, err), notAudited)
		}
	}
	rep, err := a.Run(scopes)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if ctx.Err() != nil { // Ctrl-C while the audit ran: it is not reported
		return cmdutil.WhenInterrupted(ctx.Err(), notAudited)
	}
	if err := write(opts.IO.Out, opts.Final, opts.Output, source, opts.Names, rep, opts.Limit); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if rep.Len() > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitFound}
	}
	return nil
}

// withoutLines passes items on to visit with their capture line unknown.
func withoutLines(visit func(*record.Item) error) func(*record.Item) error {
	return func(it *record.Item) error {
		it.Line = 0
		return visit(it)
	}
}

// load reads the capture a second time, in full but for payloads, into
// the auditor (feed): parsed on one core, loaded on the other.
func load(ctx context.Context, in *input.Capture, feed func(*record.Item) error) error {
	r, err := in.Open(capture.SkipPayloads())
	if err != nil {
		return err
	}
	src := replay.Prefetch(engine.WithContext(ctx, r))
	defer src.Close()
	for {
		it, err := src.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := feed(it); err != nil {
			return err
		}
	}
}

// notAudited is the account of an interruption: nothing was audited.
const notAudited = "interrupted before the audit ended"

// highWatermarks tells the auditor every partition's high watermark, as
// the cluster has it once the range is open — topics outside the range
// included, since clocks claim them too.
func highWatermarks(ctx context.Context, br *input.Range, a *audit.Auditor) error {
	infos, err := br.Client.Topics(ctx)
	if err != nil {
		return err
	}
	for _, t := range infos {
		for _, p := range t.Partitions {
			a.SetHighWatermark(clock.Channel{Topic: t.ID, Partition: p.Partition}, p.HighWatermark)
		}
	}
	return nil
}

// resolveScopes turns --scope or --scopes into the audited scopes; none
// means every channel of the input.
func resolveScopes(opts *Options, channels []clock.Channel) ([]audit.Scope, error) {
	if opts.Tasks.On() {
		scope := channels
		if len(opts.Scope) > 0 {
			s, err := input.ResolveScope(opts.Scope, nil, channels, opts.Names)
			if err != nil {
				return nil, err
			}
			scope = s.Channels
		}
		return taskScopes(scope), nil
	}
	if opts.ScopesFile == "" {
		if len(opts.Scope) == 0 {
			return nil, nil
		}
		s, err := input.ResolveScope(opts.Scope, nil, channels, opts.Names)
		if err != nil {
			return nil, err
		}
		return []audit.Scope{{Channels: s.Channels}}, nil
	}
	f, err := os.Open(opts.ScopesFile)
	if err != nil {
		return nil, cmdutil.Usagef("--scopes: %v", err)
	}
	defer f.Close()
	return parseScopes(f, opts.ScopesFile, channels, opts.Names)
}

// taskScopes are the scopes of the Parsley tasks over scope, by rising
// task: task p's is partition p of every channel (engine.SplitTasks),
// named "task P".
func taskScopes(scope []clock.Channel) []audit.Scope {
	split := engine.SplitTasks(scope)
	tasks := slices.Sorted(maps.Keys(split))
	out := make([]audit.Scope, 0, len(tasks))
	for _, p := range tasks {
		out = append(out, audit.Scope{Name: "task " + strconv.Itoa(int(p)), Channels: split[p]})
	}
	return out
}

// parseScopes reads a scopes file: one node a line, NAME: CH,CH,…; blank
// lines and lines starting with # are skipped. A bad line is a usage error
// naming it.
func parseScopes(r io.Reader, file string, channels []clock.Channel, names *clock.Names) ([]audit.Scope, error) {
	var out []audit.Scope
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, list, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		switch {
		case !ok || name == "" || strings.TrimSpace(list) == "":
			return nil, cmdutil.Usagef("--scopes %s line %d: want NAME: CH,CH,…", file, n)
		case seen[name]:
			return nil, cmdutil.Usagef("--scopes %s line %d: node %q named twice", file, n, name)
		}
		seen[name] = true
		s, err := input.ResolveScope(strings.Split(list, ","), nil, channels, names)
		if err != nil {
			return nil, cmdutil.Usagef("--scopes %s line %d: %v", file, n, err)
		}
		out = append(out, audit.Scope{Name: name, Channels: s.Channels})
	}
	if err := sc.Err(); err != nil {
		return nil, cmdutil.Usagef("--scopes %s: %v", file, err)
	}
	if len(out) == 0 {
		return nil, cmdutil.Usagef("--scopes %s: no node in it", file)
	}
	return out, nil
}
