package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
)

// CodeIdentityChanged is the stable code of IdentityChangedError: a topic
// name resolved to two different topic UUIDs within one run.
const CodeIdentityChanged = "channel-identity-changed"

// Sentinel errors. Every typed error of this package matches exactly one of
// them with errors.Is, so callers can branch on the kind of failure without
// caring for the details the typed error carries.
var (
	// ErrUnreachable: no broker answered (refused, timed out, or closed the
	// connection before speaking Kafka). See ConnectError.
	ErrUnreachable = errors.New("broker unreachable")
	// ErrAuthentication: the SASL handshake failed. See AuthError.
	ErrAuthentication = errors.New("authentication failed")
	// ErrAuthorization: the broker refused an operation on a topic, group or
	// the cluster. See AuthorizationError.
	ErrAuthorization = errors.New("not authorized")
	// ErrUnknownTopic: no such topic. See UnknownTopicError.
	ErrUnknownTopic = errors.New("unknown topic")
	// ErrUnknownPartition: the topic exists but not that partition. See
	// UnknownPartitionError.
	ErrUnknownPartition = errors.New("unknown partition")
	// ErrIdentityChanged: a topic's UUID changed during the run. See
	// IdentityChangedError.
	ErrIdentityChanged = errors.New(CodeIdentityChanged)
	// ErrNoCommittedOffsets: a group has no committed offsets (it does not
	// exist, or never committed) on any existing topic.
	ErrNoCommittedOffsets = errors.New("no committed offsets")
	// ErrRangeFailed: a range could not be read to its end. See RangeError.
	ErrRangeFailed = errors.New("range read failed")
)

// ConnectError reports that no seed broker could be reached.
type ConnectError struct {
	Brokers []string // the brokers tried
	Err     error    // the last failure
}

// Error names the brokers tried and the last failure, on one line.
func (e *ConnectError) Error() string {
	what := "broker " + strings.Join(e.Brokers, ", ")
	if len(e.Brokers) > 1 {
		what = "any of brokers " + strings.Join(e.Brokers, ", ")
	}
	return fmt.Sprintf("cannot reach %s: %v", what, e.Err)
}

// Unwrap returns the underlying failure.
func (e *ConnectError) Unwrap() error { return e.Err }

// Is matches ErrUnreachable.
func (e *ConnectError) Is(target error) bool { return target == ErrUnreachable }

// NoResponseError reports a broker that accepted the TCP connection but
// sent no Kafka response within the dial timeout: not a Kafka listener,
// or a broker that hangs.
type NoResponseError struct {
	Addr string        // HOST:PORT connected to
	Wait time.Duration // how long the first response was awaited
}

// Error names the address and the wait, in seconds.
func (e *NoResponseError) Error() string {
	return fmt.Sprintf("no Kafka response from %s within %s (the TCP connection was accepted; is it a Kafka listener? --dial-timeout)", e.Addr, e.Wait)
}

// Is matches ErrUnreachable.
func (e *NoResponseError) Is(target error) bool { return target == ErrUnreachable }

// AuthError reports a failed SASL authentication.
type AuthError struct {
	Mechanism string
	User      string
	Err       error
}

// Error names the mechanism and user, never the password.
func (e *AuthError) Error() string {
	return fmt.Sprintf("authentication failed (SASL %s as user %q): %v", e.Mechanism, e.User, e.Err)
}

// Unwrap returns the broker's error.
func (e *AuthError) Unwrap() error { return e.Err }

// Is matches ErrAuthentication.
func (e *AuthError) Is(target error) bool { return target == ErrAuthentication }

// AuthorizationError reports that the broker denied an operation. Exactly
// one of Topic and Group is set, or neither for a cluster-level operation.
type AuthorizationError struct {
	Op    string // what was attempted: "describe", "read"
	Topic string
	Group string
	Err   error // the broker's error code
}

// Error names the operation and the topic or group refused.
func (e *AuthorizationError) Error() string {
	switch {
	case e.Topic != "":
		return fmt.Sprintf("not authorized to %s topic %q", e.Op, e.Topic)
	case e.Group != "":
		return fmt.Sprintf("not authorized to %s group %q", e.Op, e.Group)
	}
	return fmt.Sprintf("not authorized to %s the cluster", e.Op)
}

// Unwrap returns the broker's error code.
func (e *AuthorizationError) Unwrap() error { return e.Err }

// Is matches ErrAuthorization.
func (e *AuthorizationError) Is(target error) bool { return target == ErrAuthorization }

// UnknownTopicError reports a topic the cluster does not have.
type UnknownTopicError struct {
	Topic string        // the name asked for; "" when asked by UUID
	ID    clock.TopicID // the UUID asked for; zero when asked by name
}

// Error names the topic.
func (e *UnknownTopicError) Error() string {
	if e.Topic == "" {
		return fmt.Sprintf("unknown topic UUID %s", e.ID)
	}
	return fmt.Sprintf("unknown topic %q", e.Topic)
}

// Is matches ErrUnknownTopic.
func (e *UnknownTopicError) Is(target error) bool { return target == ErrUnknownTopic }

// UnknownPartitionError reports a partition the topic does not have.
type UnknownPartitionError struct {
	Topic      string
	Partition  int32
	Partitions int // how many partitions the topic has
}

// Error names the partition and how many the topic has.
func (e *UnknownPartitionError) Error() string {
	return fmt.Sprintf("unknown partition %s/%d (topic %q: partition count %d)", e.Topic, e.Partition, e.Topic, e.Partitions)
}

// Is matches ErrUnknownPartition.
func (e *UnknownPartitionError) Is(target error) bool { return target == ErrUnknownPartition }

// IdentityChangedError reports that a topic name resolved to one UUID and
// later, in the same run, to another: the topic was deleted and recreated,
// so its channels are different channels (SPEC §1) and mixing them would be
// wrong. Its text starts with CodeIdentityChanged.
type IdentityChangedError struct {
	Topic string
	Old   clock.TopicID
	New   clock.TopicID // zero when the topic disappeared
}

// Error starts with CodeIdentityChanged and names the topic and both UUIDs.
func (e *IdentityChangedError) Error() string {
	if e.New.IsZero() {
		return fmt.Sprintf("%s: topic %q (%s) was deleted during the run", CodeIdentityChanged, e.Topic, e.Old)
	}
	return fmt.Sprintf("%s: topic %q was %s and is now %s (deleted and recreated during the run)", CodeIdentityChanged, e.Topic, e.Old, e.New)
}

// Is matches ErrIdentityChanged.
func (e *IdentityChangedError) Is(target error) bool { return target == ErrIdentityChanged }

// RangeError reports that a range could not be read to its end, naming how
// far it got.
type RangeError struct {
	// Channel is the channel that failed, as NAME/PARTITION.
	Channel string
	// Position is that channel's position: every offset below it was read.
	Position int64
	// LastOffset is the offset of the last record yielded on that channel,
	// or -1 when none was.
	LastOffset int64
	// Progress is how far every channel of the read got.
	Progress []ChannelProgress
	Err      error
}

// Error names the failed channel, how far it got, and every channel's progress.
func (e *RangeError) Error() string {
	read := "no record read yet"
	if e.LastOffset >= 0 {
		read = fmt.Sprintf("read up to offset %d", e.LastOffset)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "reading %s failed at position %d (%s): %v", e.Channel, e.Position, read, e.Err)
	if len(e.Progress) > 1 {
		b.WriteString("; progress:")
		for i, p := range e.Progress {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %s/%d at position %d (started at %d)", p.Topic, p.Partition, p.Position, p.Start)
		}
	}
	return b.String()
}

// Unwrap returns the last failure.
func (e *RangeError) Unwrap() error { return e.Err }

// Is matches ErrRangeFailed.
func (e *RangeError) Is(target error) bool { return target == ErrRangeFailed }

// IsAuthError reports whether err is an authentication or authorization
// failure: retrying it with the same credentials cannot help.
func IsAuthError(err error) bool {
	return errors.Is(err, ErrAuthentication) || errors.Is(err, ErrAuthorization)
}

// isSASLFailure reports whether err came out of the SASL handshake.
func isSASLFailure(err error) bool {
	return errors.Is(err, kerr.SaslAuthenticationFailed) ||
		errors.Is(err, kerr.UnsupportedSaslMechanism) ||
		errors.Is(err, kerr.IllegalSaslState)
}

// classify turns a client-level failure into this package's typed errors,
// adding what is known about the connection. It leaves errors that are
// already typed, and context errors, as they are.
func (c *Client) classify(err error) error {
	if err == nil {
		return nil
	}
	var (
		ae  *AuthError
		aze *AuthorizationError
		ce  *ConnectError
	)
	switch {
	case errors.As(err, &ae), errors.As(err, &aze), errors.As(err, &ce):
		return err
	case isSASLFailure(err):
		return &AuthError{Mechanism: c.cfg.SASL.Mechanism, User: c.cfg.SASL.User, Err: err}
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return &AuthorizationError{Op: "describe", Err: err}
	case isConnFailure(err):
		return &ConnectError{Brokers: c.cfg.Brokers, Err: err}
	}
	return err
}

// isConnFailure reports whether err means the broker could not be spoken to
// at all.
func isConnFailure(err error) bool {
	if _, ok := errors.AsType[*kgo.ErrFirstReadEOF](err); ok {
		return true
	}
	if ne, ok := errors.AsType[*net.OpError](err); ok && ne.Op == "dial" {
		return true
	}
	return false
}

// isCtxErr reports whether err is the caller's context ending.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// StuckError is a listing of offsets whose partitions kept answering with a
// retriable error (a leader that moved and did not settle, a partition
// offline) for all the time it was given. The partitions that answered are
// not in it: a caller listing many topics can list the others again
// without waiting on these.
type StuckError struct {
	// Stuck are the partitions still failing, by topic, sorted.
	Stuck map[string][]int32
	// Waited is how long they were asked again.
	Waited time.Duration
	// Err is the last answer of one of them.
	Err error
}

// Error names the first stuck partition, how many others there are, the
// last answer and the time waited.
func (e *StuckError) Error() string {
	topics := slices.Sorted(maps.Keys(e.Stuck))
	n := 0
	for _, t := range topics {
		n += len(e.Stuck[t])
	}
	more := ""
	if n > 1 {
		more = fmt.Sprintf(" (and %d more partitions)", n-1)
	}
	return fmt.Sprintf("listing offsets of %s/%d%s: still failing after %s: %v", topics[0], e.Stuck[topics[0]][0], more, e.Waited, e.Err)
}

func (e *StuckError) Unwrap() error { return e.Err }

// Of is the part of e on the given topics; nil when none of them is stuck.
func (e *StuckError) Of(topics ...string) *StuckError {
	var part *StuckError
	for _, t := range topics {
		if ps, ok := e.Stuck[t]; ok {
			if part == nil {
				part = &StuckError{Stuck: map[string][]int32{}, Waited: e.Waited, Err: e.Err}
			}
			part.Stuck[t] = ps
		}
	}
	return part
}

// stuckError makes the StuckError of the partitions keys.
func stuckError(keys []chanKey, waited time.Duration, err error) *StuckError {
	e := &StuckError{Stuck: map[string][]int32{}, Waited: waited, Err: err}
	for _, k := range keys {
		e.Stuck[k.topic] = append(e.Stuck[k.topic], k.partition)
	}
	for _, ps := range e.Stuck {
		slices.Sort(ps)
	}
	return e
}
