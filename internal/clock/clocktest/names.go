// Package clocktest names the channels of the data-driven scenarios
// (testdata/gate, testdata/inspect, testdata/parsley): topic names mapped
// to fake UUIDs made of their bytes. Only tests import it.
package clocktest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/clock"
)

// Names names the channels of a scenario: each topic name maps to
// a fake UUID made of its bytes, zero-padded (TopicID), so that
// UUID order is name order and a UUID printed can be put back into its
// name (Text). Topics are added as channels name them.
type Names struct {
	Names  *clock.Names
	topics []string
}

// NewNames returns names knowing no topic yet.
func NewNames() *Names { return &Names{Names: &clock.Names{}} }

// TopicID is the fake UUID of a topic name: its bytes,
// zero-padded.
func TopicID(name string) clock.TopicID {
	var id clock.TopicID
	copy(id[:], name)
	return id
}

// Topic returns name's fake UUID, adding the topic when new.
func (n *Names) Topic(name string) (clock.TopicID, error) {
	if name == "" || len(name) > len(clock.TopicID{}) {
		return clock.TopicID{}, fmt.Errorf("bad topic %q", name)
	}
	if _, known := n.Names.ID(name); !known {
		if err := n.Names.Add(name, TopicID(name)); err != nil {
			return clock.TopicID{}, err
		}
		n.topics = append(n.topics, name)
	}
	return TopicID(name), nil
}

// Channel parses NAME/PARTITION, adding the topic when new.
func (n *Names) Channel(s string) (clock.Channel, error) {
	topic, _, ok := strings.Cut(s, "/")
	if !ok {
		return clock.Channel{}, fmt.Errorf("bad channel %q", s)
	}
	if _, err := n.Topic(topic); err != nil {
		return clock.Channel{}, err
	}
	return n.Names.ParseChannel(s)
}

// Clock parses a clock in text form ({} for the empty one), adding the
// topics it names.
func (n *Names) Clock(s string) (clock.Clock, error) {
	if s == "{}" {
		return clock.Clock{}, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		ch, _, _ := strings.Cut(part, "=")
		if _, err := n.Channel(ch); err != nil {
			return clock.Clock{}, err
		}
	}
	return n.Names.Parse(s)
}

// Text replaces the fake UUIDs in s by their topics' names.
func (n *Names) Text(s string) string {
	pairs := make([]string, 0, 2*len(n.topics))
	for _, name := range n.topics {
		pairs = append(pairs, TopicID(name).String(), name)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// MustChannel is Channel, failing t at where (the command's FILE:LINE)
// on a bad channel.
func (n *Names) MustChannel(t testing.TB, where, s string) clock.Channel {
	t.Helper()
	ch, err := n.Channel(s)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	return ch
}

// MustClock is Clock, failing t at where on a bad clock.
func (n *Names) MustClock(t testing.TB, where, s string) clock.Clock {
	t.Helper()
	c, err := n.Clock(s)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	return c
}

// MustInt is a scenario's number, failing t at where on a bad one.
func MustInt(t testing.TB, where, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%s: bad number %q", where, s)
	}
	return n
}
