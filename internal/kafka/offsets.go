package kafka

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/clock"
)

// DefaultOffsets is the offsets expression to use when the user gives none:
// the whole committed log, from the log start to the current end.
const DefaultOffsets = "start"

// BoundKind says how one end of a range is given.
type BoundKind uint8

// The kinds of bound. The end of a range is never past the partition's
// current end (the last stable offset, as the range reads committed data
// only), whatever the bound says.
const (
	// BoundLogStart is the partition's log start offset.
	BoundLogStart BoundKind = iota + 1
	// BoundLogEnd is the partition's current end, taken once when the
	// range is opened.
	BoundLogEnd
	// BoundOffset is the exact offset N.
	BoundOffset
	// BoundAfterStart is N offsets after the log start.
	BoundAfterStart
	// BoundBeforeEnd is N offsets before the current end.
	BoundBeforeEnd
	// BoundTime is the first offset whose record timestamp is at or after
	// Time (the current end when there is none).
	BoundTime
)

// Bound is one end of a range.
type Bound struct {
	Kind BoundKind
	N    int64     // for BoundOffset, BoundAfterStart, BoundBeforeEnd
	Time time.Time // for BoundTime
}

// String describes the bound: start, end, N, start+N, end-N or @TIME.
func (b Bound) String() string {
	switch b.Kind {
	case BoundLogStart:
		return "start"
	case BoundLogEnd:
		return "end"
	case BoundOffset:
		return strconv.FormatInt(b.N, 10)
	case BoundAfterStart:
		return "start+" + strconv.FormatInt(b.N, 10)
	case BoundBeforeEnd:
		return "end-" + strconv.FormatInt(b.N, 10)
	case BoundTime:
		return "@" + b.Time.UTC().Format(time.RFC3339Nano)
	}
	return "?"
}

// OffsetSpec is a parsed offsets expression: where each channel's range
// starts (inclusive) and ends (exclusive). Build it with ParseOffsets.
type OffsetSpec struct {
	Start Bound
	End   Bound
}

// String describes the spec, e.g. "[start, end)" or "[10, 20)".
func (s OffsetSpec) String() string { return "[" + s.Start.String() + ", " + s.End.String() + ")" }

// ParseOffsets parses an offsets expression in the grammar of rpk's
// `rpk topic consume --offset` (Redpanda's rpk documentation, section
// OFFSETS), restricted to what a finite range needs. now anchors relative
// durations, so a parsed spec does not drift.
//
// Offsets (a range's end is exclusive, as in rpk):
//
//	start, oldest   from the log start to the current end
//	end, newest     the empty range at the current end
//	:end            same as start
//	N, N:           from offset N to the current end
//	:M              from the log start up to (not including) offset M
//	N:M, N-M        from N up to (not including) M; M must exceed N
//	N:end           from N to the current end
//	+N              from N offsets after the log start to the current end
//	-N              the last N offsets before the current end
//
// Timestamps (@T starts at the first record at or after T; a T2 end stops
// before the first record at or after T2):
//
//	@T, @T:         from T to the current end
//	@:T2            from the log start up to T2
//	@T1:T2          from T1 up to T2
//	@T:end          from T to the current end
//
// where a time is written as
//
//	digits              unix milliseconds (exactly 10 digits: unix seconds, as rpk)
//	YYYY-MM-DD          that day at 00:00 UTC
//	RFC 3339            e.g. 2026-03-01T12:00:00Z or 2026-03-01T12:00:00.5+01:00
//	-DUR, DUR           a Go duration (1h, 90m, 1m30s) before or after now;
//	                    as T2 after an absolute T1 it counts from T1
//
// Differences from rpk: the current end is the last stable offset (the range
// reads committed data only) and is taken once at open, so every range ends;
// "end" as a start gives an empty range rather than following new records.
// Offsets count offsets, not records: transaction markers occupy offsets too.
func ParseOffsets(s string, now time.Time) (OffsetSpec, error) {
	spec, err := parseOffsets(strings.TrimSpace(s), now)
	if err != nil {
		return OffsetSpec{}, fmt.Errorf("offsets %q: %w", s, err)
	}
	return spec, nil
}

func parseOffsets(s string, now time.Time) (OffsetSpec, error) {
	start, end := Bound{Kind: BoundLogStart}, Bound{Kind: BoundLogEnd}
	if s == "" {
		return OffsetSpec{}, errors.New("empty: want e.g. start, end, 10:20, -100 or @-1h")
	}
	if rest, ok := strings.CutPrefix(s, "@"); ok {
		return parseTimeRange(rest, now)
	}
	switch s {
	case "start", "oldest", ":end":
		return OffsetSpec{start, end}, nil
	case "end", "newest":
		return OffsetSpec{end, end}, nil
	}
	if n, ok := strings.CutPrefix(s, "+"); ok {
		v, err := parseCount(n)
		return OffsetSpec{Bound{Kind: BoundAfterStart, N: v}, end}, err
	}
	if n, ok := strings.CutPrefix(s, "-"); ok {
		v, err := parseCount(n)
		return OffsetSpec{Bound{Kind: BoundBeforeEnd, N: v}, end}, err
	}
	if m, ok := strings.CutPrefix(s, ":"); ok {
		v, err := parseCount(m)
		return OffsetSpec{start, Bound{Kind: BoundOffset, N: v}}, err
	}
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		a, b, ok = strings.Cut(s, "-")
	}
	n, err := parseCount(a)
	if err != nil {
		return OffsetSpec{}, err
	}
	start = Bound{Kind: BoundOffset, N: n}
	switch {
	case !ok, b == "", b == "end":
		return OffsetSpec{start, end}, nil
	}
	m, err := parseCount(b)
	if err != nil {
		return OffsetSpec{}, err
	}
	if m <= n {
		return OffsetSpec{}, fmt.Errorf("end %d is not after start %d", m, n)
	}
	return OffsetSpec{start, Bound{Kind: BoundOffset, N: m}}, nil
}

func parseCount(s string) (int64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not an offset (want digits, start, end, +N, -N, N:M or @TIME)", s)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("offset %q is too large", s)
	}
	return v, nil
}

// timeTok is one parsed time of a timestamp range.
type timeTok struct {
	at       time.Time
	dur      time.Duration
	relative bool // a duration: at is not set
	end      bool // the word "end"
}

func parseTimeRange(s string, now time.Time) (OffsetSpec, error) {
	spec := OffsetSpec{Start: Bound{Kind: BoundLogStart}, End: Bound{Kind: BoundLogEnd}}
	if s == "" {
		return OffsetSpec{}, errors.New("@ needs a time, e.g. @2026-03-01 or @-1h")
	}
	var t1 *timeTok
	if !strings.HasPrefix(s, ":") {
		tok, rest := cutTime(s)
		t, err := parseTime(tok)
		if err != nil {
			return OffsetSpec{}, err
		}
		if t.end {
			return OffsetSpec{}, errors.New(`"end" can only end a time range (@T:end)`)
		}
		if t.relative {
			t.at = now.Add(t.dur)
		}
		t1 = &t
		spec.Start = Bound{Kind: BoundTime, Time: t.at}
		s = rest
	}
	switch {
	case s == "" || s == ":":
		if t1 == nil {
			return OffsetSpec{}, errors.New("@: needs a time after the colon")
		}
		return spec, nil
	case !strings.HasPrefix(s, ":"):
		return OffsetSpec{}, fmt.Errorf("unexpected %q after the first time", s)
	}
	tok := s[1:]
	t2, err := parseTime(tok)
	if err != nil {
		return OffsetSpec{}, err
	}
	switch {
	case t2.end:
		return spec, nil
	case t2.relative && t1 != nil && !t1.relative:
		t2.at = t1.at.Add(t2.dur)
	case t2.relative:
		t2.at = now.Add(t2.dur)
	}
	if t1 != nil && t2.at.Before(t1.at) {
		return OffsetSpec{}, fmt.Errorf("end time %s is before start time %s",
			t2.at.UTC().Format(time.RFC3339Nano), t1.at.UTC().Format(time.RFC3339Nano))
	}
	spec.End = Bound{Kind: BoundTime, Time: t2.at}
	return spec, nil
}

// cutTime splits the first time off s. RFC 3339 times contain colons, so
// they are measured rather than cut at the first colon.
func cutTime(s string) (tok, rest string) {
	if len(s) > 10 && isDate(s[:10]) && (s[10] == 'T' || s[10] == 't') {
		i := 11
		for i < len(s) && (isDigit(s[i]) || s[i] == ':' || s[i] == '.') {
			i++
		}
		switch {
		case i < len(s) && (s[i] == 'Z' || s[i] == 'z'):
			i++
		case i < len(s) && (s[i] == '+' || s[i] == '-') && i+6 <= len(s):
			i += 6
		}
		// The zone designator ends the time, so a following ":T2" stays in
		// rest; a time without one fails to parse, as RFC 3339 requires it.
		return s[:i], s[i:]
	}
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

func parseTime(tok string) (timeTok, error) {
	switch {
	case tok == "":
		return timeTok{}, errors.New("empty time")
	case tok == "end":
		return timeTok{end: true}, nil
	case strings.TrimLeft(tok, "0123456789") == "":
		n, err := strconv.ParseInt(tok, 10, 64)
		if err != nil {
			return timeTok{}, fmt.Errorf("time %q is too large", tok)
		}
		if len(tok) == 10 {
			return timeTok{at: time.Unix(n, 0)}, nil
		}
		return timeTok{at: time.UnixMilli(n)}, nil
	case len(tok) == 10 && isDate(tok):
		t, err := time.ParseInLocation(time.DateOnly, tok, time.UTC)
		if err != nil {
			return timeTok{}, fmt.Errorf("date %q: %w", tok, err)
		}
		return timeTok{at: t}, nil
	case len(tok) > 10 && isDate(tok[:10]):
		t, err := time.Parse(time.RFC3339Nano, tok)
		if err != nil {
			return timeTok{}, fmt.Errorf("time %q is not RFC 3339 (e.g. 2026-03-01T12:00:00Z)", tok)
		}
		return timeTok{at: t}, nil
	}
	d, err := time.ParseDuration(tok)
	if err != nil {
		return timeTok{}, fmt.Errorf("time %q: want unix milliseconds, YYYY-MM-DD, RFC 3339 or a duration such as -1h", tok)
	}
	return timeTok{dur: d, relative: true}, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9} {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// AllPartitions in TopicSel.Partition selects every partition of the topic.
const AllPartitions int32 = -1

// TopicSel selects a topic, or one partition of it, for a range: the value
// of one --topic flag.
type TopicSel struct {
	// Topic is the topic name; "" when the topic is given by UUID.
	Topic string
	// ID is the topic UUID when the topic is given by UUID.
	ID clock.TopicID
	// Partition is the partition, or AllPartitions.
	Partition int32
}

// String returns the form ParseTopicSel reads.
func (s TopicSel) String() string {
	t := s.Topic
	if t == "" {
		t = s.ID.String()
	}
	if s.Partition == AllPartitions {
		return t
	}
	return t + "/" + strconv.Itoa(int(s.Partition))
}

// ParseTopicSel reads NAME, NAME/PARTITION, UUID or UUID/PARTITION. A topic
// part that is a well-formed UUID is taken as a topic UUID.
func ParseTopicSel(s string) (TopicSel, error) {
	sel := TopicSel{Partition: AllPartitions}
	topic := strings.TrimSpace(s)
	if name, part, ok := strings.Cut(topic, "/"); ok {
		p, err := strconv.ParseInt(part, 10, 32)
		if err != nil || p < 0 {
			return TopicSel{}, fmt.Errorf("topic %q: partition %q is not a number from 0 to 2147483647", s, part)
		}
		topic, sel.Partition = name, int32(p)
	}
	if id, err := clock.ParseTopicID(topic); err == nil {
		if id.IsZero() {
			return TopicSel{}, fmt.Errorf("topic %q: zero topic UUID", s)
		}
		sel.ID = id
		return sel, nil
	}
	if err := clock.CheckTopicName(topic); err != nil {
		return TopicSel{}, fmt.Errorf("topic %q: %w", s, err)
	}
	sel.Topic = topic
	return sel, nil
}

// ParseTopicSels parses the values of a repeatable --topic flag; each value
// may also hold a comma-separated list (topic names cannot contain commas).
func ParseTopicSels(values []string) ([]TopicSel, error) {
	var sels []TopicSel
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			sel, err := ParseTopicSel(part)
			if err != nil {
				return nil, err
			}
			sels = append(sels, sel)
		}
	}
	if len(sels) == 0 {
		return nil, errors.New("no topic given")
	}
	return sels, nil
}
