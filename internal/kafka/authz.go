package kafka

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// checkRead refuses, before anything is read, a read of topics the
// credentials may describe but not read: without it such a topic is
// refused only by its first fetch, after the records of the other topics
// were already handed on, so a command that needs every topic would print
// part of an answer first. It asks for the topics' authorized operations
// (Metadata v8+); a broker that does not report them (an older broker, or
// one that answers INT32_MIN) is not checked here, and its fetch refusal
// still ends the read.
func (c *Client) checkRead(ctx context.Context, topics []string) error {
	topics = slices.Compact(slices.Sorted(slices.Values(topics)))
	resp, err := c.requestMetadata(ctx, topics, true)
	if err != nil {
		return err
	}
	const read = 1 << int32(kmsg.ACLOperationRead)
	for _, t := range resp.Topics {
		if t.Topic == nil || t.ErrorCode != 0 || t.AuthorizedOperations == math.MinInt32 {
			continue // errors are the read's own metadata lookup's to report
		}
		if t.AuthorizedOperations&read == 0 {
			return &AuthorizationError{Op: "read", Topic: *t.Topic, Err: kerr.TopicAuthorizationFailed}
		}
	}
	return nil
}

// topics returns the names of the read's topics.
func (rd *reader) topics() []string {
	names := make([]string, len(rd.chans))
	for i, ch := range rd.chans {
		names[i] = ch.Topic
	}
	return names
}

// requestMetadata asks for the named topics (every topic when names is
// nil), never creating one, with their authorized operations when asked.
func (c *Client) requestMetadata(ctx context.Context, names []string, authorizedOps bool) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	req.IncludeTopicAuthorizedOperations = authorizedOps
	if names != nil {
		req.Topics = make([]kmsg.MetadataRequestTopic, 0, len(names))
		for _, n := range names {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(n)
			req.Topics = append(req.Topics, rt)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.requestTimeout())
	defer cancel()
	resp, err := req.RequestWith(rctx, c.cl)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("metadata: %w", c.classify(err))
	}
	return resp, nil
}
