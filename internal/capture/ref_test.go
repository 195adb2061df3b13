package capture

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/causalctl/causalctl/internal/clock"
)

// refRead is the slow reference reader the fuzz test holds Reader to. It
// applies the rules of the package documentation with encoding/json and
// plain checks, line by line, and shares no code with the scanner. It
// returns the items read and, if a line is refused, that line's number and
// the reason (0 and nil when the whole input is accepted).
func refRead(data []byte, maxLine int) (items []Item, errLine int64, cause error) {
	var line int64
	for len(data) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		if len(l) > maxLine {
			return items, line, errors.New("too long")
		}
		it, blank, err := refLine(l)
		if err != nil {
			return items, line, err
		}
		if blank {
			continue
		}
		it.Line = line
		items = append(items, it)
	}
	return items, 0, nil
}

var refTopicName = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

func refLine(l []byte) (it Item, blank bool, err error) {
	if len(bytes.Trim(l, " \t\r")) == 0 {
		return it, true, nil
	}
	if !utf8.Valid(l) {
		return it, false, errors.New("not UTF-8")
	}
	if !json.Valid(l) {
		return it, false, errors.New("not JSON")
	}
	fields, err := refObject(l)
	if err != nil {
		return it, false, err
	}
	get := func(name string) (json.RawMessage, bool) {
		raw, ok := fields[name]
		if ok && string(raw) == "null" {
			return nil, false
		}
		return raw, ok
	}
	for _, required := range []string{"partition", "offset", "position"} {
		if raw, ok := fields[required]; ok && string(raw) == "null" {
			return it, false, fmt.Errorf("%s is null", required)
		}
	}
	if raw, ok := get("topic"); ok {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return it, false, err
		}
		if !refTopicName.MatchString(s) || s == "." || s == ".." {
			return it, false, fmt.Errorf("topic %q", s)
		}
		it.Topic = s
	}
	if raw, ok := get("topic_id"); ok {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return it, false, err
		}
		if it.TopicID, err = clock.ParseTopicID(s); err != nil {
			return it, false, err
		}
		if it.TopicID.IsZero() {
			return it, false, errors.New("zero topic_id")
		}
	}
	p, hasP, err := refInt(fields, "partition", 0, math.MaxInt32)
	if err != nil {
		return it, false, err
	}
	it.Partition = int32(p)
	off, hasOff, err := refInt(fields, "offset", 0, math.MaxInt64)
	if err != nil {
		return it, false, err
	}
	pos, hasPos, err := refInt(fields, "position", 0, math.MaxInt64)
	if err != nil {
		return it, false, err
	}
	ts, hasTS, err := refInt(fields, "timestamp", math.MinInt64, math.MaxInt64)
	if err != nil {
		return it, false, err
	}
	var hdrs []clock.Header
	rawH, hasH := get("headers")
	if hasH {
		if rawH[0] != '[' {
			return it, false, errors.New("headers not a list")
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(rawH, &elems); err != nil {
			return it, false, err
		}
		for _, e := range elems {
			if e[0] != '{' {
				return it, false, errors.New("header not an object")
			}
			hf, err := refObject(e)
			if err != nil {
				return it, false, err
			}
			rawK, ok := hf["key"]
			if !ok {
				return it, false, errors.New("header without key")
			}
			var k string
			if rawK[0] != '"' {
				return it, false, errors.New("header key not a string")
			}
			if err := json.Unmarshal(rawK, &k); err != nil {
				return it, false, err
			}
			v, err := refBase64(hf["value"])
			if err != nil {
				return it, false, err
			}
			hdrs = append(hdrs, clock.Header{Key: k, Value: v})
		}
	}
	key, err := refBase64(fields["key"])
	if err != nil {
		return it, false, err
	}
	val, err := refBase64(fields["value"])
	if err != nil {
		return it, false, err
	}
	_, hasK := get("key")
	_, hasV := get("value")

	switch {
	case hasOff && hasPos, !hasOff && !hasPos, !hasP:
		return it, false, errors.New("offset/position/partition")
	case it.Topic == "" && it.TopicID.IsZero():
		return it, false, errors.New("no topic")
	case hasPos && (hasTS || hasH || hasK || hasV):
		return it, false, errors.New("record field on a position")
	}
	if hasPos {
		it.Kind, it.Offset = KindPosition, pos
		return it, false, nil
	}
	it.Kind, it.Offset = KindRecord, off
	it.Timestamp, it.HasTimestamp = ts, hasTS
	it.Headers, it.Key, it.Value = hdrs, key, val
	return it, false, nil
}

// refObject splits a JSON object (known valid) into its fields, refusing a
// name given twice and any value but an object.
func refObject(l []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(l))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	fields := make(map[string]json.RawMessage)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := tok.(string)
		if _, dup := fields[name]; dup {
			return nil, fmt.Errorf("duplicate %q", name)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		fields[name] = raw
	}
	return fields, nil
}

// refInt reads an optional integer field in [lo, hi]; null is absent.
func refInt(fields map[string]json.RawMessage, name string, lo, hi int64) (int64, bool, error) {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		return 0, false, nil
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, false, fmt.Errorf("%s not a number", name)
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return 0, false, err
	}
	if strings.ContainsAny(string(n), ".eE") {
		return 0, false, fmt.Errorf("%s not an integer", name)
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, false, err
	}
	if v < lo || v > hi {
		return 0, false, fmt.Errorf("%s out of range", name)
	}
	return v, true, nil
}

// refBase64 reads an optional base64 string; absent and null are nil, the
// empty string is empty but not nil.
func refBase64(raw json.RawMessage) ([]byte, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '"' {
		return nil, errors.New("not a string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if strings.ContainsAny(s, "\r\n") {
		return nil, errors.New("CR or LF in base64")
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
