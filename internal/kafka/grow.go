package kafka

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/record"
)

// PartitionCheck is how often a Follower looks for partitions added to the
// topics it follows whole.
const PartitionCheck = 2 * time.Second

// OnNewChannel makes a Follower that follows whole topics pick up
// partitions added to them while it runs: every PartitionCheck it looks the
// topics up, and each new partition becomes a channel of the follower,
// read from its log start (every record on it is newer than the follow),
// its first item a position there (after its log facts, with
// WithLogFacts). fn is told of each new channel, on the goroutine calling
// Next, before its first item is yielded. Without this option the channels
// are fixed when Follow returns. A Range ignores it.
func OnNewChannel(fn func(ChannelProgress)) ReadOption {
	return readOpt(func(c *readConfig) { c.onNew = fn })
}

// grower looks for new partitions of the followed topics on its own
// goroutine and hands them to the reader goroutine through pending.
type grower struct {
	c      *Client
	bound  listBound // how long a listing asks a failing partition again
	topics []string
	known  map[chanKey]bool // partitions already followed or pending

	mu      sync.Mutex
	pending []*rchan
}

// startGrowing starts looking for new partitions of the topics that f
// follows whole (sels with AllPartitions), until ctx ends or the client
// closes.
func (f *Follower) startGrowing(ctx context.Context, sels []TopicSel) {
	rd := f.rd
	var topics []string
	for _, s := range sels {
		if s.Partition != AllPartitions {
			continue
		}
		for _, ch := range rd.chans {
			if ch.Topic == s.Topic || (s.Topic == "" && ch.TopicID == s.ID) {
				topics = append(topics, ch.Topic)
				break
			}
		}
	}
	if len(topics) == 0 {
		return
	}
	g := &grower{c: rd.c, bound: rd.listBound(), topics: slices.Compact(slices.Sorted(slices.Values(topics))), known: map[chanKey]bool{}}
	for _, ch := range rd.chans {
		g.known[ch.key()] = true
	}
	f.grower = g
	go g.run(ctx, rd.cfg.clock)
}

func (g *grower) run(ctx context.Context, clk Clock) {
	for {
		if clk.Sleep(ctx, PartitionCheck) != nil {
			return
		}
		if err := g.look(ctx); errors.Is(err, kgo.ErrClientClosed) {
			return
		}
	}
}

// look finds partitions not yet known and lists their offsets; a failure
// is left to the next look (the reader reports a cluster it cannot reach).
func (g *grower) look(ctx context.Context) error {
	meta, err := g.c.metadata(ctx, g.topics, true)
	if err != nil {
		return err
	}
	var found []*rchan
	var keys []chanKey
	for _, name := range g.topics {
		tm := meta[name]
		if tm == nil {
			continue // deleted: the reader's refresh says so
		}
		for _, p := range tm.partitions() {
			k := chanKey{name, p}
			if g.known[k] {
				continue
			}
			found = append(found, &rchan{
				ChannelProgress: ChannelProgress{Topic: name, TopicID: tm.id, Partition: p, LastOffset: -1},
				leader:          tm.leaders[p],
			})
			keys = append(keys, k)
		}
	}
	if len(found) == 0 {
		return nil
	}
	offs, err := g.c.listOffsets(ctx, keys, g.bound)
	if err != nil {
		return err
	}
	for _, ch := range found {
		o := offs[ch.key()]
		ch.LogStart, ch.HighWatermark, ch.LastStable = o.logStart, o.hwm, o.lso
		ch.Start, ch.Position, ch.emitted = o.logStart, o.logStart, o.logStart
		g.known[ch.key()] = true
	}
	g.mu.Lock()
	g.pending = append(g.pending, found...)
	g.mu.Unlock()
	return nil
}

// adopt makes the partitions found since the last call channels of the
// follower, queueing their first items. It runs on the reader goroutine.
func (f *Follower) adopt() {
	g := f.grower
	if g == nil {
		return
	}
	g.mu.Lock()
	found := g.pending
	g.pending = nil
	g.mu.Unlock()
	rd := f.rd
	for _, ch := range found {
		if !f.follows(ch) {
			continue
		}
		ch.index = len(rd.chans)
		rd.chans = append(rd.chans, ch)
		f.setEnd(ch.Channel(), ch.stableEnd(), ch.HighWatermark)
		if rd.cfg.onNew != nil {
			rd.cfg.onNew(ch.ChannelProgress)
		}
		rd.begin()
		if rd.cfg.facts {
			rd.addItem(&record.Item{Kind: record.KindLogFacts, Topic: ch.Topic, TopicID: ch.TopicID, Partition: ch.Partition,
				Facts: &record.LogFacts{LogStart: ch.LogStart, LastStable: ch.LastStable, HighWatermark: ch.HighWatermark, At: rd.cfg.clock.Now().UnixMilli()}})
		}
		rd.addPosition(ch, ch.Start)
		rd.commit(ch)
	}
}

// follows reports whether ch's topic, by UUID, is one the follower reads:
// a topic recreated since is not, and its identity change is the reader's
// to report.
func (f *Follower) follows(ch *rchan) bool {
	for _, c := range f.rd.chans {
		if c.Topic == ch.Topic {
			return c.TopicID == ch.TopicID
		}
	}
	return false
}
