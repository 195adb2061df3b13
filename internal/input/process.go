package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/process"
	"github.com/causalctl/causalctl/internal/record"
)

// ProcessInput names the one Parsley process a command reads and where
// from: a capture of its changelog, or the cluster.
type ProcessInput struct {
	// App and Changelog name the process (either may be ""; see
	// process.Read and ReadProcessCapture).
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
	// StoreOnly reads the store alone: the tasks are not read on from the
	// committed offsets (process.ReadOnAll), as from a capture.
	StoreOnly bool
}

// ReadProcess reads the process of in: from its capture
// (ReadProcessCapture), or from the cluster over a client of env.Dial,
// closed when read (process.Read), each task read on from the committed
// offsets to the log end (process.ReadOnAll).
func ReadProcess(ctx context.Context, env Env, in ProcessInput) (*inspect.Process, error) {
	if in.Names == nil {
		in.Names = &clock.Names{}
	}
	if in.Input != "" {
		return ReadProcessCapture(ctx, env.IO, in.Input, in.MaxLineSize, in.App, in.Changelog, in.Names)
	}
	cl, err := env.Dial(ctx)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	p, err := process.Read(ctx, cl, in.App, in.Changelog, in.TxnWait, in.Names, in.Receives...)
	if err != nil {
		return nil, err
	}
	if in.StoreOnly {
		return p, nil
	}
	if err := process.ReadOnAll(ctx, cl, p, process.ReadOnOptions{}); err != nil {
		return nil, err
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
			return nil, specErrorf("%s holds the changelogs of %s: choose one with --app or --changelog", in.Name, strings.Join(found, ", "))
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
			p.Changelog.Fold(it)
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
