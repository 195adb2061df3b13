package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The nested objects of a line (log facts, the stopped line) are decoded
// member by member rather than by encoding/json's Unmarshal, which matches
// names without regard to case, keeps the last of a name given twice and
// leaves a missing field at zero: each of those would read a line other
// than the one written.

// memberFunc decodes the value of one member of an object.
type memberFunc func(raw json.RawMessage) error

// members decodes the JSON object raw: each name in known is handed its
// value, other names are skipped (fields a later writer may add), and a
// name given twice, known or not, is an error. It returns the known names
// present; a null value counts as absent.
func members(raw []byte, known map[string]memberFunc) (map[string]bool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want an object, got %s", describe(raw))
	}
	seen := map[string]bool{}
	present := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := tok.(string) // object keys are strings
		if seen[name] {
			return nil, fmt.Errorf("duplicate field %q", name)
		}
		seen[name] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		dec, ok := known[name]
		if !ok || string(v) == "null" {
			continue
		}
		if err := dec(v); err != nil {
			return nil, fmt.Errorf("%q: %w", name, err)
		}
		present[name] = true
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the object")
	}
	return present, nil
}

// require reports the first of names that present lacks.
func require(present map[string]bool, names ...string) error {
	for _, n := range names {
		if !present[n] {
			return fmt.Errorf("missing %q", n)
		}
	}
	return nil
}

// intInto decodes a JSON integer (not 1.5, 1e3 or "1") into *dst, within
// [lo, hi].
func intInto[T int16 | int32 | int64](dst *T, lo, hi int64) memberFunc {
	return func(raw json.RawMessage) error {
		var v int64
		if err := json.Unmarshal(raw, &v); err != nil || bytes.ContainsAny(raw, ".eE") {
			return fmt.Errorf("want an integer, got %s", describe(raw))
		}
		if v < lo || v > hi {
			return fmt.Errorf("%d out of range %d…%d", v, lo, hi)
		}
		*dst = T(v)
		return nil
	}
}

// stringInto decodes a JSON string into *dst.
func stringInto(dst *string) memberFunc {
	return func(raw json.RawMessage) error {
		if len(raw) == 0 || raw[0] != '"' {
			return fmt.Errorf("want a string, got %s", describe(raw))
		}
		return json.Unmarshal(raw, dst)
	}
}

// listOf decodes a JSON list, handing each element to each.
func listOf(each func(i int, raw json.RawMessage) error) memberFunc {
	return func(raw json.RawMessage) error {
		if len(raw) == 0 || raw[0] != '[' {
			return fmt.Errorf("want a list, got %s", describe(raw))
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return err
		}
		for i, e := range elems {
			if err := each(i, e); err != nil {
				return err
			}
		}
		return nil
	}
}
