package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// DefaultTxnWait is how long a changelog read waits, by default, for an
// open transaction that holds it below the end it aims for.
const DefaultTxnWait = 5 * time.Second

// ReadCompacted reads every partition of a compacted topic — an ordering
// changelog, say — as SPEC §6 says: read_committed, from its log start up
// to the high watermark taken when the read begins (ToHighWatermark), the
// partitions concurrently (one fetch per leader carries them all), and
// hands each item to apply in the order of its partition. Where an open
// transaction holds a partition's last stable offset below that end, the
// read waits for it at most txnWait, then stops there: the partition's
// position item says how far it got. Nothing of an open or aborted
// transaction is ever handed on. Folding the items is the caller's
// (parsley.Changelog.Fold): the client knows Kafka, not Parsley.
//
// Errors are those of OpenRange and Range.Next; ctx ending is ctx.Err().
func (c *Client) ReadCompacted(ctx context.Context, topic string, txnWait time.Duration, apply func(*record.Item), opts ...ReadOption) error {
	sels := []TopicSel{{Topic: topic, Partition: AllPartitions}}
	spec := OffsetSpec{Start: Bound{Kind: BoundLogStart}, End: Bound{Kind: BoundLogEnd}}
	r, err := c.OpenRange(ctx, sels, spec, append(opts, WithLogFacts(), ToHighWatermark(txnWait))...)
	if err != nil {
		return err
	}
	for {
		it, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", topic, err)
		}
		apply(it)
	}
}

// LogFacts returns the log facts (WithLogFacts) of every selected channel,
// as listed now, without reading a record, and the channels with their
// topic names and UUIDs, in selection order. RetryFor and WithClock bound
// how long a partition answering with a retriable error is asked again
// (a *StuckError after that).
func (c *Client) LogFacts(ctx context.Context, sels []TopicSel, opts ...ReadOption) (map[clock.Channel]*record.LogFacts, []RangeChannel, error) {
	spec := OffsetSpec{Start: Bound{Kind: BoundLogEnd}, End: Bound{Kind: BoundLogEnd}}
	r, err := c.OpenRange(ctx, sels, spec, append(opts, WithLogFacts())...)
	if err != nil {
		return nil, nil, err
	}
	out := map[clock.Channel]*record.LogFacts{}
	for {
		it, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, r.Channels(), nil
		}
		if err != nil {
			return nil, nil, err
		}
		if it.Kind == record.KindLogFacts {
			f := *it.Facts
			out[clock.Channel{Topic: it.TopicID, Partition: it.Partition}] = &f
		}
	}
}

// DescribeGroup describes group without joining it. A group the user may
// not describe is an *AuthorizationError naming it.
func (c *Client) DescribeGroup(ctx context.Context, group string) (*record.Group, error) {
	if group == "" {
		return nil, errors.New("empty group name")
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.requestTimeout())
	defer cancel()
	ds, err := c.adm.DescribeGroups(rctx, group)
	if err == nil {
		if d, ok := ds[group]; ok {
			err = d.Err
		}
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		return &record.Group{Group: group, State: "Dead"}, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, kerr.GroupAuthorizationFailed) {
			return nil, &AuthorizationError{Op: "describe", Group: group, Err: err}
		}
		return nil, fmt.Errorf("describing group %q: %w", group, c.classify(err))
	}
	return groupOf(group, ds[group]), nil
}

// DescribeGroups describes groups in one round of requests (one per
// coordinator), never joining them: the groups described without error,
// by name, a group that does not exist as Dead. A group left out could not
// be described: DescribeGroup tells why.
func (c *Client) DescribeGroups(ctx context.Context, groups []string) map[string]*record.Group {
	out := map[string]*record.Group{}
	if len(groups) == 0 {
		return out
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.requestTimeout())
	defer cancel()
	ds, _ := c.adm.DescribeGroups(rctx, groups...) // the groups without an answer are left out
	for _, group := range groups {
		d, ok := ds[group]
		switch {
		case !ok:
		case errors.Is(d.Err, kerr.GroupIDNotFound):
			out[group] = &record.Group{Group: group, State: "Dead"}
		case d.Err == nil:
			out[group] = groupOf(group, d)
		}
	}
	return out
}

// groupOf is group as described.
func groupOf(group string, d kadm.DescribedGroup) *record.Group {
	g := &record.Group{Group: group, State: d.State, ProtocolType: d.ProtocolType, Protocol: d.Protocol}
	if g.State == "" {
		g.State = "Dead"
	}
	for _, m := range d.Members {
		gm := record.GroupMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, Assignment: map[string][]int32{}}
		if m.InstanceID != nil {
			gm.InstanceID = *m.InstanceID
		}
		if md, ok := m.Join.AsConsumer(); ok {
			gm.Subscription = slices.Sorted(slices.Values(md.Topics))
		}
		if as, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range as.Topics {
				gm.Assignment[t.Topic] = append(gm.Assignment[t.Topic], t.Partitions...)
				slices.Sort(gm.Assignment[t.Topic])
			}
		}
		g.Members = append(g.Members, gm)
	}
	return g
}
