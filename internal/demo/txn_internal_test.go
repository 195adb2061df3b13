package demo

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// batch encodes a record batch of producer pid at first holding n
// records; a control batch holds one marker, a commit or an abort.
func batch(pid, first int64, n int, control, commit bool) []byte {
	var recs []byte
	for i := range n {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte("v")}
		if control {
			k := kmsg.ControlRecordKey{Type: kmsg.ControlRecordKeyTypeAbort}
			if commit {
				k.Type = kmsg.ControlRecordKeyTypeCommit
			}
			r.Key, r.Value = k.AppendTo(nil), []byte{0, 0, 0, 0, 0, 0}
		}
		r.Length = int32(len(r.AppendTo(nil)) - 1) // the one-byte varint of a short record
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{FirstOffset: first, Magic: 2, LastOffsetDelta: int32(n - 1), ProducerID: pid, NumRecords: int32(n), Records: recs}
	b.Attributes = 0x10 // transactional
	if control {
		b.Attributes |= 0x20
	}
	b.Length = int32(49 + len(recs))
	return b.AppendTo(nil)
}

// TestFindMarker checks that the marker found is the producer's first
// after the transaction's last record, whatever else the log holds around
// it, and that a read that holds none yet says where to read on.
func TestFindMarker(t *testing.T) {
	const us, them = 7, 8
	cat := func(bs ...[]byte) (out []byte) {
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	for _, tc := range []struct {
		name             string
		log              []byte
		last             int64
		found, committed bool
		next             int64
	}{
		{"commit", cat(batch(us, 10, 3, false, false), batch(us, 13, 1, true, true)), 12, true, true, 14},
		{"abort", cat(batch(us, 10, 3, false, false), batch(us, 13, 1, true, false)), 12, true, false, 14},
		{"another producer's markers first", cat(batch(us, 10, 2, false, false), batch(them, 12, 1, true, false),
			batch(them, 13, 2, false, false), batch(us, 15, 1, true, true)), 11, true, true, 16},
		{"an earlier marker of ours is not it", cat(batch(us, 9, 1, true, false), batch(us, 10, 2, false, false)), 11, false, false, 12},
		{"a partial batch ends the read", cat(batch(us, 10, 2, false, false), batch(us, 12, 1, true, true)[:20]), 11, false, false, 12},
		{"nothing read", nil, 11, false, false, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found, committed, next, err := findMarker(tc.log, us, tc.last)
			if err != nil {
				t.Fatal(err)
			}
			if found != tc.found || committed != tc.committed || next != tc.next {
				t.Errorf("found %v, committed %v, next %d; want %v, %v, %d", found, committed, next, tc.found, tc.committed, tc.next)
			}
		})
	}
}
