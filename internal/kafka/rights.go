package kafka

import (
	"context"
	"errors"
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
// not judged. A super user's rights are no ACL, and cannot be seen.
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
	return r, nil
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
