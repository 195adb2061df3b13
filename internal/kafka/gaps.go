package kafka

import (
	"errors"
	"fmt"

	"github.com/causalctl/causalctl/internal/record"
)

// ErrGap: offsets a read still had to read were deleted (retention,
// DeleteRecords) before it reached them. See GapError.
var ErrGap = errors.New("offsets deleted before they were read")

// GapError reports that the log start of a channel moved past the read's
// position while it read: the offsets From ≤ o < To are gone, and the
// records among them were never seen. Retrying cannot bring them back; a
// read with AllowGaps goes on past them instead, recording the gap.
type GapError struct {
	Channel  string // NAME/PARTITION
	From, To int64
}

// Error names the deleted offsets and what to do about them.
func (e *GapError) Error() string {
	return fmt.Sprintf("offsets %d to %d of %s were deleted before they were read (the log now starts at %d: retention or DeleteRecords); --allow-gaps reads past them and records the gap",
		e.From, e.To-1, e.Channel, e.To)
}

// Is matches ErrGap.
func (e *GapError) Is(target error) bool { return target == ErrGap }

// AllowGaps makes a read go on when the log start of a channel moves past
// its position (OFFSET_OUT_OF_RANGE below the log start): the position
// jumps to the new log start, and a KindPosition item there carries the
// deleted offsets as its record.Gap. Without it such a read fails with a
// *GapError, since a range missing records it claims to cover is a wrong
// answer.
func AllowGaps() ReadOption {
	return readOpt(func(c *readConfig) { c.allowGaps = true })
}

// addGap adds a position item at to that says the offsets from ≤ o < to
// were deleted unread, and notes it told.
func (rd *reader) addGap(ch *rchan, from, to int64) {
	rd.addItem(&record.Item{Kind: record.KindPosition, Topic: ch.Topic, TopicID: ch.TopicID, Partition: ch.Partition,
		Offset: to, Gap: &record.Gap{From: from, To: to}})
	ch.emitted = to
}
