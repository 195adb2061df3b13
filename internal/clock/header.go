package clock

// Header is one record header. A nil Value is a null value, which Kafka
// distinguishes from an empty one.
type Header struct {
	Key   string
	Value []byte
}

// FromHeaders selects and decodes the clock of a record from its header
// list. parsley.causes is preferred; without it a legacy parsley-clock header
// is read (autodetection by key); with neither the clock is empty, since a
// producer that stamps nothing claims nothing. A key present twice is
// CodeDuplicateHeader. It returns the key it decoded ("" when none).
func FromHeaders(hs []Header, opts ...DecodeOption) (Clock, string, error) {
	c, _, key, err := FromHeadersInto(nil, hs, opts...)
	return c, key, err
}

// FromHeadersInto is FromHeaders for hot loops: a parsley.causes clock is
// decoded into buf (see AppendDecode), which it returns for reuse, so the
// Clock aliases buf and is valid until buf is reused. A legacy clock is
// allocated as usual.
func FromHeadersInto(buf []Entry, hs []Header, opts ...DecodeOption) (Clock, []Entry, string, error) {
	causes, legacy := -1, -1
	nCauses, nLegacy := 0, 0
	for i, h := range hs {
		switch h.Key {
		case HeaderCauses:
			causes, nCauses = i, nCauses+1
		case HeaderLegacy:
			legacy, nLegacy = i, nLegacy+1
		}
	}
	switch {
	case nCauses > 1:
		return Clock{}, buf, HeaderCauses, fail(CodeDuplicateHeader, 0, "%d %s headers on one record", nCauses, HeaderCauses)
	case nCauses == 1:
		v := hs[causes].Value
		if buf == nil {
			c, err := Decode(v, opts...)
			return c, nil, HeaderCauses, err
		}
		if cfg := newDecodeConfig(opts); v != nil && cfg.maxSize > 0 && len(v) > cfg.maxSize {
			return Clock{}, buf, HeaderCauses, fail(CodeTooLarge, 0, "%d bytes exceed the budget of %d", len(v), cfg.maxSize)
		}
		es, err := AppendDecode(buf[:0], v)
		if err != nil {
			return Clock{}, buf, HeaderCauses, err
		}
		return FromSorted(es), es, HeaderCauses, nil
	case nLegacy > 1:
		return Clock{}, buf, HeaderLegacy, fail(CodeDuplicateHeader, 0, "%d %s headers on one record", nLegacy, HeaderLegacy)
	case nLegacy == 1:
		es, err := DecodeLegacy(hs[legacy].Value, opts...)
		if err != nil {
			return Clock{}, buf, HeaderLegacy, err
		}
		return FromLegacy(es), buf, HeaderLegacy, nil
	}
	return Clock{}, buf, "", nil
}
