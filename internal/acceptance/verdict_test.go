package acceptance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneVerdictPerInput: every command that reads a capture gives the
// same input the same verdict — an empty capture, offsets going backwards
// on a channel, a second log-facts line for a channel and incomplete log
// facts are refused (exit 1) by replay, holds, check and decode alike,
// naming the file and, for a bad line, the line.
func TestOneVerdictPerInput(t *testing.T) {
	const id = "00000000-0000-0000-0000-00000000000a"
	line := func(rest string) string {
		return `{"topic":"orders","topic_id":"` + id + `","partition":0,` + rest + "}\n"
	}
	facts := line(`"log_facts":{"log_start":0,"last_stable":9,"high_watermark":9}`)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, msg string
	}{
		{"empty", "", "holds no records or positions: an empty capture is an error"},
		{"blank lines only", "\n  \n", "holds no records or positions: an empty capture is an error"},
		{"offsets backwards", line(`"position":0`) + line(`"offset":5`) + line(`"offset":3`),
			"line 3: orders/0 offset 3: offset 3 after offset 5 (line 2): a channel's offsets must not decrease"},
		{"position backwards", line(`"offset":5`) + line(`"position":2`), "line 2: orders/0 offset 2: offset 2 after offset 5 (line 1)"},
		{"two log-facts lines", facts + line(`"position":0`) + facts, "line 3: orders/0: a second log-facts line for the channel (the first is line 1)"},
		{"log facts missing a field", line(`"log_facts":{"log_start":0,"last_stable":9}`) + line(`"position":0`),
			`line 1: field "log_facts": missing "high_watermark"`},
		{"log facts with a key twice", line(`"log_facts":{"log_start":0,"log_start":4,"high_watermark":9}`),
			`line 1: field "log_facts": duplicate field "log_start"`},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".ndjson")
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"replay", "holds", "check", "decode"} {
			code, _, stderr := run(t, false, "", cmd, "-f", path)
			if code != 1 || !strings.Contains(stderr, path+": "+tc.msg) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("%s, %s: exit %d, stderr %q; want 1 and one line %q", tc.name, cmd, code, stderr, tc.msg)
			}
		}
	}
}

// TestPartialCaptureWarns: a capture ending in a stopped line (capture
// interrupted or failing) is read, and every command says on stderr that
// the range is partial, naming the file, where it stopped and why —
// escaped, since the reason is the file's.
func TestPartialCaptureWarns(t *testing.T) {
	const id = "00000000-0000-0000-0000-00000000000a"
	content := `{"topic":"orders","topic_id":"` + id + `","partition":0,"position":0}` + "\n" +
		`{"topic":"orders","topic_id":"` + id + `","partition":0,"offset":0,"headers":[]}` + "\n" +
		`{"stopped":{"reason":"interrupted\u001b[2J","records":1,"channels":[{"topic":"orders","topic_id":"` + id + `","partition":0,"reached":1,"end":5}]}}` + "\n"
	path := filepath.Join(t.TempDir(), "partial.ndjson")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "warning: " + path + `: the range is partial: the capture stopped (interrupted\x1b[2J) at line 3 after 1 record; unfinished: orders/0 at 1 of 5` + "\n"
	for _, cmd := range []string{"replay", "holds", "check", "decode"} {
		code, _, stderr := run(t, false, "", cmd, "-f", path)
		if code != 0 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want 0 and %q", cmd, code, stderr, want)
		}
	}
	// A line after the stopped line is refused: the stopped line ends the file.
	os.WriteFile(path, []byte(content+`{"topic":"orders","topic_id":"`+id+`","partition":0,"position":5}`+"\n"), 0o644)
	if code, _, stderr := run(t, false, "", "replay", "-f", path); code != 1 || !strings.Contains(stderr, "line 4: a line after the stopped line (line 3)") {
		t.Errorf("a line after the stopped line: exit %d, %q", code, stderr)
	}
}

// TestLogFactsWarnings: what a broker can really report but a diagnosis
// should not take on trust is warned about, with the line, and read.
func TestLogFactsWarnings(t *testing.T) {
	const id = "00000000-0000-0000-0000-00000000000a"
	line := func(rest string) string {
		return `{"topic":"orders","topic_id":"` + id + `","partition":0,` + rest + "}\n"
	}
	dir := t.TempDir()
	for _, tc := range []struct{ name, content, warning string }{
		{"record past the high watermark", line(`"log_facts":{"log_start":0,"high_watermark":2}`) + line(`"position":0`) + line(`"offset":2`),
			"line 3: orders/0: offset 2 is past the high watermark 2 of the log facts at line 1"},
		{"unknown cleanup policy", line(`"log_facts":{"log_start":0,"high_watermark":2,"retention":{"ms":-1,"bytes":-1,"cleanup_policy":"tiered\u001b[31m"}}`) + line(`"position":0`),
			`line 1: orders/0: cleanup policy "tiered\x1b[31m" is none Kafka knows`},
		{"negative retention.bytes", line(`"log_facts":{"log_start":0,"high_watermark":2,"retention":{"ms":-1,"bytes":-7,"cleanup_policy":"delete"}}`) + line(`"position":0`),
			"line 1: orders/0: retention.bytes -7, read as no limit (-1)"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".ndjson")
		os.WriteFile(path, []byte(tc.content), 0o644)
		for _, cmd := range []string{"replay", "holds", "check", "decode"} {
			code, _, stderr := run(t, false, "", cmd, "-f", path)
			if code != 0 || !strings.Contains(stderr, "warning: "+path+": "+tc.warning) || strings.Contains(stderr, "\x1b") {
				t.Errorf("%s, %s: exit %d, stderr %q; want 0 and the warning %q", tc.name, cmd, code, stderr, tc.warning)
			}
		}
	}
}
