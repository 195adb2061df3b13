package kafka

import (
	"context"
	"fmt"
	"slices"
)

// TopicPartitions lists every topic the credentials may describe
// (internal topics left out) with its partitions, sorted, from a single
// metadata request: no offsets are listed, so it is cheap enough for shell
// completion.
func (c *Client) TopicPartitions(ctx context.Context) (map[string][]int32, error) {
	meta, err := c.metadata(ctx, nil, true)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]int32, len(meta))
	for name, tm := range meta {
		if !tm.internal {
			out[name] = tm.partitions()
		}
	}
	return out, nil
}

// Groups lists the cluster's consumer groups by name, sorted. It only asks
// (ListGroups): it joins none.
func (c *Client) Groups(ctx context.Context) ([]string, error) {
	rctx, cancel := context.WithTimeout(ctx, c.cfg.requestTimeout())
	defer cancel()
	listed, err := c.adm.ListGroups(rctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("listing groups: %w", c.classify(err))
	}
	groups := listed.Groups()
	slices.Sort(groups)
	return groups, nil
}
