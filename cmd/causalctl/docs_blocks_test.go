package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/testutil"
	"go.yaml.in/yaml/v3"
)

// The docs test's other half: every YAML and JSON block of README.md and
// docs/*.md is checked by kind (DEVELOPERS.md, "The docs test"). A
// Prometheus configuration goes through `promtool check config`, a rule
// file through `promtool check rules`, any other YAML must parse; a JSON
// block must parse (one document, or one per line), and a block whose info
// string names a schema (```json schema=version) is a command's output
// document: each of its documents must validate against
// docs/schemas/NAME.schema.json.

// block is one fenced code block of a page.
type block struct {
	source string // where it starts: "docs/sidecar.md:95"
	first  int    // the line number of its first line of text
	info   string // its info string: "yaml", "json schema=version"
	text   string
}

// lang is the block's language, the first word of its info string.
func (b block) lang() string { return strings.Fields(b.info + " x")[0] }

// attr is the value of a NAME=VALUE word of the info string.
func (b block) attr(name string) (string, bool) {
	for _, w := range strings.Fields(b.info)[min(1, len(strings.Fields(b.info))):] {
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// markdownBlocks: the fenced code blocks of a Markdown page.
func markdownBlocks(name, text string) []block {
	var out []block
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		info, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "```")
		if !ok {
			continue
		}
		start := i
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
		}
		out = append(out, block{
			source: fmt.Sprintf("%s:%d", name, start+1),
			first:  start + 2,
			info:   strings.TrimSpace(info),
			text:   strings.Join(lines[start+1:min(i, len(lines))], "\n") + "\n",
		})
	}
	return out
}

// yamlKind says what a YAML block is for Prometheus: "rules" (a rule file:
// groups), "config" (a prometheus.yml: scrape_configs, rule_files, global),
// or "" (any other YAML).
func yamlKind(doc map[string]any) string {
	if _, ok := doc["groups"]; ok {
		return "rules"
	}
	for _, k := range []string{"scrape_configs", "rule_files", "global", "alerting"} {
		if _, ok := doc[k]; ok {
			return "config"
		}
	}
	return ""
}

// errNoPromtool: a Prometheus block met without promtool to check it.
var errNoPromtool = errors.New("promtool is not installed")

// blockChecker checks blocks.
type blockChecker struct {
	schemas  *testutil.Schemas
	promtool string // its path; "" when it is not installed
	contrib  string // the checkout's contrib/, which configurations name rule files in
	tmp      func() string
}

// check returns what is wrong with b: nil when it is right or not of a
// kind checked here, errNoPromtool when only promtool could tell.
func (c *blockChecker) check(b block) error {
	schema, hasSchema := b.attr("schema")
	switch b.lang() {
	case "yaml", "yml":
		return c.checkYAML(b.text)
	case "json":
		if hasSchema {
			schema += ".schema.json"
			if !c.schemas.Has(schema) {
				return fmt.Errorf("no schema docs/schemas/%s", schema)
			}
		}
		return c.checkJSON(b.text, schema)
	}
	if hasSchema {
		return fmt.Errorf("schema=%s on a %q block: only JSON blocks have one", schema, b.lang())
	}
	return nil
}

func (c *blockChecker) checkYAML(text string) error {
	dec := yaml.NewDecoder(strings.NewReader(text))
	var kinds []string
	for {
		var doc any
		err := dec.Decode(&doc)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("not YAML: %w", err)
		}
		m, _ := doc.(map[string]any)
		kinds = append(kinds, yamlKind(m))
	}
	kind := ""
	if len(kinds) == 1 {
		kind = kinds[0]
	}
	if kind == "" {
		return nil
	}
	if c.promtool == "" {
		return errNoPromtool
	}
	dir := c.tmp()
	// A configuration names rule files relative to itself: beside it are
	// the checkout's contrib/ and its Prometheus rule files, under their
	// own names.
	if err := os.Symlink(c.contrib, filepath.Join(dir, "contrib")); err != nil {
		return err
	}
	rules, err := filepath.Glob(filepath.Join(c.contrib, "prometheus", "*.yaml"))
	if err != nil {
		return err
	}
	for _, r := range rules {
		if err := os.Symlink(r, filepath.Join(dir, filepath.Base(r))); err != nil {
			return err
		}
	}
	name, args := "prometheus.yml", []string{"check", "config"}
	if kind == "rules" {
		name, args = "block-rules.yaml", []string{"check", "rules"}
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(c.promtool, append(args, name)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("promtool %s %s: %v\n%s", strings.Join(args, " "), kind, err, bytes.TrimSpace(out))
	}
	return nil
}

func (c *blockChecker) checkJSON(text, schema string) error {
	dec := json.NewDecoder(strings.NewReader(text))
	for n := 1; ; n++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			if n == 1 {
				return errors.New("no JSON in the block")
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("document %d is not JSON: %w", n, err)
		}
		if schema == "" {
			continue
		}
		if errs := c.schemas.Validate(schema, string(raw)); len(errs) > 0 {
			return fmt.Errorf("document %d against docs/schemas/%s: %s", n, schema, strings.Join(errs, "; "))
		}
	}
}

func newBlockChecker(t *testing.T) *blockChecker {
	t.Helper()
	contrib, err := filepath.Abs("../../contrib")
	if err != nil {
		t.Fatal(err)
	}
	promtool, _ := exec.LookPath("promtool")
	return &blockChecker{
		schemas:  testutil.LoadSchemas(t, "../../docs/schemas"),
		promtool: promtool,
		contrib:  contrib,
		tmp:      t.TempDir,
	}
}

// docPages: README.md and docs/*.md, by their name in the checkout.
func docPages(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for _, f := range append(files, "../../README.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pages[strings.TrimPrefix(f, "../../")] = string(b)
	}
	return pages
}

// TestDocsBlocksValidate: every YAML and JSON block of README.md and
// docs/*.md validates as what it is.
func TestDocsBlocksValidate(t *testing.T) {
	c := newBlockChecker(t)
	counts := map[string]int{}
	for name, text := range docPages(t) {
		for _, b := range markdownBlocks(name, text) {
			lang := b.lang()
			if lang != "yaml" && lang != "yml" && lang != "json" {
				if err := c.check(b); err != nil {
					t.Errorf("%s: %v", b.source, err)
				}
				continue
			}
			counts[lang]++
			if _, ok := b.attr("schema"); ok {
				counts["schema"]++
			}
			err := c.check(b)
			if errors.Is(err, errNoPromtool) {
				if os.Getenv("CI") != "" {
					t.Errorf("%s: %v: .ci/run must install it", b.source, err)
				} else {
					t.Logf("%s: not checked: %v", b.source, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s (```%s):\n%v", b.source, b.info, err)
			}
		}
	}
	// The pages hold at least these; fewer means the extraction broke.
	if counts["yaml"] < 4 || counts["json"] < 8 || counts["schema"] < 4 {
		t.Errorf("found %v blocks: is the extraction broken?", counts)
	}
}

// TestDocsBlockChecker: the checker rejects broken blocks of every kind,
// so the test above can fail.
func TestDocsBlockChecker(t *testing.T) {
	c := newBlockChecker(t)
	good := []block{
		{info: "yaml", text: "a: 1\n---\nb: [2]\n"},
		{info: "json", text: `{"a":1}` + "\n" + `{"b":[2]}` + "\n"},
		{info: "json schema=version", text: `{"version":"v0.3.0","commit":null,"date":null,"go_version":"go1.26.8","os":"linux","arch":"amd64"}`},
		{info: "sh", text: "causalctl version\n"},
		{info: "yaml", text: "rule_files: [contrib/prometheus/parsley-alerts.yaml]\nscrape_configs:\n  - job_name: x\n    static_configs: [{targets: [\"h:9464\"]}]\n"},
		{info: "yaml", text: "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n"},
	}
	bad := map[string]block{
		"duplicate key (the README's rule_files twice)": {info: "yaml", text: "rule_files: [a.yaml]\nrule_files:\n  - b.yaml\n"},
		"not YAML":                            {info: "yaml", text: "a: [1\n"},
		"a config naming a missing rule file": {info: "yaml", text: "rule_files: [nowhere.yaml]\nscrape_configs: []\n"},
		"a config Prometheus refuses":         {info: "yaml", text: "scrape_configs:\n  - job_name: x\n    scrape_interval: often\n"},
		"a rule that does not parse":          {info: "yaml", text: "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up ==\n"},
		"not JSON":                            {info: "json", text: `{"channels":[…]}`},
		"a second line not JSON":              {info: "json", text: "{}\n{\"a\":}\n"},
		"an undocumented field":               {info: "json schema=version", text: `{"version":"v0.3.0","commit":null,"date":null,"go_version":"go1.26.8","os":"linux","arch":"amd64","extra":1}`},
		"a missing field":                     {info: "json schema=version", text: `{"version":"v0.3.0","commit":null,"date":null,"os":"linux","arch":"amd64"}`},
		"no such schema":                      {info: "json schema=nothing", text: `{}`},
		"a schema on a sh block":              {info: "sh schema=version", text: "causalctl version\n"},
	}
	for _, b := range good {
		if err := c.check(b); err != nil && !errors.Is(err, errNoPromtool) {
			t.Errorf("```%s %q: %v, want it valid", b.info, b.text, err)
		}
	}
	for name, b := range bad {
		err := c.check(b)
		if errors.Is(err, errNoPromtool) {
			if os.Getenv("CI") != "" {
				t.Errorf("%s: %v: .ci/run must install it", name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: ```%s %q passed", name, b.info, b.text)
		}
	}
	got := markdownBlocks("p.md", "text\n```json schema=version\n{}\n```\n\n```yaml\na: 1\n```\n")
	if len(got) != 2 || got[0].source != "p.md:2" || got[0].lang() != "json" || got[0].text != "{}\n" || got[1].source != "p.md:6" {
		t.Errorf("blocks %+v", got)
	}
	if s, ok := got[0].attr("schema"); !ok || s != "version" {
		t.Errorf("schema attribute %q %v", s, ok)
	}
}

// TestReadmeCapturesBeforeReplaying: the README's examples write a capture
// before they read one — the first line reading a capture file (-f
// NAME.ndjson) comes after the capture line that writes that file — and
// that capture line names its brokers, as its other broker lines do.
func TestReadmeCapturesBeforeReplaying(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	tree := docsTree()
	fileOf := func(line string) string {
		words := strings.Fields(stripComment(line))
		for i, w := range words[:len(words)-1] {
			if (w == "-f" || w == "--input") && strings.HasSuffix(words[i+1], ".ndjson") {
				return words[i+1]
			}
		}
		return ""
	}
	written := map[string]bool{}
	for _, ex := range markdownExamples("README.md", string(b)) {
		file := fileOf(ex.line)
		if file == "" {
			continue
		}
		if path := commandPath(tree, ex.line); len(path) > 0 && path[0] == "capture" {
			if !strings.Contains(ex.line, "--brokers") {
				t.Errorf("%s: the capture example names no brokers: %s", ex.sources[0], ex.line)
			}
			written[file] = true
			continue
		}
		if !written[file] {
			t.Errorf("%s reads %s before any example captures it: %s", ex.sources[0], file, ex.line)
		}
	}
	if len(written) == 0 {
		t.Error("the README has no capture example")
	}
}
