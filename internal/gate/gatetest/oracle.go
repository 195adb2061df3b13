package gatetest

import (
	"fmt"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
)

// ViolationKind names the rule a delivery sequence broke.
type ViolationKind uint8

const (
	// VUnknown: a delivery or drop of an offset that holds no record.
	VUnknown ViolationKind = iota + 1
	// VOutOfScope: a delivery on a channel not in scope, or below the
	// channel's range.
	VOutOfScope
	// VDuplicate: a record delivered twice.
	VDuplicate
	// VFIFO: a record delivered before an earlier in-range record of its
	// channel.
	VFIFO
	// VAncestor: a record delivered before one of its true causal
	// ancestors that is in scope and in range.
	VAncestor
	// VUndecodable: a record whose header is undecodable was delivered, or
	// fed to a failing gate without it failing closed.
	VUndecodable
	// VFailClosed: the gate failed closed where it should not have.
	VFailClosed
	// VDropped: an in-range record was dropped by the replay guard.
	VDropped
	// VIncomplete: the input was complete but a record in range was not
	// delivered.
	VIncomplete
	// VSeed: a channel joined the scope at a seed other than the node's
	// carried knowledge.
	VSeed
)

var kindNames = [...]string{
	VUnknown: "unknown-record", VOutOfScope: "out-of-scope", VDuplicate: "duplicate",
	VFIFO: "fifo", VAncestor: "ancestor", VUndecodable: "undecodable",
	VFailClosed: "fail-closed", VDropped: "dropped", VIncomplete: "incomplete", VSeed: "seed",
}

func (k ViolationKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("ViolationKind(%d)", uint8(k))
}

// Violation is one broken rule.
type Violation struct {
	Kind ViolationKind
	Msg  string
}

func (v Violation) String() string { return v.Kind.String() + ": " + v.Msg }

// Checker checks one delivery sequence against ground truth: the true
// causal pasts recorded by the simulator. It never reads a clock.
//
// Tell it which channels are in scope and from which offset (Join), then
// every delivery and drop in order; Complete checks, once the input is
// complete, that everything in range was delivered.
type Checker struct {
	w         *World
	from      map[clock.Channel]int64 // channels in scope → first offset in range
	next      map[clock.Channel]int   // index in the log of the next in-range record expected
	delivered Set
	count     int
	vs        []Violation // the first few of each kind
	counts    Counts
}

// Counts counts violations by kind.
type Counts [VSeed + 1]int

// Total returns the number of violations of all kinds.
func (c Counts) Total() int {
	n := 0
	for _, k := range c {
		n += k
	}
	return n
}

// Add adds d to c.
func (c *Counts) Add(d Counts) {
	for k := range c {
		c[k] += d[k]
	}
}

// String lists the non-zero counts, e.g. "ancestor=3 fifo=1".
func (c Counts) String() string {
	var parts []string
	for k, n := range c {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%v=%d", ViolationKind(k), n))
		}
	}
	return strings.Join(parts, " ")
}

// keepPerKind bounds the violations kept with their message: a broken gate
// can break the rules thousands of times in one run.
const keepPerKind = 5

// NewChecker returns a checker with an empty scope.
func (w *World) NewChecker() *Checker {
	return &Checker{w: w, from: map[clock.Channel]int64{}, next: map[clock.Channel]int{}}
}

// Join puts ch in scope with range [from, end): records below from are not
// expected (a start position, or a seed: from = seed+1).
func (c *Checker) Join(ch clock.Channel, from int64) {
	c.from[ch] = from
	l := c.w.Logs[ch]
	k := 0
	if l != nil {
		for k < len(l.Records) && l.Records[k].Offset < from {
			k++
		}
	}
	c.next[ch] = k
}

// InRange reports whether offset on ch is in scope and in range.
func (c *Checker) InRange(ch clock.Channel, offset int64) bool {
	from, ok := c.from[ch]
	return ok && offset >= from
}

func (c *Checker) fail(kind ViolationKind, format string, args ...any) {
	c.counts[kind]++
	if c.counts[kind] <= keepPerKind {
		c.vs = append(c.vs, Violation{kind, fmt.Sprintf(format, args...)})
	}
}

// Deliver checks the delivery of the record at offset on ch.
func (c *Checker) Deliver(ch clock.Channel, offset int64) {
	name := c.w.Names.Channel(ch)
	r := c.w.Record(ch, offset)
	switch {
	case r == nil:
		c.fail(VUnknown, "delivered %s@%d, which holds no record", name, offset)
		return
	case !c.InRange(ch, offset):
		c.fail(VOutOfScope, "delivered %s@%d, not in scope and range", name, offset)
		return
	case c.delivered.Has(r.ID):
		c.fail(VDuplicate, "delivered %s@%d twice", name, offset)
		return
	}
	if l := c.w.Logs[ch]; l.Records[c.next[ch]] != r {
		want := l.Records[c.next[ch]]
		c.fail(VFIFO, "delivered %s@%d before %s@%d", name, offset, name, want.Offset)
	} else {
		// Step past r and anything delivered out of order before it.
		k := c.next[ch] + 1
		for k < len(l.Records) && c.delivered.Has(l.Records[k].ID) {
			k++
		}
		c.next[ch] = k
	}
	if r.Corrupt {
		c.fail(VUndecodable, "delivered %s@%d, whose header is undecodable", name, offset)
	}
	r.Ancestors.Each(func(id int) {
		a := c.w.Records[id]
		if c.InRange(a.Channel, a.Offset) && !c.delivered.Has(id) {
			c.fail(VAncestor, "delivered %s@%d before its ancestor %s@%d",
				name, offset, c.w.Names.Channel(a.Channel), a.Offset)
		}
	})
	c.delivered.Add(r.ID)
	c.count++
}

// Drop checks a replay-guard drop: only records outside the range may be
// dropped.
func (c *Checker) Drop(ch clock.Channel, offset int64) {
	name := c.w.Names.Channel(ch)
	switch r := c.w.Record(ch, offset); {
	case r == nil:
		c.fail(VUnknown, "dropped %s@%d, which holds no record", name, offset)
	case c.InRange(ch, offset):
		c.fail(VDropped, "dropped %s@%d, which is in range", name, offset)
	}
}

// Complete checks that every in-range record of every channel in scope was
// delivered: call it when the input was complete (every record in range fed
// and every channel advanced to its end).
func (c *Checker) Complete() {
	for _, ch := range c.w.Channels {
		if _, ok := c.from[ch]; !ok {
			continue
		}
		for _, r := range c.w.Logs[ch].Records {
			if c.InRange(ch, r.Offset) && !c.delivered.Has(r.ID) {
				c.fail(VIncomplete, "%s@%d never delivered", c.w.Names.Channel(ch), r.Offset)
				break // one per channel is enough
			}
		}
	}
}

// Note records a violation found outside the checker (by a driver).
func (c *Checker) Note(kind ViolationKind, format string, args ...any) {
	c.fail(kind, format, args...)
}

// Delivered returns the number of deliveries checked.
func (c *Checker) Delivered() int { return c.count }

// Violations returns the first few violations of each kind found so far.
func (c *Checker) Violations() []Violation { return c.vs }

// Counts returns the number of violations of each kind found so far.
func (c *Checker) Counts() Counts { return c.counts }
