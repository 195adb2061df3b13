package capture

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/causalctl/causalctl/internal/record"
)

// checkFacts refuses facts no broker could report (docs/capture-format.md
// §5 lists which are refused and which a reader only warns about).
func checkFacts(f *record.LogFacts) error {
	switch {
	case f.LogStart < 0:
		return fmt.Errorf("negative log_start %d", f.LogStart)
	case f.HighWatermark < f.LogStart:
		return fmt.Errorf("high_watermark %d below log_start %d", f.HighWatermark, f.LogStart)
	case f.LastStable < -1 || f.LastStable > f.HighWatermark:
		return fmt.Errorf("last_stable %d outside -1…high_watermark %d", f.LastStable, f.HighWatermark)
	}
	if r := f.Retention; r != nil && r.Ms < -1 {
		// Kafka refuses retention.ms below −1 when it is set.
		return fmt.Errorf("retention.ms %d: below -1 (forever)", r.Ms)
	}
	producers := map[int64]bool{}
	for i, t := range f.OpenTransactions {
		switch {
		case t.FirstOffset < 0:
			return fmt.Errorf("open_transactions[%d]: negative first_offset %d", i, t.FirstOffset)
		case t.ProducerID < 0 || t.ProducerEpoch < 0:
			return fmt.Errorf("open_transactions[%d]: negative producer_id %d or producer_epoch %d", i, t.ProducerID, t.ProducerEpoch)
		case producers[t.ProducerID]:
			// A producer has at most one transaction open on a partition.
			return fmt.Errorf("open_transactions[%d]: producer_id %d has two open transactions", i, t.ProducerID)
		}
		producers[t.ProducerID] = true
	}
	return nil
}

// decodeFacts reads the value of a log_facts field (the JSON tags of
// record.LogFacts are the line's field names). log_start and
// high_watermark are required, and so are the fields of retention and of
// each open transaction but transactional_id and started_at: a missing one
// is never read as 0. An absent last_stable is −1 (the broker did not say).
func decodeFacts(raw []byte) (*record.LogFacts, error) {
	f := &record.LogFacts{LastStable: -1}
	present, err := members(raw, map[string]memberFunc{
		"log_start":      intInto(&f.LogStart, math.MinInt64, math.MaxInt64),
		"last_stable":    intInto(&f.LastStable, math.MinInt64, math.MaxInt64),
		"high_watermark": intInto(&f.HighWatermark, math.MinInt64, math.MaxInt64),
		"at":             intInto(&f.At, math.MinInt64, math.MaxInt64),
		"retention": func(raw json.RawMessage) error {
			r := &record.Retention{}
			p, err := members(raw, map[string]memberFunc{
				"ms":             intInto(&r.Ms, math.MinInt64, math.MaxInt64),
				"bytes":          intInto(&r.Bytes, math.MinInt64, math.MaxInt64),
				"cleanup_policy": stringInto(&r.CleanupPolicy),
			})
			if err == nil {
				err = require(p, "ms", "bytes", "cleanup_policy")
			}
			f.Retention = r
			return err
		},
		"open_transactions": listOf(func(i int, raw json.RawMessage) error {
			var t record.OpenTransaction
			p, err := members(raw, map[string]memberFunc{
				"producer_id":      intInto(&t.ProducerID, math.MinInt64, math.MaxInt64),
				"producer_epoch":   intInto(&t.ProducerEpoch, math.MinInt16, math.MaxInt16),
				"transactional_id": stringInto(&t.TransactionalID),
				"first_offset":     intInto(&t.FirstOffset, math.MinInt64, math.MaxInt64),
				"started_at":       intInto(&t.StartedAt, math.MinInt64, math.MaxInt64),
			})
			if err == nil {
				err = require(p, "producer_id", "producer_epoch", "first_offset")
			}
			if err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
			f.OpenTransactions = append(f.OpenTransactions, t)
			return nil
		}),
	})
	if err == nil {
		err = require(present, "log_start", "high_watermark")
	}
	if err == nil {
		err = checkFacts(f)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}
