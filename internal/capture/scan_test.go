package capture

import (
	"fmt"
	"strings"
	"testing"
)

// TestFieldTable: each field's bit is 1 << its index, names are unique,
// and both schemas find every field they hold by its plain and its
// escaped spelling, and nothing else.
func TestFieldTable(t *testing.T) {
	seen := map[string]bool{}
	for i, f := range fields {
		if f.bit != 1<<i || seen[f.name] || nameOf(f.bit) != f.name {
			t.Errorf("fields[%d] = %+v", i, f)
		}
		seen[f.name] = true
	}
	for _, tc := range []struct {
		sc   *schema
		mask uint16
	}{{lineSchema, 1<<len(fields) - 1}, {headerSchema, fKey | fValue}} {
		for _, f := range fields {
			want := f.bit & tc.mask
			if got := member(t, tc.sc, `"`+f.name+`": 1`); got != want {
				t.Errorf("quoted %s: %b, want %b", f.name, got, want)
			}
			if got := tc.sc.lookup([]byte(f.name)); got != want {
				t.Errorf("lookup %s: %b, want %b", f.name, got, want)
			}
			// A prefix or an extension of a name is another name.
			if got := member(t, tc.sc, `"`+f.name+`x": 1`); got != 0 {
				t.Errorf("quoted %sx: %b", f.name, got)
			}
			if got := tc.sc.lookup([]byte(f.name[:len(f.name)-1])); got != 0 {
				t.Errorf("lookup of a prefix of %s: %b", f.name, got)
			}
		}
	}
}

// member reads the member name at the start of text with sc, the way the
// scanner does, and returns its bit.
func member(t *testing.T, sc *schema, text string) uint16 {
	t.Helper()
	r := &Reader{b: []byte(text)}
	bit, _, err := r.member(sc)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return bit
}

// escape spells name with its first letter as a \u escape.
func escape(name string) string { return fmt.Sprintf(`\u%04x`, name[0]) + name[1:] }

// TestEscapedFieldNames: a field name written with escapes is the same
// field, on the line and in a header — a duplicate when given twice.
func TestEscapedFieldNames(t *testing.T) {
	line := `{"` + escape("topic") + `":"a","` + escape("partition") + `":1,"` + escape("offset") + `":5,"` + escape("timestamp") + `":7,` +
		`"` + escape("headers") + `":[{"` + escape("key") + `":"k","` + escape("value") + `":"AQ=="}],"` + escape("value") + `":"AA=="}` + "\n"
	r := NewReader(strings.NewReader(line))
	it, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if it.Topic != "a" || it.Partition != 1 || it.Offset != 5 || it.Timestamp != 7 || len(it.Headers) != 1 ||
		it.Headers[0].Key != "k" || string(it.Headers[0].Value) != "\x01" || string(it.Value) != "\x00" {
		t.Errorf("item %+v", it)
	}
	// log_facts too (its value is then the facts decoder's to judge).
	facts := `{"topic":"a","partition":0,"` + escape("log_facts") + `":{}}` + "\n"
	it, err = NewReader(strings.NewReader(facts)).Next()
	if !(err == nil && it.Kind == KindLogFacts) && (err == nil || !strings.Contains(err.Error(), `field "log_facts"`)) {
		t.Errorf("escaped log_facts: %+v %v", it, err)
	}
	for _, dup := range []string{
		`{"topic":"a","` + escape("topic") + `":"b","partition":0,"offset":0}`,
		`{"topic":"a","partition":0,"offset":0,"headers":[{"key":"k","` + escape("key") + `":"j"}]}`,
	} {
		_, err := NewReader(strings.NewReader(dup + "\n")).Next()
		if err == nil || !strings.Contains(err.Error(), "duplicate field") {
			t.Errorf("%s: %v, want a duplicate field", dup, err)
		}
	}
}
