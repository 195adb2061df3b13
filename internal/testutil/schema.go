package testutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Schemas holds the JSON Schemas of a directory (docs/schemas) by file name
// and validates values against the subset of JSON Schema 2020-12 the files
// use: type, enum, const, properties, required, additionalProperties,
// items, minimum, pattern, oneOf and $ref (to "#/$defs/…" and to another
// file of the set).
type Schemas struct {
	tb    testing.TB
	files map[string]map[string]any
}

// LoadSchemas reads every *.schema.json of dir.
func LoadSchemas(tb testing.TB, dir string) *Schemas {
	tb.Helper()
	s := &Schemas{tb: tb, files: map[string]map[string]any{}}
	paths, err := filepath.Glob(filepath.Join(dir, "*.schema.json"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no schemas in %s: %v", dir, err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		s.files[filepath.Base(p)] = doc
	}
	return s
}

// Has says whether the set holds the schema file name.
func (s *Schemas) Has(name string) bool { return s.files[name] != nil }

// Validate checks the JSON text doc against the schema file name and
// returns every violation.
func (s *Schemas) Validate(name, doc string) []string {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []string{fmt.Sprintf("not JSON: %v", err)}
	}
	var errs []string
	s.check(name, s.files[name], v, "$", &errs)
	return errs
}

// Resolve finds the schema node ref points at, from the schema file file,
// and the file it is in.
func (s *Schemas) Resolve(file, ref string) (string, map[string]any) {
	target, frag, _ := strings.Cut(ref, "#")
	if target != "" {
		file = target
	}
	node := s.files[file]
	if node == nil {
		s.tb.Fatalf("$ref %q: no schema file %s", ref, file)
	}
	for _, part := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if part == "" {
			continue
		}
		next, ok := node[part].(map[string]any)
		if !ok {
			s.tb.Fatalf("$ref %q: nothing at %q", ref, part)
		}
		node = next
	}
	return file, node
}

func (s *Schemas) check(file string, sch map[string]any, v any, path string, errs *[]string) {
	fail := func(format string, args ...any) {
		*errs = append(*errs, path+": "+fmt.Sprintf(format, args...))
	}
	if ref, ok := sch["$ref"].(string); ok {
		f, target := s.Resolve(file, ref)
		s.check(f, target, v, path, errs)
	}
	if types, ok := sch["type"]; ok && !typeMatches(types, v) {
		fail("%s is not of type %v", short(v), types)
		return
	}
	if c, ok := sch["const"]; ok && !equalJSON(c, v) {
		fail("%s, want %v", short(v), c)
	}
	if enum, ok := sch["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return equalJSON(e, v) }) {
		fail("%s is not one of %v", short(v), enum)
	}
	if min, ok := sch["minimum"].(float64); ok {
		if n, isNum := v.(json.Number); isNum {
			if f, _ := n.Float64(); f < min {
				fail("%s is below the minimum %v", n, min)
			}
		}
	}
	if pat, ok := sch["pattern"].(string); ok {
		if str, isStr := v.(string); isStr && !regexp.MustCompile(pat).MatchString(str) {
			fail("%q does not match %s", str, pat)
		}
	}
	if alts, ok := sch["oneOf"].([]any); ok {
		matched := 0
		var why []string
		for i, alt := range alts {
			var sub []string
			s.check(file, alt.(map[string]any), v, path, &sub)
			if len(sub) == 0 {
				matched++
			} else {
				why = append(why, fmt.Sprintf("#%d: %s", i, strings.Join(sub, "; ")))
			}
		}
		if matched != 1 {
			fail("matches %d of the oneOf alternatives, want 1 (%s)", matched, strings.Join(why, " | "))
		}
	}
	switch val := v.(type) {
	case map[string]any:
		props, _ := sch["properties"].(map[string]any)
		for _, r := range AsStrings(sch["required"]) {
			if _, ok := val[r]; !ok {
				fail("missing required property %q", r)
			}
		}
		for k, pv := range val {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if ap, set := sch["additionalProperties"].(bool); set && !ap {
					fail("property %q is not documented in the schema", k)
				}
				continue
			}
			s.check(file, ps, pv, path+"."+k, errs)
		}
	case []any:
		if items, ok := sch["items"].(map[string]any); ok {
			for i, it := range val {
				s.check(file, items, it, fmt.Sprintf("%s[%d]", path, i), errs)
			}
		}
	}
}

func typeMatches(types any, v any) bool {
	var names []string
	switch t := types.(type) {
	case string:
		names = []string{t}
	default:
		names = AsStrings(t)
	}
	for _, n := range names {
		switch x := v.(type) {
		case nil:
			if n == "null" {
				return true
			}
		case bool:
			if n == "boolean" {
				return true
			}
		case string:
			if n == "string" {
				return true
			}
		case json.Number:
			if n == "number" || n == "integer" && !strings.ContainsAny(x.String(), ".eE") {
				return true
			}
		case []any:
			if n == "array" {
				return true
			}
		case map[string]any:
			if n == "object" {
				return true
			}
		}
	}
	return false
}

// AsStrings gives the strings of a JSON array (a schema's enum, required).
func AsStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}
