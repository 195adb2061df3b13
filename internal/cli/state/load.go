package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
)

// world is everything state reads: the changelog, and around it what the
// cluster (or the capture) says of the group and the business topics.
type world struct {
	app       string // "" when unknown
	changelog *parsley.Changelog
	// group is nil when unknown (a capture); committed likewise.
	group     *kafka.Group
	committed map[clock.Channel]int64
	// facts are the business channels' log facts; counts their topics'
	// partition counts and ids the topic IDs bound to their names, as the
	// cluster (or the capture) knows them.
	facts  map[clock.Channel]*capture.LogFacts
	counts map[string]int32
	ids    map[string]clock.TopicID
	names  *clock.Names
}

// subscribed returns the topics the group's members subscribe to, sorted;
// nil when no member says.
func (w *world) subscribed() []string {
	if w.group == nil {
		return nil
	}
	var out []string
	for _, m := range w.group.Members {
		out = append(out, m.Subscription...)
	}
	if len(out) == 0 {
		return nil
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// loadLive reads the changelog, the group and the business topics' log
// facts from the cluster.
func loadLive(ctx context.Context, opts *Options, topic string) (*world, error) {
	cl, err := opts.Dial(ctx)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	w := &world{app: opts.App, names: opts.Names, facts: map[clock.Channel]*capture.LogFacts{},
		counts: map[string]int32{}, ids: map[string]clock.TopicID{}}
	if w.app == "" {
		w.app, _ = parsley.AppOf(topic)
	}
	if w.changelog, err = cl.ReadChangelog(ctx, topic, opts.TxnWait); err != nil {
		return nil, err
	}
	if w.app != "" {
		if w.group, err = cl.DescribeGroup(ctx, w.app); err != nil {
			return nil, err
		}
		w.committed, err = cl.GroupOffsets(ctx, w.app)
		if errors.Is(err, kafka.ErrNoCommittedOffsets) {
			w.committed, err = map[clock.Channel]int64{}, nil
		}
		if err != nil {
			return nil, err
		}
	}
	// The business topics: those subscribed and those the store binds.
	want := w.subscribed()
	for _, p := range w.changelog.Partitions() {
		for name := range w.changelog.Partition(p).Store.Decode().Names {
			want = append(want, name)
		}
	}
	exist, err := cl.TopicPartitions(ctx)
	if err != nil {
		return nil, err
	}
	var sels []kafka.TopicSel
	for _, name := range slices.Compact(slices.Sorted(slices.Values(want))) {
		if _, ok := exist[name]; ok {
			sels = append(sels, kafka.TopicSel{Topic: name, Partition: kafka.AllPartitions})
		}
	}
	if len(sels) > 0 {
		facts, chans, err := cl.LogFacts(ctx, sels)
		if err != nil {
			return nil, err
		}
		w.facts = facts
		for _, ch := range chans {
			w.learn(ch.Topic, ch.TopicID, ch.Partition)
		}
	}
	return w, nil
}

// learn notes that topic, bound to id, has partition p.
func (w *world) learn(topic string, id clock.TopicID, p int32) {
	w.counts[topic] = max(w.counts[topic], p+1)
	if !id.IsZero() {
		w.ids[topic] = id
		_ = w.names.Add(topic, id) // a conflicting name was given by --topic-id: it wins
	}
}

// loadCapture reads a capture holding the changelog topic's records and
// positions (and its log facts), and the business topics' log-facts lines.
func loadCapture(ctx context.Context, opts *Options) (*world, error) {
	in, err := cmdutil.OpenCapture(ctx, opts.IO, opts.Input, opts.MaxLineSize, opts.Names)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	topic := opts.Changelog
	if topic == "" && opts.App != "" {
		topic = parsley.ChangelogTopic(opts.App)
	}
	if topic == "" {
		var found []string
		for _, ch := range in.Channels {
			if name, ok := opts.Names.Name(ch.Topic); ok && strings.HasSuffix(name, parsley.ChangelogSuffix) && !slices.Contains(found, name) {
				found = append(found, name)
			}
		}
		switch len(found) {
		case 0:
			return nil, fmt.Errorf("%s holds no ordering changelog (a topic named …%s): give --changelog", in.Name, parsley.ChangelogSuffix)
		case 1:
			topic = found[0]
		default:
			return nil, cmdutil.Usagef("%s holds the changelogs of %s: choose one with --app or --changelog", in.Name, strings.Join(found, ", "))
		}
	}
	id, ok := opts.Names.ID(topic)
	if !ok {
		return nil, fmt.Errorf("%s holds no records of the changelog %s", in.Name, topic)
	}
	w := &world{app: opts.App, names: opts.Names, changelog: parsley.NewChangelog(topic, id),
		facts: map[clock.Channel]*capture.LogFacts{}, counts: map[string]int32{}, ids: map[string]clock.TopicID{}}
	if w.app == "" {
		w.app, _ = parsley.AppOf(topic)
	}
	rd, err := in.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		it, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return w, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		itID := it.TopicID
		if itID.IsZero() {
			itID, _ = opts.Names.ID(it.Topic)
		}
		if itID == id {
			kafka.FoldChangelog(w.changelog, it)
			continue
		}
		if it.Kind == capture.KindLogFacts {
			f := *it.Facts
			w.facts[clock.Channel{Topic: itID, Partition: it.Partition}] = &f
			name := it.Topic
			if name == "" {
				name, _ = opts.Names.Name(itID)
			}
			if name != "" {
				w.learn(name, itID, it.Partition)
			}
		}
	}
}
