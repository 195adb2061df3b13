package inspect

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/gate"
	"github.com/causalctl/causalctl/internal/record"
)

// Cause says why a held head's requirement is unmet, or why the head itself
// is held. The set is closed: Causes lists every value, in the order of
// Rank (the most telling first), and metrics label by it.
type Cause string

// The causes. A blocker has one of these; a head has its own (its most
// telling blocker's, or undecodable) and its chain root's.
const (
	// CauseHeld: the required record sits behind another held head on its
	// channel; the chain is followed to its root.
	CauseHeld Cause = "held"
	// CauseLagging: the required offset is below the last stable offset,
	// so it is in the log, but not yet received: the node is behind.
	CauseLagging Cause = "lagging"
	// CauseOpenTransaction: last stable offset ≤ required < high
	// watermark: the record belongs to a transaction still open, which a
	// read_committed node cannot read past.
	CauseOpenTransaction Cause = "open-transaction"
	// CauseBeyondLogEnd: required ≥ high watermark: never written — a stale
	// or forged stamp, or a producer writing to another cluster.
	CauseBeyondLogEnd Cause = "beyond-log-end"
	// CauseNotARecord: the consumer's position passed the required offset
	// and no record was there: a transaction marker or an aborted offset.
	// Parsley's wire contract forbids claiming one; with position advance
	// off it is released only by the next record on that channel.
	CauseNotARecord Cause = "not-a-record"
	// CauseTruncated: required < log start: deleted before it was read.
	CauseTruncated Cause = "truncated"
	// CauseOutOfScope: the required channel is in the gate's scope but
	// nothing reads it (it is not in the input or among the topics read):
	// add it to what is read.
	CauseOutOfScope Cause = "out-of-scope"
	// CauseCycle: the head waits on a wait cycle (forged stamps).
	CauseCycle Cause = "cycle"
	// CauseUndecodable: the head's own header is undecodable
	// (--undecodable=hold); it never delivers.
	CauseUndecodable Cause = "undecodable"
	// CauseBeyondInput: offline without log facts, the required offset
	// lies after the last record of the replayed range.
	CauseBeyondInput Cause = "beyond-input"
	// CauseNotReceived: offline without log facts, not received, and
	// nothing tells why.
	CauseNotReceived Cause = "not-received"
	// CauseDeleted: the required channel's topic was deleted from the
	// cluster (or its name now binds another topic id) while the process
	// did not see it: Parsley settles a deleted channel for good once it
	// sees the deletion (SPEC §6: fed-up-to 2^63−1), so the claim is met
	// as soon as the task runs again — unless its next start is refused
	// for records of that topic still held.
	CauseDeleted Cause = "deleted"
	// CauseReady: a head a Parsley process holds in its ordering state
	// although none of its causes blocks it any more: the process has not
	// run it since (stopped, or its task unassigned). It delivers as soon
	// as the task runs again.
	CauseReady Cause = "ready"
)

// causes in rank order: the most telling first. A cause that never
// resolves by itself outranks one that may (lagging, held).
var causes = [...]Cause{
	CauseUndecodable, CauseCycle, CauseTruncated, CauseNotARecord, CauseBeyondLogEnd,
	CauseOutOfScope, CauseOpenTransaction, CauseBeyondInput, CauseNotReceived, CauseLagging, CauseDeleted, CauseHeld, CauseReady,
}

// Causes returns every cause, the most telling first.
func Causes() []Cause { return slices.Clone(causes[:]) }

// Rank orders causes: a lower rank is more telling. An unknown cause ranks
// last.
func (c Cause) Rank() int {
	if i := slices.Index(causes[:], c); i >= 0 {
		return i
	}
	return len(causes)
}

// String returns the cause as written in JSON and text.
func (c Cause) String() string { return string(c) }

// Facts says what is known around a gate for classifying its blockers.
// Every field is optional.
type Facts struct {
	// Log returns the log facts of a channel (brokers, or a capture's
	// log-facts lines).
	Log func(clock.Channel) (*record.LogFacts, bool)
	// InputEnd returns the end of a channel's replayed range (offline).
	InputEnd func(clock.Channel) (int64, bool)
	// Exhausted says the input was read to its end: whatever is not
	// received lies beyond it.
	Exhausted bool
	// Reads says whether a channel in scope is read at all; nil reads
	// every channel. A blocker on a channel that is not read is
	// out-of-scope.
	Reads func(clock.Channel) bool
	// Deleted says a channel's topic is gone from the cluster (a
	// process read from the cluster knows; nil knows of none). A
	// blocker on such a channel is CauseDeleted.
	Deleted func(clock.Channel) bool
}

// Classify returns the cause of one blocker of a held head of g, and for
// an open transaction the one pinning the last stable offset (the lowest
// first offset: nothing past it is read until it ends, whichever
// transaction the required offset lies in), when the brokers named it. A held blocker is CauseHeld; the chain walk (not this)
// tells a cycle.
func (f *Facts) Classify(g *gate.Gate, b gate.Blocker) (Cause, *record.OpenTransaction) {
	if b.Kind == gate.BlockerHeld {
		return CauseHeld, nil
	}
	if f.Reads != nil && !f.Reads(b.Channel) {
		return CauseOutOfScope, nil
	}
	if f.Deleted != nil && f.Deleted(b.Channel) {
		return CauseDeleted, nil
	}
	// A position that passed the required offset without a record there.
	passed := b.Required <= g.Reached(b.Channel)
	if f.Log != nil {
		if lf, ok := f.Log(b.Channel); ok {
			switch lso := lf.StableEnd(); {
			case b.Required < lf.LogStart:
				return CauseTruncated, nil
			case passed:
				return CauseNotARecord, nil
			case b.Required >= lf.HighWatermark:
				return CauseBeyondLogEnd, nil
			case b.Required >= lso:
				return CauseOpenTransaction, lf.Pinning()
			}
			return CauseLagging, nil
		}
	}
	if passed {
		return CauseNotARecord, nil
	}
	if f.InputEnd != nil {
		if end, ok := f.InputEnd(b.Channel); ok {
			if b.Required < end {
				return CauseNotReceived, nil
			}
			return CauseBeyondInput, nil
		}
	}
	if f.Exhausted {
		return CauseBeyondInput, nil
	}
	return CauseNotReceived, nil
}

// NextStep is the one line of advice for a root cause. head is the root
// head ("orders/0@41"), b its first blocker (nil for undecodable and
// cycle), channel its channel as people write it, lf the channel's log facts
// (nil when unknown), txn the open transaction (nil when unknown), cycle
// the wait cycle's channels.
func NextStep(cause Cause, head string, b *Blocker, cycle []string) string {
	var ch, need string
	if b != nil {
		ch, need = b.Channel, b.Channel+"@"+strconv.FormatInt(b.Required, 10)
	}
	switch cause {
	case CauseLagging:
		return fmt.Sprintf("%s is in the log but not read yet: the node is behind on %s and should catch up; if the lag does not shrink, look at the node's consumer of %s", need, ch, ch)
	case CauseOpenTransaction:
		who := "a producer"
		if t := b.Producer; t != nil {
			who = "producer " + strconv.FormatInt(t.ProducerID, 10) + " (epoch " + strconv.Itoa(int(t.ProducerEpoch)) + ")"
			if t.TransactionalID != "" {
				who = "transactional id " + strconv.Quote(t.TransactionalID) + ", " + who
			}
			if at, ok := record.TimeOf(t.StartedAt); ok && t.StartedAt > 0 {
				who += ", open since " + at.UTC().Format(time.RFC3339)
			}
		}
		pin := ""
		if t, lf := b.Producer, b.Log; t != nil {
			pin = fmt.Sprintf(" from %d", t.FirstOffset)
			if lf != nil && !lf.PinAgrees(t) {
				pin += fmt.Sprintf(", not the last stable offset %d: the offsets and the transactions were read at two moments, ask again", lf.LastStable)
			}
		}
		return fmt.Sprintf("%s lies past the last stable offset of %s, held there by a transaction still open%s (%s): it must commit or abort; if its producer is gone, abort it (kafka-transactions.sh abort)", need, ch, pin, who)
	case CauseBeyondLogEnd:
		return fmt.Sprintf("%s was never written (the log of %s ends below it): the stamp of %s is stale or forged, or its producer writes to another cluster; find the writer of %s — it will not deliver by itself", need, ch, head, head)
	case CauseNotARecord:
		return fmt.Sprintf("%s is a transaction marker or an aborted offset, which Parsley's wire contract forbids claiming; a node that settles on receipt only holds %s until the next record on %s: produce one, and fix the writer of %s", need, head, ch, head)
	case CauseTruncated:
		return fmt.Sprintf("%s was deleted (below the log start of %s) before it was read: it is lost; the node must be moved past it deliberately (reset %s's position, or re-seed)", need, ch, ch)
	case CauseOutOfScope:
		return fmt.Sprintf("add %s to the scope: %s is not read here (--topic %s, or capture it)", ch, ch, topicOf(ch))
	case CauseCycle:
		return fmt.Sprintf("the wait cycle %s proves out-of-contract (forged) stamps: none of its heads can deliver; find the writers of the heads on it", cycleText(cycle))
	case CauseUndecodable:
		return fmt.Sprintf("%s has an undecodable header and never delivers: fix or skip the record; without --undecodable=hold the node fails closed there", head)
	case CauseBeyondInput:
		return fmt.Sprintf("%s lies beyond the replayed range of %s: capture further, or ask the cluster (causalctl holds --topic …)", need, ch)
	case CauseNotReceived:
		return fmt.Sprintf("%s has not been received: read further, or give the log facts (causalctl holds against the cluster) to tell lagging from never written", need)
	case CauseDeleted:
		return fmt.Sprintf("the topic of %s was deleted (the cluster no longer has it): Parsley settles %s for good once the process sees the deletion, so %s delivers when its task runs again — start the process; if it still holds records of that topic, its next start is refused (CHANNEL_DELETED_WITH_UNDELIVERED_MESSAGES, see state)", need, ch, head)
	case CauseHeld:
		return fmt.Sprintf("%s waits behind another held head; see its root", head)
	case CauseReady:
		return fmt.Sprintf("nothing blocks %s any more: the process has not run it since — start the process, or see why its task is not assigned (causalctl state shows the group's members)", head)
	}
	return ""
}

func topicOf(ch string) string {
	for i := len(ch) - 1; i >= 0; i-- {
		if ch[i] == '/' {
			return ch[:i]
		}
	}
	return ch
}

// cycleText writes a wait cycle back to its first member, naming at most
// MaxChain members: the advice is repeated on every head of the cycle, so
// a cycle of n written in full would make the report grow with n².
func cycleText(cycle []string) string {
	if len(cycle) == 0 {
		return "(unknown)"
	}
	var b strings.Builder
	for i, c := range cycle {
		if i == MaxChain-1 && len(cycle) > MaxChain {
			b.WriteString("… (" + strconv.Itoa(len(cycle)) + " channels) → ")
			c = cycle[len(cycle)-1]
		}
		b.WriteString(c + " → ")
		if i == MaxChain-1 {
			break
		}
	}
	return b.String() + cycle[0]
}

// InputFacts are the facts of a replay over an input that names channels
// read: the log facts the input carried (log-facts lines or items), which
// channels it reads, and whether it was read to its end.
func InputFacts(r *engine.Replayer, read []clock.Channel, exhausted bool) Facts {
	set := make(map[clock.Channel]bool, len(read))
	for _, ch := range read {
		set[ch] = true
	}
	return Facts{Log: r.LogFacts, Reads: func(ch clock.Channel) bool { return set[ch] }, Exhausted: exhausted}
}
