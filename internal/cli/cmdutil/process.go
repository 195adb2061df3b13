package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
)

// ProcessInput names the one Parsley process a command reads and where
// from: a capture of its changelog, or the cluster.
type ProcessInput struct {
	// App and Changelog name the process (either may be ""; see
	// ReadProcess and ReadProcessCapture).
	App, Changelog string
	// Input is a capture file holding the changelog ("-" for stdin);
	// "" reads the cluster.
	Input       string
	MaxLineSize int
	// TxnWait bounds the wait at an open transaction in the changelog
	// (the cluster only).
	TxnWait time.Duration
	Names   *clock.Names
	// Receives is a declaration about to be deployed, whose topics' log
	// facts are read too (the cluster only).
	Receives []string
}

// ReadProcessInput reads the process of in: from its capture
// (ReadProcessCapture), or from the cluster over a client of f.Dial,
// closed when read (ReadProcess).
func (f *Factory) ReadProcessInput(ctx context.Context, in ProcessInput) (*inspect.Process, error) {
	if in.Names == nil {
		in.Names = &clock.Names{}
	}
	if in.Input != "" {
		return ReadProcessCapture(ctx, f.IOStreams, in.Input, in.MaxLineSize, in.App, in.Changelog, in.Names)
	}
	cl, err := f.Dial(ctx)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return ReadProcess(ctx, cl, in.App, in.Changelog, in.TxnWait, in.Names, in.Receives...)
}

// ReadProcess reads a Parsley process from the cluster: its ordering
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
func ReadProcess(ctx context.Context, cl *kafka.Client, app, changelog string, txnWait time.Duration, names *clock.Names, also ...string) (*inspect.Process, error) {
	return readProcess(ctx, cl, app, changelog, txnWait, names, nil, also...)
}

// readProcess is ReadProcess with the cluster's topic listing given
// (exist; nil lists it).
func readProcess(ctx context.Context, cl *kafka.Client, app, changelog string, txnWait time.Duration, names *clock.Names, exist map[string][]int32, also ...string) (*inspect.Process, error) {
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
	read, err := cl.ReadChangelog(ctx, changelog, txnWait)
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
	learned := cl.Names()
	for ch := range p.Committed {
		if name, ok := learned.Name(ch.Topic); ok {
			want = append(want, name)
		}
	}
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

// ReadProcessCapture reads a Parsley process from a capture holding its
// changelog topic's records and positions (and log facts) and the business
// topics' log-facts lines. changelog names the changelog topic; "" finds
// the one the capture holds (app's, when app is given). A capture knows no
// group: the process's Group and Committed are nil.
func ReadProcessCapture(ctx context.Context, ios *iostreams.IOStreams, path string, maxLine int, app, changelog string, names *clock.Names) (*inspect.Process, error) {
	in, err := OpenCapture(ctx, ios, path, maxLine, names)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	topic := changelog
	if topic == "" && app != "" {
		topic = parsley.ChangelogTopic(app)
	}
	if topic == "" {
		var found []string
		for _, ch := range in.Channels {
			if name, ok := names.Name(ch.Topic); ok && strings.HasSuffix(name, parsley.ChangelogSuffix) && !slices.Contains(found, name) {
				found = append(found, name)
			}
		}
		switch len(found) {
		case 0:
			return nil, fmt.Errorf("%s holds no ordering changelog (a topic named …%s): give --changelog", in.Name, parsley.ChangelogSuffix)
		case 1:
			topic = found[0]
		default:
			return nil, Usagef("%s holds the changelogs of %s: choose one with --app or --changelog", in.Name, strings.Join(found, ", "))
		}
	}
	id, ok := names.ID(topic)
	if !ok {
		return nil, fmt.Errorf("%s holds no records of the changelog %s", in.Name, topic)
	}
	if app == "" {
		app, _ = parsley.AppOf(topic)
	}
	p := inspect.NewProcess(app, parsley.NewChangelog(topic, id), names)
	p.Captured = true
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
			return p, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		itID := it.TopicID
		if itID.IsZero() {
			itID, _ = names.ID(it.Topic)
		}
		if itID == id {
			kafka.FoldChangelog(p.Changelog, it)
			continue
		}
		if it.Kind == record.KindLogFacts {
			f := *it.Facts
			p.Facts[clock.Channel{Topic: itID, Partition: it.Partition}] = &f
			name := it.Topic
			if name == "" {
				name, _ = names.Name(itID)
			}
			if name != "" {
				p.Learn(name, itID, it.Partition)
			}
		}
	}
}

// Processes lists the ordering changelogs of the cluster — each topic
// named APP-__parsley.ordering-changelog is one Parsley process (SPEC §6)
// — whose application id starts with prefix, sorted, and the cluster's
// topic listing they were found in (for ReadProcesses).
func Processes(ctx context.Context, cl *kafka.Client, prefix string) ([]string, map[string][]int32, error) {
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

// ReadProcesses reads the process of every changelog as ReadProcess does,
// at most concurrency at once (at least one), sharing the cluster's topic
// listing (Processes gives it; nil lists it once). It calls each, from
// the reading goroutines, once per changelog with its index and the
// process or the error that stopped its read, and forgets the process
// when each returns: a caller that keeps only a summary holds at most
// concurrency processes in memory. Each process has names of its own.
// It returns when every read has ended, ctx.Err() if ctx ended first.
func ReadProcesses(ctx context.Context, cl *kafka.Client, changelogs []string, listing map[string][]int32, txnWait time.Duration, concurrency int, each func(i int, p *inspect.Process, err error)) error {
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
			p, err := readProcess(ctx, cl, "", topic, txnWait, &clock.Names{}, listing)
			each(i, p, err)
		})
	}
	wg.Wait()
	return ctx.Err()
}

// DefaultProcessConcurrency is how many processes SummarizeProcesses
// reads at once by default.
const DefaultProcessConcurrency = 16

// ProcessSelection says which processes SummarizeProcesses reads: App
// alone, by name (found also when its changelog is gone), or every
// process whose application id starts with Prefix.
type ProcessSelection struct {
	Prefix, App string
}

// SummarizeProcesses discovers the cluster's Parsley processes whose
// application id starts with prefix and reads and summarises each
// (inspect.SummarizeProcess), at most concurrency at once: the rows of
// `processes` and of the live view's process list. A process that cannot
// be read is a row with its Err; the error returned is the discovery's.
func SummarizeProcesses(ctx context.Context, cl *kafka.Client, sel ProcessSelection, txnWait time.Duration, concurrency int, now time.Time) ([]inspect.ProcessSummary, error) {
	var changelogs []string
	var listing map[string][]int32
	var err error
	if sel.App != "" {
		// By name, not by discovery: the changelog may be gone.
		changelogs = []string{parsley.ChangelogTopic(sel.App)}
		listing, err = cl.TopicPartitions(ctx)
	} else {
		changelogs, listing, err = Processes(ctx, cl, sel.Prefix)
	}
	if err != nil {
		return nil, err
	}
	rows := make([]inspect.ProcessSummary, len(changelogs))
	err = ReadProcesses(ctx, cl, changelogs, listing, txnWait, concurrency, func(i int, p *inspect.Process, err error) {
		rows[i] = inspect.SummarizeProcess(changelogs[i], int32(len(listing[changelogs[i]])), p, err, now)
	})
	return rows, err
}
