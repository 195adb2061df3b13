package parsley

import "github.com/causalctl/causalctl/internal/record"

// Fold applies one item of a changelog read — from a broker range or from
// a capture of the changelog topic alike — to cl: a record is a store
// entry (a null value a tombstone), a position says how far the read got,
// log facts are the partition's offsets when the read began.
func (cl *Changelog) Fold(it *record.Item) {
	switch it.Kind {
	case record.KindRecord:
		cl.Apply(it.Partition, it.Offset, it.Key, it.Value)
	case record.KindPosition:
		cl.Reached(it.Partition, it.Offset)
	case record.KindLogFacts:
		pr := cl.Partition(it.Partition)
		pr.LogStart, pr.LastStable, pr.HighWatermark = it.Facts.LogStart, it.Facts.LastStable, it.Facts.HighWatermark
	}
}
