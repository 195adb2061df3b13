// Package capture reads and writes capture files (SPEC §4): NDJSON lines,
// each a Kafka record with its headers, a position line saying that a
// consumer's position on a channel reached a given offset, or a log-facts
// line saying what the brokers knew of a channel's log (LogFacts).
//
// A line is read into, and written from, a record.Item, the unit every
// record source of causalctl yields.
package capture

import "github.com/causalctl/causalctl/internal/record"

// The record types are the record package's; these aliases are for this
// package's own code. Every other package names them record.Item,
// record.LogFacts, … (internal/cli: TestRecordTypesOneName).
type (
	Item            = record.Item
	Kind            = record.Kind
	LogFacts        = record.LogFacts
	Retention       = record.Retention
	OpenTransaction = record.OpenTransaction
)

// The kinds of an Item, the record package's (see Kind).
const (
	KindRecord   = record.KindRecord
	KindPosition = record.KindPosition
	KindLogFacts = record.KindLogFacts
)
