package render

import "time"

// Time is the text of an instant in every command's output: UTC, RFC 3339
// with milliseconds (2026-12-01T12:00:00.000Z), the precision of a Kafka
// timestamp, so that records and ages read the same across commands.
func Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }
