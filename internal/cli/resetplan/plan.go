package resetplan

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
)

// The preconditions, in the order the runbook checks them.
const (
	CheckNoMember = "no-member"
	CheckQuiet    = "quiet-for-session-timeout"
	CheckAsked    = "reset-asked"
	CheckRights   = "delete-rights"
)

// Check is one precondition: passed, failed or not checked (Skipped),
// and what was found.
type Check struct {
	Name    string
	OK      bool
	Skipped bool
	Detail  string
}

// Partition is one received partition at the boundary: what the reset
// re-reads or skips is measured from it.
type Partition struct {
	Channel string
	// Committed is the group's committed offset; −1 when none. Resume is
	// where the process would read on: the committed offset, else the
	// store's fed-up-to + 1, else 0.
	Committed, Resume int64
	LogStart, End     int64
	// Held counts the records the store holds on it; OldestAge is the
	// oldest's age since written, Dated whether one is known.
	Held      int
	OldestAge time.Duration
	Dated     bool
	// EarliestReads is what EARLIEST reads (everything retained), of which
	// EarliestAgain were delivered before and are delivered, and their
	// effects sent, again; LatestSkips what LATEST skips, never delivered.
	EarliestReads, EarliestAgain, LatestSkips int64
}

// Plan is the reset of one process, checked and measured.
type Plan struct {
	App, Group, Changelog string
	ChangelogMissing      bool
	Now                   time.Time
	Checks                []Check
	Boundary              []Partition
	// StoreChangelogs are the process's store changelogs found on the
	// cluster, sorted.
	StoreChangelogs []string
	// Commands are the runbook's steps with every name filled in, in
	// their order.
	Commands []string
}

// Failed are the preconditions that fail.
func (p *Plan) Failed() []Check {
	var out []Check
	for _, c := range p.Checks {
		if !c.OK && !c.Skipped {
			out = append(out, c)
		}
	}
	return out
}

// Input is what a plan is made of, read beforehand.
type Input struct {
	Process *inspect.Process
	Now     time.Time
	// LastWritten is when the ordering changelog was last written (Unix
	// ms); Written says it was seen.
	LastWritten int64
	Written     bool
	// SessionTimeout is how long a member stays after its process closes.
	SessionTimeout time.Duration
	Rights         kafka.Rights
	// StoreChangelogs are the process's store changelogs on the cluster
	// (StoreChangelogs).
	StoreChangelogs []string
	// Brokers and StateDir fill the commands.
	Brokers  []string
	StateDir string
}

// resetAnswer is the triage table's "a reset?" for reason (docs/reset.md):
// "" when a reset is not what it asks for.
func resetAnswer(r parsley.Reason) string {
	switch r {
	case parsley.ReasonPositionsDiscarded, parsley.ReasonIdentityChanged, parsley.ReasonDeletedWithUndelivered:
		return "asks for a reset"
	case parsley.ReasonOrderingStateLost:
		return "asks for a reset, unless the changelog can be restored"
	case parsley.ReasonUnknownFormat:
		return "asks for a reset, unless the build that wrote the state can run"
	case parsley.ReasonTaskWidthChanged:
		return "asks for a reset, unless the declaration is restored"
	case parsley.ReasonRemovedWithHeld:
		return "asks for a reset, unless the channel is restored"
	case parsley.ReasonUndecodableMetadata:
		return "asks for a reset only past the record: LATEST on its channel"
	}
	return ""
}

// Build checks the preconditions and measures the boundary. Pure: what it
// needs was read into in.
func Build(in Input) *Plan {
	p := in.Process
	pl := &Plan{App: p.App, Group: p.App, Changelog: parsley.ChangelogTopic(p.App), ChangelogMissing: p.ChangelogMissing, Now: in.Now}

	members := 0
	state := "Dead"
	if p.Group != nil {
		members, state = len(p.Group.Members), p.Group.State
	}
	noMember := Check{Name: CheckNoMember, OK: members == 0}
	if noMember.OK {
		noMember.Detail = fmt.Sprintf("the group has no member (%s)", state)
	} else {
		var hosts []string
		for _, m := range p.Group.Members {
			hosts = append(hosts, escape.Text(m.MemberID)+" on "+escape.Text(m.ClientHost))
		}
		noMember.Detail = fmt.Sprintf("the group has %d %s (%s): an instance runs, and would write underneath the reset; stop every instance", members, plural(members, "member", "members"), strings.Join(hosts, ", "))
	}
	pl.Checks = append(pl.Checks, noMember)

	quiet := Check{Name: CheckQuiet}
	switch {
	case !in.Written:
		quiet.OK, quiet.Detail = true, "the ordering changelog holds no record to date the last write by"
	default:
		since := in.Now.Sub(time.UnixMilli(in.LastWritten))
		quiet.OK = since >= in.SessionTimeout
		if quiet.OK {
			quiet.Detail = fmt.Sprintf("the ordering changelog was last written %s ago, at least the session timeout (%s)", since.Round(time.Second), in.SessionTimeout)
		} else {
			quiet.Detail = fmt.Sprintf("the ordering changelog was last written %s ago, within the session timeout (%s): a closed instance may still hold its membership; wait %s", since.Round(time.Second), in.SessionTimeout, ceilSecond(in.SessionTimeout-since))
		}
	}
	pl.Checks = append(pl.Checks, quiet)

	asked := Check{Name: CheckAsked}
	var answers []string
	for _, rf := range p.NextStart(nil) {
		if a := resetAnswer(rf.Reason); a != "" {
			asked.OK = true
			answers = append(answers, string(rf.Reason)+" "+a)
		} else {
			answers = append(answers, string(rf.Reason)+" does not ask for a reset")
		}
	}
	switch {
	case len(answers) == 0:
		asked.Detail = "its next start is not refused: a reset would destroy state for nothing"
	default:
		asked.Detail = strings.Join(answers, "; ")
	}
	pl.Checks = append(pl.Checks, asked)

	pl.StoreChangelogs = in.StoreChangelogs

	rights := Check{Name: CheckRights}
	switch r := in.Rights; {
	case !r.Checked:
		rights.Skipped, rights.Detail = true, "not checked: "+r.Why
	case len(r.Missing) > 0:
		rights.Detail = fmt.Sprintf("%s may not delete %s (Delete on the group and the changelogs)", r.Principal, strings.Join(r.Missing, ", "))
	default:
		rights.OK, rights.Detail = true, r.Principal+" may delete the group and the changelogs"
	}
	pl.Checks = append(pl.Checks, rights)

	pl.Boundary = boundary(p, in.Now)
	pl.Commands = commands(pl, strings.Join(in.Brokers, ","), in.StateDir)
	return pl
}

// StoreChangelogs are app's store changelogs among topics, sorted.
func StoreChangelogs(app string, topics []string) []string {
	var out []string
	for _, name := range topics {
		if isStoreChangelog(app, name, topics) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// isStoreChangelog says whether topic is one of app's store changelogs:
// APP-STORE-changelog, not its ordering changelog, and not a changelog of
// another process whose application id begins with app's (APP-x-…).
func isStoreChangelog(app, topic string, topics []string) bool {
	if !strings.HasPrefix(topic, app+"-") || !strings.HasSuffix(topic, "-changelog") || topic == parsley.ChangelogTopic(app) {
		return false
	}
	for _, other := range topics {
		if o, ok := parsley.AppOf(other); ok && len(o) > len(app) && strings.HasPrefix(topic, o+"-") {
			return false
		}
	}
	return true
}

// boundary is every received partition, by channel name: the group's
// committed offset, the log's ends, what the store holds of it.
func boundary(p *inspect.Process, now time.Time) []Partition {
	fed := map[clock.Channel]int64{}
	type holds struct {
		n      int
		oldest time.Time
	}
	held := map[clock.Channel]*holds{}
	for _, part := range p.Changelog.Partitions() {
		st := p.Changelog.Partition(part).Store.Decode()
		for _, c := range st.Channels {
			fed[c.Channel] = max(fed[c.Channel], c.FedUpTo)
			for _, h := range c.Held {
				hs := held[c.Channel]
				if hs == nil {
					hs = &holds{}
					held[c.Channel] = hs
				}
				hs.n++
				if t, ok := record.TimeOf(h.Record.Timestamp); ok && (hs.oldest.IsZero() || t.Before(hs.oldest)) {
					hs.oldest = t
				}
			}
		}
	}
	var out []Partition
	for _, ch := range slices.Collect(maps.Keys(p.Facts)) {
		f := p.Facts[ch]
		end := f.LastStable
		if end < 0 {
			end = f.HighWatermark
		}
		row := Partition{Channel: p.Names.Channel(ch), Committed: -1, LogStart: f.LogStart, End: end}
		committed, ok := p.Committed[ch]
		switch fu, fok := fed[ch]; {
		case ok:
			row.Committed, row.Resume = committed, committed
		case fok && fu >= 0:
			row.Resume = fu + 1
		}
		if hs := held[ch]; hs != nil {
			row.Held = hs.n
			if !hs.oldest.IsZero() {
				row.OldestAge, row.Dated = now.Sub(hs.oldest), true
			}
		}
		row.EarliestReads = max(0, end-f.LogStart)
		row.EarliestAgain = max(0, min(row.Resume, end)-f.LogStart)
		row.LatestSkips = max(0, end-max(row.Resume, f.LogStart))
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b Partition) int { return strings.Compare(a.Channel, b.Channel) })
	return out
}

// commands are the runbook's steps, in its order: the group, the ordering
// changelog, each store changelog, then the local state on every instance.
func commands(pl *Plan, brokers, stateDir string) []string {
	b := shellQuote(brokers)
	out := []string{fmt.Sprintf("kafka-consumer-groups --bootstrap-server %s --delete --group %s", b, shellQuote(pl.Group))}
	if !pl.ChangelogMissing {
		out = append(out, fmt.Sprintf("kafka-topics --bootstrap-server %s --delete --topic %s", b, shellQuote(pl.Changelog)))
	}
	for _, t := range pl.StoreChangelogs {
		out = append(out, fmt.Sprintf("kafka-topics --bootstrap-server %s --delete --topic %s", b, shellQuote(t)))
	}
	out = append(out, fmt.Sprintf("rm -rf %s   # on every instance", shellQuote(strings.TrimRight(stateDir, "/")+"/"+pl.App)))
	return out
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and . _ - / : , =.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/:,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ceilSecond rounds d up to a whole second: a wait said is never too short.
func ceilSecond(d time.Duration) time.Duration {
	if r := d.Truncate(time.Second); r < d {
		return r + time.Second
	}
	return d
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
