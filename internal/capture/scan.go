package capture

// A scanner for exactly the JSON of capture lines. It validates the whole
// line as strict JSON (RFC 8259, UTF-8) while filling r.item, touching each
// byte once; fields it does not know are skipped after being checked.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
)

// maxInterned bounds each table of interned names, so that a file with
// endless distinct names cannot grow the Reader without limit.
const maxInterned = 4096

// b64 decodes standard base64 and refuses non-canonical padding bits, so
// that each value has exactly one spelling.
var b64 = base64.StdEncoding.Strict()

// emptyBytes is the value of an empty base64 string: empty but not null.
var emptyBytes = []byte{}

// Bits naming the fields of a line and of a header object. A field's bit
// is 1 << its index in fields.
const (
	fTopic uint16 = 1 << iota
	fTopicID
	fPartition
	fOffset
	fPosition
	fTimestamp
	fHeaders
	fKey
	fValue
	fLogFacts
	fGap
	fStopped
)

// field is one field of the capture schema (SPEC §4).
type field struct {
	bit  uint16
	name string
	// recordOnly fields may not be on a position or log-facts line.
	recordOnly bool
}

// fields is the schema, the one place each field is named; fields[i].bit
// is 1 << i. Header objects use key and value.
var fields = [...]field{
	{bit: fTopic, name: "topic"},
	{bit: fTopicID, name: "topic_id"},
	{bit: fPartition, name: "partition"},
	{bit: fOffset, name: "offset"},
	{bit: fPosition, name: "position"},
	{bit: fTimestamp, name: "timestamp", recordOnly: true},
	{bit: fHeaders, name: "headers", recordOnly: true},
	{bit: fKey, name: "key", recordOnly: true},
	{bit: fValue, name: "value", recordOnly: true},
	{bit: fLogFacts, name: "log_facts"},
	{bit: fGap, name: "gap"},
	{bit: fStopped, name: "stopped"},
}

// nameOf names a field bit.
func nameOf(bit uint16) string { return fields[bits.TrailingZeros16(bit)].name }

// schema is the fields one kind of object may hold, indexed by the first
// byte of their names for matching a name in place.
type schema struct {
	first [256]uint16         // bits of the fields whose names start with the byte
	names [len(fields)]string // fields' names by bit index, "" outside the schema
}

func newSchema(mask uint16) *schema {
	s := &schema{}
	for i, f := range fields {
		if mask&f.bit != 0 {
			s.first[f.name[0]] |= f.bit
			s.names[i] = f.name
		}
	}
	return s
}

// The schemas of the line object and of a header object.
var (
	lineSchema   = newSchema(fTopic | fTopicID | fPartition | fOffset | fPosition | fTimestamp | fHeaders | fKey | fValue | fLogFacts | fGap | fStopped)
	headerSchema = newSchema(fKey | fValue)
)

// lookup returns the bit of the field called name (unescaped), or 0.
func (sc *schema) lookup(name []byte) uint16 {
	if len(name) == 0 {
		return 0
	}
	for m := sc.first[name[0]]; m != 0; m &= m - 1 {
		if string(name) == sc.names[bits.TrailingZeros16(m)] {
			return m & -m
		}
	}
	return 0
}

// where names the part of a line a field error is about.
type where struct {
	hdr   int    // 1-based header number; 0 outside the header list
	field string // field name; "" for a whole header
}

func (w where) String() string {
	switch {
	case w.hdr == 0:
		return fmt.Sprintf("field %q", w.field)
	case w.field == "":
		return fmt.Sprintf("header %d", w.hdr)
	}
	return fmt.Sprintf("header %d %s", w.hdr, w.field)
}

// parse reads one line (without its newline) into r.item. eof says that the
// line ends the file without a newline. It reports a line holding only
// whitespace as blank.
func (r *Reader) parse(line []byte, eof bool) (blank bool, err error) {
	r.b, r.i, r.eof = line, 0, eof
	if r.fastLine(line) {
		return false, nil
	}
	r.ws()
	if r.i == len(r.b) {
		return true, nil
	}
	if r.b[r.i] != '{' {
		return false, &causeError{class: ErrSyntax, msg: "not a JSON object"}
	}
	r.i++
	it := &r.item
	*it = Item{Line: r.line}
	r.data = r.data[:0]
	r.hdrs = r.hdrs[:0]
	r.lineNames.reset()
	o := object{sc: lineSchema, names: &r.lineNames}
	var present uint16
	for {
		bit, err := r.next(&o)
		if err != nil {
			return false, err
		}
		if bit == 0 {
			break
		}
		ok, err := r.field(bit)
		if err != nil {
			return false, err
		}
		if ok {
			present |= bit
		}
	}
	r.ws()
	if r.i != len(r.b) {
		return false, r.syntax("the end of the line after the object")
	}
	return false, r.finish(present)
}

// finish checks the fields of a complete line.
func (r *Reader) finish(present uint16) error {
	it := &r.item
	if present&fStopped != 0 {
		if present != fStopped {
			return fieldError(`"stopped" beside other fields: the stopped line names no channel and holds nothing else`)
		}
		it.Kind = kindStopped
		return nil
	}
	switch {
	case present&fOffset != 0 && present&fPosition != 0:
		return fieldError(`both "offset" and "position": a line is a record or a position, not both`)
	case present&fLogFacts != 0 && present&(fOffset|fPosition) != 0:
		return fieldError(`"log_facts" beside "offset" or "position": a log-facts line is neither a record nor a position`)
	case present&(fOffset|fPosition|fLogFacts) == 0:
		return fieldError(`missing "offset" (a record) or "position" (a position line)`)
	case present&fGap != 0 && present&fPosition == 0:
		return fieldError(`"gap" on a line that is no position line`)
	case present&fGap != 0 && checkGap(it.Gap, it.Offset) != nil:
		return fieldError(fmt.Sprintf("field %q: %v", "gap", checkGap(it.Gap, it.Offset)))
	case present&fPartition == 0:
		return fieldError(`missing "partition"`)
	case present&(fTopic|fTopicID) == 0:
		return fieldError(`missing "topic" or "topic_id": one of them is required`)
	}
	if present&(fPosition|fLogFacts) != 0 {
		kind, line := KindPosition, "position"
		if present&fLogFacts != 0 {
			kind, line = KindLogFacts, "log-facts"
		}
		for _, f := range fields {
			if f.recordOnly && present&f.bit != 0 {
				return fieldError(fmt.Sprintf("field %q is not allowed on a %s line", f.name, line))
			}
		}
		it.Kind = kind
		return nil
	}
	it.Kind = KindRecord
	if n := len(r.hdrs); n > 0 {
		it.Headers = r.hdrs[:n:n]
	}
	return nil
}

// field reads the value of a known field into r.item. It reports false for
// a null value of an optional field, which counts as absent.
func (r *Reader) field(bit uint16) (bool, error) {
	it := &r.item
	w := where{field: nameOf(bit)}
	switch bit {
	case fTopic, fTopicID:
		if null, err := r.null(); null || err != nil {
			return false, err
		}
		s, err := r.stringValue(w)
		if err != nil {
			return false, err
		}
		if bit == fTopic {
			it.Topic, err = r.topic(s)
		} else {
			it.TopicID, err = r.topicID(s)
		}
		return err == nil, err
	case fPartition:
		v, err := r.integer(w, math.MaxInt32, false, "a non-negative 32-bit integer")
		it.Partition = int32(v)
		return err == nil, err
	case fOffset, fPosition:
		v, err := r.integer(w, math.MaxInt64, false, "a non-negative integer")
		it.Offset = v
		return err == nil, err
	case fTimestamp:
		if null, err := r.null(); null || err != nil {
			return false, err
		}
		if r.skip == skipAllButChannel {
			return true, r.skipValue(1)
		}
		v, err := r.integer(w, math.MaxInt64, true, "an integer (milliseconds since the epoch)")
		it.Timestamp, it.HasTimestamp = v, err == nil
		return err == nil, err
	case fHeaders:
		if null, err := r.null(); null || err != nil {
			return false, err
		}
		if r.skip == skipAllButChannel {
			return true, r.skipValue(1)
		}
		return true, r.headers()
	case fLogFacts:
		if null, err := r.null(); null || err != nil {
			return false, err
		}
		// A log-facts line is rare (one per channel): its value is checked
		// as JSON by the scanner, then decoded by encoding/json.
		start := r.i
		if err := r.skipValue(1); err != nil {
			return false, err
		}
		// Decoded even by a first pass (ChannelsOnly): a reader checks the
		// facts against the records as it goes.
		f, err := decodeFacts(r.b[start:r.i])
		if err != nil {
			return false, fieldError(fmt.Sprintf("field %q: %v", "log_facts", err))
		}
		it.Facts = f
		return true, nil
	case fStopped:
		if null, err := r.null(); null || err != nil {
			return false, err
		}
		start := r.i
		if err := r.skipValue(1); err != nil {
			return false, err
		}
		s, err := decodeStopped(r.b[start:r.i])
		if err != nil {
			return false, fieldError(fmt.Sprintf("field %q: %v", "stopped", err))
		}
		s.Line = r.line
		r.pending = s
		return true, nil
	case fGap:
		if null, err := r.null(); null || err != nil {
			return false, err
		}
		start := r.i
		if err := r.skipValue(1); err != nil {
			return false, err
		}
		g, err := decodeGap(r.b[start:r.i])
		if err != nil {
			return false, fieldError(fmt.Sprintf("field %q: %v", "gap", err))
		}
		it.Gap = g
		return true, nil
	case fKey, fValue:
		if null, err := r.null(); null || err != nil {
			return false, err
		}
		if r.skip == skipAllButChannel {
			return true, r.skipValue(1)
		}
		if r.skip == skipPayloads {
			return true, r.checkBase64(w)
		}
		v, err := r.base64Value(w)
		if bit == fKey {
			it.Key = v
		} else {
			it.Value = v
		}
		return err == nil, err
	}
	panic("capture: unknown field bit")
}

// headers reads the header list; r.i is at its first byte.
func (r *Reader) headers() error {
	if r.b[r.i] != '[' {
		return r.wrongType(where{field: "headers"}, "a list of headers")
	}
	r.i++
	c, err := r.peek()
	if err != nil {
		return err
	}
	if c == ']' {
		r.i++
		return nil
	}
	for n := 1; ; n++ {
		if err := r.header(n); err != nil {
			return err
		}
		c, err := r.peek()
		if err != nil {
			return err
		}
		if c == ']' {
			r.i++
			return nil
		}
		if c != ',' {
			return r.syntax("',' or ']'")
		}
		r.i++
		if _, err := r.peek(); err != nil {
			return err
		}
	}
}

// header reads header n, an object {"key": string, "value": base64|null},
// and appends it to r.hdrs. A missing value is null.
func (r *Reader) header(n int) error {
	if r.b[r.i] != '{' {
		return r.wrongType(where{hdr: n}, "an object")
	}
	r.i++
	r.hdrNames.reset()
	var h clock.Header
	o := object{sc: headerSchema, names: &r.hdrNames, hdr: n}
	for {
		bit, err := r.next(&o)
		if err != nil {
			return err
		}
		if bit == 0 {
			break
		}
		if bit == fKey {
			s, err := r.stringValue(where{hdr: n, field: "key"})
			if err != nil {
				return err
			}
			h.Key = r.headerKey(s)
		} else if null, err := r.null(); err != nil {
			return err
		} else if !null {
			if h.Value, err = r.base64Value(where{hdr: n, field: "value"}); err != nil {
				return err
			}
		}
	}
	if o.seen&fKey == 0 {
		return fieldError(fmt.Sprintf(`header %d: missing "key"`, n))
	}
	r.hdrs = append(r.hdrs, h)
	return nil
}

// object is the state of reading one JSON object of a schema, member by
// member, with next: the one loop over the members of the line object and
// of each header object.
type object struct {
	sc    *schema
	names *nameSet // the unknown member names so far, to refuse one given twice
	hdr   int      // the header number of a header object; 0 for the line
	seen  uint16   // the known members read
	begun bool     // past the object's first member
}

// next reads the object (its '{' consumed) up to the value of its next
// known member and returns that member's bit, or 0 once past the object's
// '}'. Members the schema does not know are checked and skipped; a member
// given twice is a field error.
func (r *Reader) next(o *object) (uint16, error) {
	for {
		c, err := r.peek()
		if err != nil {
			return 0, err
		}
		switch {
		case c == '}':
			r.i++
			return 0, nil
		case !o.begun:
			o.begun = true
		case c == ',':
			r.i++ // a member must follow: no trailing comma
		default:
			return 0, r.syntax("',' or '}'")
		}
		bit, name, err := r.member(o.sc)
		if err != nil {
			return 0, err
		}
		if bit == 0 {
			if err := r.unknownField(name, o); err != nil {
				return 0, err
			}
			continue
		}
		if o.seen&bit != 0 {
			return 0, o.duplicate(nameOf(bit))
		}
		o.seen |= bit
		return bit, nil
	}
}

func (o *object) duplicate(name string) error {
	if o.hdr > 0 {
		return fieldError(fmt.Sprintf("header %d: duplicate field %q", o.hdr, name))
	}
	return fieldError(fmt.Sprintf("duplicate field %q", name))
}

// member reads the name of a member and the colon after it, leaving r.i at
// the value. It returns the field's bit, or 0 and the name for a member the
// schema does not know.
func (r *Reader) member(sc *schema) (bit uint16, name []byte, err error) {
	r.ws()
	// The name as a Writer spells it ("name", no escape) is matched in
	// place, without unquoting it.
	if s := r.b[r.i:]; len(s) > 1 && s[0] == '"' {
		for m := sc.first[s[1]]; m != 0; m &= m - 1 {
			name := sc.names[bits.TrailingZeros16(m)]
			if n := len(name) + 2; len(s) >= n && s[n-1] == '"' && string(s[1:n-1]) == name {
				r.i += n
				return m & -m, nil, r.colon()
			}
		}
	}
	if name, err = r.memberName(); err != nil {
		return 0, nil, err
	}
	return sc.lookup(name), name, nil
}

// unknownField skips the value of a member the schema does not name, after
// checking that the name is not repeated in its object.
func (r *Reader) unknownField(name []byte, o *object) error {
	if o.names.add(name) {
		return o.duplicate(string(name))
	}
	depth := 1 // inside the line object
	if o.hdr > 0 {
		depth = 3 // inside a header object, in the list, in the line
	}
	return r.skipValue(depth)
}

// nameSet holds the names of the unknown fields of one object, to find a
// name given twice. A few are compared in a list; many go to a map.
type nameSet struct {
	list [][]byte // list[:n] are in use; the rest are buffers to reuse
	n    int
	set  map[string]struct{}
}

const nameSetList = 16

func (s *nameSet) reset() {
	s.n = 0
	s.set = nil // rare; a large map is not kept for every later object
}

// add adds name and reports whether it was already there.
func (s *nameSet) add(name []byte) (dup bool) {
	if s.set != nil {
		if _, dup = s.set[string(name)]; !dup {
			s.set[string(name)] = struct{}{}
		}
		return dup
	}
	for _, k := range s.list[:s.n] {
		if string(k) == string(name) {
			return true
		}
	}
	if s.n == nameSetList {
		s.set = make(map[string]struct{}, 2*nameSetList)
		for _, k := range s.list {
			s.set[string(k)] = struct{}{}
		}
		s.set[string(name)] = struct{}{}
		return false
	}
	if s.n < len(s.list) {
		s.list[s.n] = append(s.list[s.n][:0], name...)
	} else {
		s.list = append(s.list, append([]byte(nil), name...))
	}
	s.n++
	return false
}

// stringValue reads a string value; anything else is a field error.
func (r *Reader) stringValue(w where) ([]byte, error) {
	if r.b[r.i] != '"' {
		return nil, r.wrongType(w, "a string")
	}
	s, _, err := r.scanString()
	return s, err
}

// base64Value reads a string of standard base64 and decodes it into r.data.
// The empty string gives an empty, non-nil slice.
func (r *Reader) base64Value(w where) ([]byte, error) {
	if r.b[r.i] != '"' {
		return nil, r.wrongType(w, "a base64 string or null")
	}
	// Fast path: a string of base64 alone holds nothing JSON escapes, so
	// when the bytes up to the next quote decode, that is the string. The
	// decoder skips CR, which a JSON string must not hold raw.
	if rest := r.b[r.i+1:]; len(rest) > 0 {
		if end := bytes.IndexByte(rest, '"'); end > 0 && bytes.IndexByte(rest[:end], '\r') < 0 {
			start := len(r.data)
			if d, err := b64.AppendDecode(r.data, rest[:end]); err == nil {
				r.data = d
				r.i += end + 2
				return d[start:len(d):len(d)], nil
			}
			// Let the slow path say what is wrong.
		}
	}
	s, escaped, err := r.scanString()
	if err != nil {
		return nil, err
	}
	if len(s) == 0 {
		return emptyBytes, nil
	}
	if escaped {
		// The decoder skips CR and LF; an escape could smuggle them in.
		for j, c := range s {
			if c == '\r' || c == '\n' {
				return nil, &causeError{class: ErrField, msg: fmt.Sprintf("%v: illegal base64 data at input byte %d", w, j)}
			}
		}
	}
	start := len(r.data)
	r.data, err = b64.AppendDecode(r.data, s)
	if err != nil {
		r.data = r.data[:start]
		return nil, &causeError{class: ErrField, msg: fmt.Sprintf("%v: %v", w, err), wrap: err}
	}
	end := len(r.data)
	return r.data[start:end:end], nil
}

// checkBase64 validates a base64 string value like base64Value, without
// decoding it: the alphabet, the length, the padding and its zero bits.
func (r *Reader) checkBase64(w where) error {
	if r.b[r.i] != '"' {
		return r.wrongType(w, "a base64 string or null")
	}
	if rest := r.b[r.i+1:]; len(rest) > 0 {
		if end := bytes.IndexByte(rest, '"'); end >= 0 && validBase64(rest[:end]) {
			r.i += end + 2
			return nil
		}
	}
	// Escapes, or an error to explain: the decoding path says what is wrong.
	mark := len(r.data)
	_, err := r.base64Value(w)
	r.data = r.data[:mark]
	return err
}

// base64Alphabet marks the bytes of standard base64, padding excluded.
var base64Alphabet = func() (t [256]bool) {
	for _, c := range []byte(b64chars) {
		t[c] = true
	}
	return t
}()

// validBase64 reports whether s is strict, padded standard base64 whose
// padding bits are zero: what base64.StdEncoding.Strict() decodes.
func validBase64(s []byte) bool {
	if len(s)%4 != 0 {
		return false
	}
	n := len(s)
	pad := 0
	if n > 0 && s[n-1] == '=' {
		pad = 1
		if s[n-2] == '=' {
			pad = 2
		}
	}
	if !base64Only(s[:n-pad]) {
		return false
	}
	if pad == 0 {
		return true
	}
	last := strings.IndexByte(b64chars, s[n-pad-1])
	if pad == 1 {
		return last&0x3 == 0
	}
	return last&0xf == 0
}

// base64Only reports whether every byte of s is of the base64 alphabet,
// eight bytes at a time: a byte c < 0x80 is in [lo, hi] when c+(0x80−lo)
// sets its high bit and c+(0x7f−hi) does not, and neither sum carries
// into the next byte.
func base64Only(s []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	in := func(x uint64, lo, hi byte) uint64 {
		return (x + ones*uint64(0x80-lo)) &^ (x + ones*uint64(0x7f-hi))
	}
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		if x&highs != 0 {
			return false
		}
		ok := in(x, 'A', 'Z') | in(x, 'a', 'z') | in(x, '0', '9') | in(x, '+', '+') | in(x, '/', '/')
		if ok&highs != highs {
			return false
		}
	}
	for _, c := range s[i:] {
		if !base64Alphabet[c] {
			return false
		}
	}
	return true
}

const b64chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// integer reads a JSON integer in [0, hi], or in [MinInt64, hi] when neg is
// true. want describes what is expected, for errors.
func (r *Reader) integer(w where, hi uint64, neg bool, want string) (int64, error) {
	b, i := r.b, r.i
	start := i
	minus := b[i] == '-'
	if minus {
		i++
		if i >= len(b) {
			r.i = i
			return 0, r.truncated()
		}
	}
	if c := b[i]; c < '0' || c > '9' {
		if minus {
			r.i = i
			return 0, r.syntax("a digit")
		}
		return 0, r.wrongType(w, want)
	}
	var v uint64
	over := false
	if b[i] == '0' {
		i++
	} else {
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			d := uint64(b[i] - '0')
			if v > (math.MaxUint64-d)/10 {
				over = true
			} else {
				v = v*10 + d
			}
		}
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		// A number, but not an integer.
		r.i = start
		if err := r.skipNumber(); err != nil {
			return 0, err
		}
		return 0, r.fieldErrorf(w, "want %s, got %s", want, describe(b[start:r.i]))
	}
	r.i = i
	switch {
	case !minus && !over && v <= hi:
		return int64(v), nil
	case minus && v == 0:
		return 0, nil // -0
	case minus && neg && !over && v <= 1<<63:
		return -int64(v), nil
	case minus && !neg:
		return 0, r.fieldErrorf(w, "want %s, got %s", want, describe(b[start:i]))
	}
	return 0, r.fieldErrorf(w, "want %s, got %s (out of range)", want, describe(b[start:i]))
}

// topic returns the interned topic name s, checking it on first sight.
func (r *Reader) topic(s []byte) (string, error) {
	if t, ok := r.topics[string(s)]; ok {
		return t, nil
	}
	if err := clock.CheckTopicName(s); err != nil {
		return "", &causeError{class: ErrField, msg: fmt.Sprintf("field \"topic\": %v", err)}
	}
	t := string(s)
	if len(r.topics) < maxInterned {
		r.topics[t] = t
	}
	return t, nil
}

// topicID parses the topic UUID s, remembering the spellings seen.
func (r *Reader) topicID(s []byte) (clock.TopicID, error) {
	if id, ok := r.topicIDs[string(s)]; ok {
		return id, nil
	}
	id, err := clock.ParseTopicID(string(s))
	if err == nil && id.IsZero() {
		err = fmt.Errorf("topic UUID %q: the zero UUID names no topic", s)
	}
	if err != nil {
		return clock.TopicID{}, &causeError{class: ErrField, msg: fmt.Sprintf("field \"topic_id\": %v", err), wrap: err}
	}
	if len(r.topicIDs) < maxInterned {
		r.topicIDs[string(s)] = id
	}
	return id, nil
}

// headerKey returns the interned header key s.
func (r *Reader) headerKey(s []byte) string {
	if k, ok := r.hkeys[string(s)]; ok {
		return k
	}
	k := string(s)
	if len(r.hkeys) < maxInterned {
		r.hkeys[k] = k
	}
	return k
}

// wrongType reports a value of the wrong kind at r.i, after checking that
// it is valid JSON, quoting it.
func (r *Reader) wrongType(w where, want string) error {
	start := r.i
	depth := 1 // a field of the line object
	switch {
	case w.hdr > 0 && w.field == "":
		depth = 2 // an element of the header list
	case w.hdr > 0:
		depth = 3 // a field of a header object
	}
	if err := r.skipValue(depth); err != nil {
		return err
	}
	return r.fieldErrorf(w, "want %s, got %s", want, describe(r.b[start:r.i]))
}

func (r *Reader) fieldErrorf(w where, format string, args ...any) error {
	return &causeError{class: ErrField, msg: w.String() + ": " + fmt.Sprintf(format, args...)}
}

func fieldError(msg string) error { return &causeError{class: ErrField, msg: msg} }
