package record

import (
	"math"
	"time"
)

// MaxTimestamp is the latest record timestamp read as a time: the last
// millisecond whose nanoseconds since the epoch fit an int64
// (2262-04-11T23:47:16.854Z), which the views keep times as.
const MaxTimestamp = math.MaxInt64 / int64(time.Millisecond)

// TimeOf is a record timestamp, in milliseconds since the epoch, as a
// time; false when there is none (Kafka's −1, any negative) or it lies
// beyond MaxTimestamp. No clock writes such a timestamp, and arithmetic on
// it goes wrong: time.UnixMilli(2^63−1) is 292 million years ahead, an age
// from it saturates at −292 years, its nanoseconds wrap, and neither RFC
// 3339 nor JSON can write its year. Such a record's time is unknown, not a
// negative age.
func TimeOf(ms int64) (time.Time, bool) {
	if ms < 0 || ms > MaxTimestamp {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}
