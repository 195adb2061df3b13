// Package process reads Parsley processes from a cluster (SPEC §6): the
// one reader of a process — its group and committed offsets, its ordering
// changelog folded into the live store, the log facts of the topics it
// receives — and of many at once, and the one way to seed each task's
// gate from its store and read it on from the committed offsets to the
// log end (Seed, ReadOn), which state, processes, holds --app, watch --app
// and the exporter share. Read-only: groups are described, never joined;
// nothing is committed or produced.
package process

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
)

// Read reads a Parsley process from the cluster: its ordering
// changelog (changelog; "" means app's), its group (when the application
// id is known) and the log facts of the topics it receives — those its
// members subscribe to, those its store binds and those named in also (a
// declaration about to be deployed). Read-only: the group is described,
// never joined.
//
// A changelog topic that does not exist while the group has committed
// offsets is no error: the process comes back with ChangelogMissing set
// and an empty changelog, which its start check reports as
// ORDERING_STATE_LOST. Without committed offsets the unknown topic is the
// error (most likely a mistyped application id).
func Read(ctx context.Context, cl *kafka.Client, app, changelog string, txnWait time.Duration, names *clock.Names, also ...string) (*inspect.Process, error) {
	return read(ctx, cl, app, changelog, txnWait, names, nil, also...)
}

// read is Read with the cluster's topic listing given
// (exist; nil lists it).
func read(ctx context.Context, cl *kafka.Client, app, changelog string, txnWait time.Duration, names *clock.Names, exist map[string][]int32, also ...string) (*inspect.Process, error) {
	if changelog == "" {
		changelog = parsley.ChangelogTopic(app)
	}
	if app == "" {
		app, _ = parsley.AppOf(changelog)
	}
	// The group first: a running process commits its offsets in the
	// transactions that write its store, so offsets read before the store
	// never run ahead of it (read after, they would claim positions the
	// store has not fed, and a head would look blocked on a marker).
	p := inspect.NewProcess(app, nil, names)
	var err error
	if app != "" {
		if p.Group, err = cl.DescribeGroup(ctx, app); err != nil {
			return nil, err
		}
		p.Committed, err = cl.GroupOffsets(ctx, app)
		if errors.Is(err, kafka.ErrNoCommittedOffsets) {
			p.Committed, err = map[clock.Channel]int64{}, nil
		}
		if err != nil {
			return nil, err
		}
	}
	read, err := ReadChangelog(ctx, cl, changelog, txnWait)
	var unknown *kafka.UnknownTopicError
	switch {
	case errors.As(err, &unknown) && unknown.Topic == changelog && len(p.Committed) > 0:
		read, p.ChangelogMissing = parsley.NewChangelog(changelog, clock.TopicID{}), true
	case err != nil:
		return nil, err
	}
	p.Changelog = read
	// The business topics: those subscribed, those the store binds, those
	// asked for, and those the group committed on.
	want := append(p.Subscribed(), also...)
	for ch := range p.Committed {
		if name, ok := cl.TopicName(ch.Topic); ok {
			want = append(want, name)
		}
	}
	read.DecodeAll()
	for _, part := range read.Partitions() {
		for name := range read.Partition(part).Store.Decode().Names {
			want = append(want, name)
		}
	}
	if exist == nil {
		if exist, err = cl.TopicPartitions(ctx); err != nil {
			return nil, err
		}
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
		p.Facts = facts
		for _, ch := range chans {
			p.Learn(ch.Topic, ch.TopicID, ch.Partition)
		}
	}
	return p, nil
}

// Discover lists the ordering changelogs of the cluster — each topic
// named APP-__parsley.ordering-changelog is one Parsley process (SPEC §6)
// — whose application id starts with prefix, sorted, and the cluster's
// topic listing they were found in (for ReadMany).
func Discover(ctx context.Context, cl *kafka.Client, prefix string) ([]string, map[string][]int32, error) {
	listing, err := cl.TopicPartitions(ctx)
	if err != nil {
		return nil, nil, err
	}
	var out []string
	for name := range listing {
		if app, ok := parsley.AppOf(name); ok && strings.HasPrefix(app, prefix) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, listing, nil
}

// ReadMany reads the process of every changelog as Read does,
// at most concurrency at once (at least one), sharing the cluster's topic
// listing (Discover gives it; nil lists it once). It calls each, from
// the reading goroutines, once per changelog with its index and the
// process or the error that stopped its read, and forgets the process
// when each returns: a caller that keeps only a summary holds at most
// concurrency processes in memory. Each process has names of its own.
// It returns when every read has ended, ctx.Err() if ctx ended first.
func ReadMany(ctx context.Context, cl *kafka.Client, changelogs []string, listing map[string][]int32, txnWait time.Duration, concurrency int, each func(i int, p *inspect.Process, err error)) error {
	if listing == nil {
		var err error
		if listing, err = cl.TopicPartitions(ctx); err != nil {
			return err
		}
	}
	sem := make(chan struct{}, max(concurrency, 1))
	var wg sync.WaitGroup
	for i, topic := range changelogs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Go(func() {
			defer func() { <-sem }()
			p, err := read(ctx, cl, "", topic, txnWait, &clock.Names{}, listing)
			each(i, p, err)
		})
	}
	wg.Wait()
	return ctx.Err()
}

// DefaultConcurrency is how many processes Summarize
// reads at once by default.
const DefaultConcurrency = 16

// Selection says which processes Summarize reads: App
// alone, by name (found also when its changelog is gone), or every
// process whose application id starts with Prefix.
type Selection struct {
	Prefix, App string
	// ReadOn bounds each process's read on (zero: the defaults, as
	// state and holds --app read on).
	ReadOn ReadOnOptions
}

// Summarize discovers the cluster's Parsley processes whose
// application id starts with prefix and reads and summarises each
// (each read on from its committed offsets, ReadOnAll, and summarised by
// inspect.SummarizeProcess), at most concurrency at once: the rows of
// `processes` and of the live view's process list. A process that cannot
// be read is a row with its Err; the error returned is the discovery's.
func Summarize(ctx context.Context, cl *kafka.Client, sel Selection, txnWait time.Duration, concurrency int, now time.Time) ([]inspect.ProcessSummary, error) {
	var changelogs []string
	var listing map[string][]int32
	var err error
	if sel.App != "" {
		// By name, not by discovery: the changelog may be gone.
		changelogs = []string{parsley.ChangelogTopic(sel.App)}
		listing, err = cl.TopicPartitions(ctx)
	} else {
		changelogs, listing, err = Discover(ctx, cl, sel.Prefix)
	}
	if err != nil {
		return nil, err
	}
	return summarize(ctx, cl, changelogs, listing, sel.ReadOn, txnWait, concurrency, now)
}

// summarize reads and summarises the process of each of changelogs, in
// their order, at most concurrency at once.
func summarize(ctx context.Context, cl *kafka.Client, changelogs []string, listing map[string][]int32, readOn ReadOnOptions, txnWait time.Duration, concurrency int, now time.Time) ([]inspect.ProcessSummary, error) {
	rows := make([]inspect.ProcessSummary, len(changelogs))
	if len(changelogs) == 0 {
		return rows, nil
	}
	err := ReadMany(ctx, cl, changelogs, listing, txnWait, concurrency, func(i int, p *inspect.Process, err error) {
		if err == nil {
			err = ReadOnAll(ctx, cl, p, readOn)
		}
		rows[i] = inspect.SummarizeProcess(changelogs[i], int32(len(listing[changelogs[i]])), p, err, now)
	})
	return rows, err
}

// ReadChangelog reads the ordering changelog topic to its end as SPEC §6
// says (kafka.Client.ReadCompacted) and folds it into the live store of
// each task: Parsley's half of a read whose Kafka half is the client's.
func ReadChangelog(ctx context.Context, cl *kafka.Client, topic string, txnWait time.Duration, opts ...kafka.ReadOption) (*parsley.Changelog, error) {
	var read *parsley.Changelog
	err := cl.ReadCompacted(ctx, topic, txnWait, func(it *record.Item) {
		if read == nil {
			read = parsley.NewChangelog(it.Topic, it.TopicID)
		}
		read.Fold(it)
	}, opts...)
	if err != nil {
		return nil, err
	}
	if read == nil {
		read = parsley.NewChangelog(topic, clock.TopicID{})
	}
	return read, nil
}
