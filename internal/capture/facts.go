package capture

import (
	"encoding/json"
	"fmt"

	"github.com/causalctl/causalctl/internal/record"
)

// checkFacts refuses facts no broker could report.
func checkFacts(f *record.LogFacts) error {
	switch {
	case f.LogStart < 0:
		return fmt.Errorf("negative log_start %d", f.LogStart)
	case f.HighWatermark < f.LogStart:
		return fmt.Errorf("high_watermark %d below log_start %d", f.HighWatermark, f.LogStart)
	case f.LastStable < -1 || f.LastStable > f.HighWatermark:
		return fmt.Errorf("last_stable %d outside -1…high_watermark %d", f.LastStable, f.HighWatermark)
	}
	for i, t := range f.OpenTransactions {
		if t.FirstOffset < 0 {
			return fmt.Errorf("open_transactions[%d]: negative first_offset %d", i, t.FirstOffset)
		}
	}
	return nil
}

// decodeFacts reads the value of a log_facts field (the JSON tags of
// record.LogFacts are the line's field names).
func decodeFacts(raw []byte) (*record.LogFacts, error) {
	f := &record.LogFacts{LastStable: -1}
	if err := json.Unmarshal(raw, f); err != nil {
		return nil, err
	}
	if err := checkFacts(f); err != nil {
		return nil, err
	}
	return f, nil
}
