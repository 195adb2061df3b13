package kafka

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Rights is what the cluster's ACLs say of the client's right to delete
// a group and topics (reset-plan's precondition).
type Rights struct {
	// Principal is the client's, as the ACLs name it (User:NAME, or
	// User:ANONYMOUS without SASL).
	Principal string
	// Checked says the ACLs could be described and some are set; Why
	// says why not otherwise.
	Checked bool
	Why     string
	// Missing are the resources ("group G", "topic T") no ACL allows the
	// principal to delete, or one denies it.
	Missing []string
}

// DeleteRights describes the cluster's ACLs (read-only) and says whether
// they allow the client's principal Delete on group and on each of
// topics. An ACL allowing ALL counts; a DENY wins; host restrictions are
// not judged. A super user's rights are no ACL: where no ACL allows it,
// the broker's own authorized operations are asked (deleteAuthorized).
func (c *Client) DeleteRights(ctx context.Context, group string, topics []string) (Rights, error) {
	r := Rights{Principal: "User:ANONYMOUS"}
	if c.cfg.SASL != nil && c.cfg.SASL.User != "" {
		r.Principal = "User:" + c.cfg.SASL.User
	}
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType = kmsg.ACLResourceTypeAny
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		return r, c.classify(err)
	}
	switch err := kerr.ErrorForCode(resp.ErrorCode); {
	case errors.Is(err, kerr.SecurityDisabled):
		r.Why = "the cluster has no authorizer"
		return r, nil
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		r.Why = "not allowed to describe the cluster's ACLs"
		return r, nil
	case err != nil:
		return r, err
	}
	if len(resp.Resources) == 0 {
		r.Why = "the cluster describes no ACL"
		return r, nil
	}
	r.Checked = true
	may := func(typ kmsg.ACLResourceType, name string) bool {
		allowed := false
		for _, res := range resp.Resources {
			if res.ResourceType != typ || !patternMatches(res.ResourcePatternType, res.ResourceName, name) {
				continue
			}
			for _, a := range res.ACLs {
				if (a.Principal != r.Principal && a.Principal != "User:*") ||
					(a.Operation != kmsg.ACLOperationDelete && a.Operation != kmsg.ACLOperationAll) {
					continue
				}
				switch a.PermissionType {
				case kmsg.ACLPermissionTypeDeny:
					return false
				case kmsg.ACLPermissionTypeAllow:
					allowed = true
				}
			}
		}
		return allowed
	}
	if !may(kmsg.ACLResourceTypeGroup, group) {
		r.Missing = append(r.Missing, "group "+group)
	}
	for _, t := range topics {
		if !may(kmsg.ACLResourceTypeTopic, t) {
			r.Missing = append(r.Missing, "topic "+t)
		}
	}
	if len(r.Missing) > 0 {
		// No ACL allows it; the authorizer may still (a super user):
		// its own answer is the last word where the broker gives one.
		allowed := c.deleteAuthorized(ctx, group, topics)
		r.Missing = slices.DeleteFunc(r.Missing, func(res string) bool { return allowed[res] })
	}
	return r, nil
}

// deleteAuthorized is the broker's own answer (KIP-430's authorized
// operations, DescribeGroups v3+ and Metadata v8+) to whether the client
// may delete group and each of topics, by resource ("group G", "topic
// T"): true only where the broker says Delete is authorized. A broker
// that does not say, or a request that fails, leaves the ACLs' answer.
func (c *Client) deleteAuthorized(ctx context.Context, group string, topics []string) map[string]bool {
	const deleteBit = 1 << int32(kmsg.ACLOperationDelete)
	says := func(ops int32) bool { return ops != math.MinInt32 && ops&deleteBit != 0 }
	out := map[string]bool{}
	greq := kmsg.NewPtrDescribeGroupsRequest()
	greq.Groups = []string{group}
	greq.IncludeAuthorizedOperations = true
	if resp, err := greq.RequestWith(ctx, c.cl); err == nil {
		for _, g := range resp.Groups {
			if g.Group == group && g.ErrorCode == 0 && says(g.AuthorizedOperations) {
				out["group "+group] = true
			}
		}
	}
	if len(topics) == 0 {
		return out
	}
	mreq := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		mreq.Topics = append(mreq.Topics, rt)
	}
	mreq.IncludeTopicAuthorizedOperations = true
	if resp, err := mreq.RequestWith(ctx, c.cl); err == nil {
		for _, t := range resp.Topics {
			if t.Topic != nil && t.ErrorCode == 0 && says(t.AuthorizedOperations) {
				out["topic "+*t.Topic] = true
			}
		}
	}
	return out
}

func patternMatches(p kmsg.ACLResourcePatternType, pattern, name string) bool {
	switch p {
	case kmsg.ACLResourcePatternTypeLiteral:
		return pattern == name || pattern == "*"
	case kmsg.ACLResourcePatternTypePrefixed:
		return strings.HasPrefix(name, pattern)
	}
	return false
}
