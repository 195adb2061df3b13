package record

import "bytes"

// LogFacts are what the brokers said of one channel's log when a read of
// it opened: its offsets and its topic's retention settings, and the
// transactions open on it. A capture keeps them on a log-facts line (the
// JSON tags are that line's field names), so that an offline diagnosis
// classifies holds as a live one would:
//
//	{"topic":"orders","topic_id":"…","partition":0,
//	 "log_facts":{"log_start":0,"last_stable":57,"high_watermark":60,
//	   "retention":{"ms":604800000,"bytes":-1,"cleanup_policy":"delete"},
//	   "open_transactions":[{"producer_id":7,"producer_epoch":0,
//	     "transactional_id":"payments-tx","first_offset":57,"started_at":1764450000123}],
//	   "at":1764450001000}}
//
// Readers that do not know the line ignore it (an unknown field on a line
// that is neither a record nor a position).
type LogFacts struct {
	// LogStart is the first offset still in the log.
	LogStart int64 `json:"log_start"`
	// LastStable is the last stable offset: a read_committed reader reads
	// below it; everything at or above it up to HighWatermark belongs to
	// transactions still open. −1 when the broker did not say.
	LastStable int64 `json:"last_stable"`
	// HighWatermark is one past the last offset written.
	HighWatermark int64 `json:"high_watermark"`
	// Retention holds the topic's settings; nil when unknown.
	Retention *Retention `json:"retention,omitempty"`
	// OpenTransactions are the producers with a transaction open on the
	// channel (DescribeProducers, DescribeTransactions), by first offset;
	// empty when none is open or the broker could not tell.
	OpenTransactions []OpenTransaction `json:"open_transactions,omitempty"`
	// At is when the brokers were asked, in milliseconds since the epoch;
	// 0 when unknown.
	At int64 `json:"at,omitempty"`
}

// StableEnd is the end a read_committed reader reads up to: the last
// stable offset, or the high watermark when the brokers gave none.
func (f *LogFacts) StableEnd() int64 {
	if f.LastStable >= 0 {
		return f.LastStable
	}
	return f.HighWatermark
}

// CommittedLag is how far a committed offset is behind the log's stable
// end (a consumer-lag exporter's lag), 0 at or past it up to the high
// watermark (a read_uncommitted reader may commit inside an open
// transaction). It is −1, unknown, when the end is, and when committed is
// beyond the high watermark: the log was truncated under the commit (an
// unclean leader election, a topic recreated) or the commit is bogus, and
// 0 — caught up — would hide it.
func (f *LogFacts) CommittedLag(committed int64) int64 {
	end, top := f.StableEnd(), f.HighWatermark
	if top < 0 {
		top = end
	}
	if end < 0 || committed < 0 || committed > top {
		return -1
	}
	return max(end-committed, 0)
}

// Pinning returns the open transaction that pins the last stable offset:
// the one with the lowest first offset (of equal ones, the lowest producer
// id), whatever the order of OpenTransactions. A read_committed reader
// reads nothing past it until it ends, so it is the one to name for any
// offset at or past the last stable offset, even one inside a transaction
// started later. Nil when none is open.
func (f *LogFacts) Pinning() *OpenTransaction {
	var pin *OpenTransaction
	for i := range f.OpenTransactions {
		t := &f.OpenTransactions[i]
		if pin == nil || t.FirstOffset < pin.FirstOffset || t.FirstOffset == pin.FirstOffset && t.ProducerID < pin.ProducerID {
			pin = t
		}
	}
	return pin
}

// PinAgrees reports whether t's first offset is the last stable offset,
// as it is when the offsets and the transactions were read at one moment;
// a disagreement means a transaction began or ended between the two
// questions (or the broker did not give a last stable offset), and the
// facts should be read again.
func (f *LogFacts) PinAgrees(t *OpenTransaction) bool {
	return t != nil && f.LastStable >= 0 && t.FirstOffset == f.LastStable
}

// Retention is a topic's retention settings.
type Retention struct {
	// Ms is retention.ms: how long a record is kept; −1 keeps it forever.
	Ms int64 `json:"ms"`
	// Bytes is retention.bytes per partition; −1 is no limit.
	Bytes int64 `json:"bytes"`
	// CleanupPolicy is cleanup.policy: "delete", "compact" or
	// "compact,delete".
	CleanupPolicy string `json:"cleanup_policy"`
}

// Deletes reports whether the policy deletes old records (it has delete).
func (r Retention) Deletes() bool {
	for _, p := range bytes.Split([]byte(r.CleanupPolicy), []byte(",")) {
		if string(bytes.TrimSpace(p)) == "delete" {
			return true
		}
	}
	return false
}

// PolicyKnown reports whether every element of the cleanup policy is one
// Kafka knows: delete or compact.
func (r Retention) PolicyKnown() bool {
	for _, p := range bytes.Split([]byte(r.CleanupPolicy), []byte(",")) {
		if p := string(bytes.TrimSpace(p)); p != "delete" && p != "compact" {
			return false
		}
	}
	return true
}

// OpenTransaction is a producer's transaction open on a channel.
type OpenTransaction struct {
	ProducerID    int64 `json:"producer_id"`
	ProducerEpoch int16 `json:"producer_epoch"`
	// TransactionalID is "" when the brokers did not say.
	TransactionalID string `json:"transactional_id,omitempty"`
	// FirstOffset is the transaction's first offset on the channel.
	FirstOffset int64 `json:"first_offset"`
	// StartedAt is when the transaction started, in milliseconds since the
	// epoch; 0 when unknown.
	StartedAt int64 `json:"started_at,omitempty"`
}
