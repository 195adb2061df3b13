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
		return Clock{}, HeaderCauses, fail(CodeDuplicateHeader, 0, "%d %s headers on one record", nCauses, HeaderCauses)
	case nCauses == 1:
		c, err := Decode(hs[causes].Value, opts...)
		return c, HeaderCauses, err
	case nLegacy > 1:
		return Clock{}, HeaderLegacy, fail(CodeDuplicateHeader, 0, "%d %s headers on one record", nLegacy, HeaderLegacy)
	case nLegacy == 1:
		es, err := DecodeLegacy(hs[legacy].Value, opts...)
		if err != nil {
			return Clock{}, HeaderLegacy, err
		}
		return FromLegacy(es), HeaderLegacy, nil
	}
	return Clock{}, "", nil
}
