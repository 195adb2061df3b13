package acceptance

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/cli/root"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// run executes causalctl in-process and returns its exit code and streams.
func run(t *testing.T, tty bool, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	ios.SetTTY(tty)
	in.WriteString(stdin)
	f := cmdutiltest.Factory(ios, "")
	f.Version = "v1.2.3-test"
	code = cli.Run(context.Background(), f, args)
	return code, out.String(), errOut.String()
}

const (
	golden   = "01020102030405060708090a0b0c0d0e0f1002020000000000000029050000000000000007f102030405060708090a0b0c0d0e0f1001000000000000000009"
	ordersID = "orders=01020304-0506-0708-090a-0b0c0d0e0f10"
)

func TestDecodeEncodeCommands(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tty    bool
		stdin  string
		args   []string
		code   int
		stdout string // exact, or a substring with substr
		substr bool
		stderr string // substring
	}{
		{name: "pipe text is the clock text form", args: []string{"decode", "--hex", golden, "--topic-id", ordersID},
			stdout: "orders/2=41,orders/5=7,f1020304-0506-0708-090a-0b0c0d0e0f10/0=9\n"},
		{name: "empty clock", args: []string{"decode", "--hex", "0100"}, stdout: "{}\n"},
		{name: "tty text is a table", tty: true, args: []string{"decode", "--hex", golden, "--topic-id", ordersID},
			stdout: "parsley.causes, 63 bytes, 3 entries", substr: true},
		{name: "tty table names channels", tty: true, args: []string{"decode", "--hex", golden, "--topic-id", ordersID},
			stdout: "orders  01020304-0506-0708-090a-0b0c0d0e0f10          5         7\n", substr: true},
		{name: "tty empty clock", tty: true, args: []string{"decode", "--hex", "0100"}, stdout: "parsley.causes, 2 bytes, 0 entries\n{} (the empty clock: it claims nothing)\n"},
		{name: "json", args: []string{"decode", "--hex", golden, "--topic-id", ordersID, "-o", "json"},
			stdout: `{"format":"parsley.causes","size":63,"entries":[{"topic_id":"01020304-0506-0708-090a-0b0c0d0e0f10","topic":"orders","partition":2,"position":41},{"topic_id":"01020304-0506-0708-090a-0b0c0d0e0f10","topic":"orders","partition":5,"position":7},{"topic_id":"f1020304-0506-0708-090a-0b0c0d0e0f10","partition":0,"position":9}]}` + "\n"},
		{name: "base64", args: []string{"decode", "--base64", "AQA="}, stdout: "{}\n"},
		{name: "raw stdin", stdin: "\x01\x00", args: []string{"decode"}, stdout: "{}\n"},
		{name: "legacy layout", args: []string{"decode", "--header-format", "clock", "--hex", "0100000001" + "0102030405060708090a0b0c0d0e0f10" + "00000003" + "0000000000000009", "-o", "json"},
			stdout: `{"format":"parsley-clock","size":33,"entries":[{"topic_id":"01020304-0506-0708-090a-0b0c0d0e0f10","partition":3,"position":9}]}` + "\n"},
		{name: "undecodable exits 1 with the code", args: []string{"decode", "--hex", "01ac"}, code: 1,
			stderr: "causalctl: undecodable parsley.causes value (2 bytes): truncated: "},
		{name: "undecodable stdin", stdin: "\x02\x00", args: []string{"decode"}, code: 1, stderr: "unknown-version"},
		{name: "empty stdin is truncated", args: []string{"decode"}, code: 1, stderr: "truncated"},
		{name: "too large for the budget", args: []string{"decode", "--hex", "0100", "--max-header-size", "1"}, code: 1, stderr: "too-large"},
		{name: "stdin too large is not buffered whole", stdin: strings.Repeat("x", 100), args: []string{"decode", "--max-header-size", "10"}, code: 1, stderr: "too-large: 11 bytes exceed the budget of 10"},
		{name: "terminal stdin without a value", tty: true, args: []string{"decode"}, code: 2, stderr: "no value"},
		{name: "bad hex is usage", args: []string{"decode", "--hex", "0g"}, code: 2, stderr: "--hex"},
		{name: "both inputs", args: []string{"decode", "--hex", "0100", "--base64", "AQA="}, code: 2, stderr: "one of"},
		{name: "bad output", args: []string{"decode", "--hex", "0100", "-o", "ndjson"}, code: 2, stderr: "Run 'causalctl decode --help' for usage."},
		{name: "bad topic-id", args: []string{"decode", "--hex", "0100", "--topic-id", "orders"}, code: 2, stderr: "NAME=UUID"},
		{name: "unknown flag", args: []string{"decode", "--nope"}, code: 2, stderr: "unknown flag: --nope"},
		{name: "unknown command", args: []string{"nope"}, code: 2, stderr: "unknown command"},
		{name: "records of a capture", args: []string{"decode", "-f", faultsCapture}, code: 1,
			stdout: "a/0@0\t1970-01-01T00:00:00.005Z\tb/0=0\n", substr: true,
			stderr: "undecodable headers: 1 of 6 records, the first at line 4: c/0 offset 1: unknown-version"},
		{name: "records show the reason", args: []string{"decode", "-f", faultsCapture}, code: 1,
			stdout: "c/0@1\t1970-01-01T00:00:00.002Z\tUNDECODABLE unknown-version: version 2, want 1\n", substr: true, stderr: "undecodable"},
		{name: "records as json", args: []string{"decode", "-f", basicCapture, "-o", "json"},
			stdout: `{"channel":"payments/0","offset":0,"timestamp":1001,"line":3,"format":"parsley.causes","size":28,"entries":[{"topic_id":"00000000-0000-0000-0000-00000000000a","topic":"orders","partition":0,"position":1}]}` + "\n", substr: true},
		{name: "records from stdin", stdin: `{"topic_id":"01020304-0506-0708-090a-0b0c0d0e0f10","partition":1,"offset":7,"headers":[{"key":"parsley.causes","value":"AQA="}]}` + "\n",
			args: []string{"decode", "-f", "-", "--topic-id", ordersID}, stdout: "orders/1@7\t-\t{}\n"},
		{name: "records, bad line", stdin: "{}\n", args: []string{"decode", "-f", "-"}, code: 1, stderr: "stdin: line 1: "},
		{name: "input and hex", args: []string{"decode", "-f", "x", "--hex", "00"}, code: 2, stderr: "one of"},
		{name: "version", args: []string{"--version"}, stdout: "causalctl version v1.2.3-test\ncommit:     unknown\n", substr: true},
		{name: "version command", args: []string{"version"}, stdout: "causalctl version v1.2.3-test\n", substr: true},

		{name: "encode hex", args: []string{"encode", "orders/5=7,orders/2=41,f1020304-0506-0708-090a-0b0c0d0e0f10/0=9", "--topic-id", ordersID},
			stdout: golden + "\n"},
		{name: "encode base64", args: []string{"encode", "{}", "-o", "base64"}, stdout: "AQA=\n"},
		{name: "encode raw to a pipe", args: []string{"encode", "{}", "-o", "raw"}, stdout: "\x01\x00"},
		{name: "encode raw to a terminal", tty: true, args: []string{"encode", "{}", "-o", "raw"}, code: 2, stderr: "terminal"},
		{name: "encode legacy", args: []string{"encode", "--header-format", "clock", "01020304-0506-0708-090a-0b0c0d0e0f10/3=9"},
			stdout: "0100000001" + "0102030405060708090a0b0c0d0e0f10" + "00000003" + "0000000000000009\n"},
		{name: "encode unknown name", args: []string{"encode", "orders/0=1"}, code: 2, stderr: `unknown topic "orders"`},
		{name: "encode needs a clock", args: []string{"encode"}, code: 2, stderr: "accepts 1 arg"},
		{name: "encode bad output", args: []string{"encode", "{}", "-o", "json"}, code: 2, stderr: "hex, base64, raw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.tty, tc.stdin, tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if tc.substr {
				if !strings.Contains(stdout, tc.stdout) {
					t.Errorf("stdout %q lacks %q", stdout, tc.stdout)
				}
			} else if stdout != tc.stdout {
				t.Errorf("stdout\n got %q\nwant %q", stdout, tc.stdout)
			}
			if tc.stderr == "" && stderr != "" {
				t.Errorf("unexpected stderr %q", stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tc.stderr)
			}
			if tc.code != 0 && strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
				t.Errorf("error is more than a cause and a hint: %q", stderr)
			}
		})
	}
}

// TestRoundTrip: decode's pipe output is encode's input, and back to bytes.
func TestRoundTrip(t *testing.T) {
	for _, v := range []string{"0100", golden, "01010000000000000001000000000000000101ac020000000000000007"} {
		_, text, stderr := run(t, false, "", "decode", "--hex", v)
		code, hexOut, stderr2 := run(t, false, "", "encode", strings.TrimSpace(text))
		if code != 0 || strings.TrimSpace(hexOut) != v {
			t.Errorf("%s → %q → %q (%s%s)", v, text, hexOut, stderr, stderr2)
		}
	}
	// And through JSON: entries in wire order.
	_, js, _ := run(t, false, "", "decode", "--hex", golden, "-o", "json")
	var got struct {
		Entries []struct{ Partition int32 }
	}
	if err := json.NewDecoder(bytes.NewBufferString(js)).Decode(&got); err != nil || len(got.Entries) != 3 || got.Entries[1].Partition != 5 {
		t.Errorf("json entries %+v (%v)", got, err)
	}
}

// TestGenDocs: every command gets a man page and a Markdown page from its
// own help — each page names every flag of its command, and holds' man
// page gives each its usage text — and the completion scripts are written
// beside them.
func TestGenDocs(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "md")
	if code, _, stderr := run(t, false, "", "gen-docs", "--dir", dir, "--markdown", md); code != 0 {
		t.Fatalf("gen-docs: %d %s", code, stderr)
	}
	ios, _, _, _ := iostreams.Test()
	tree := root.NewCmdRoot(cmdutiltest.Factory(ios, ""))
	flagsOf := func(c *cobra.Command) []*pflag.Flag {
		var fs []*pflag.Flag
		c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) { fs = append(fs, f) })
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) { fs = append(fs, f) })
		return fs
	}
	pages := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != tree {
			return
		}
		pages++
		name := strings.ReplaceAll(c.CommandPath(), " ", "_")
		b, err := os.ReadFile(filepath.Join(md, name+".md"))
		if err != nil {
			t.Fatalf("no page for %s: %v", c.CommandPath(), err)
		}
		for _, f := range flagsOf(c) {
			if !strings.Contains(string(b), "--"+f.Name) {
				t.Errorf("%s.md does not document --%s", name, f.Name)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(tree)
	if pages < 10 {
		t.Errorf("%d pages checked: the tree is not walked", pages)
	}

	holds, _, err := tree.Find([]string{"holds"})
	if err != nil || holds.Name() != "holds" {
		t.Fatalf("no holds command: %v", err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "man", "causalctl-holds.1"))
	if err != nil {
		t.Fatal(err)
	}
	// The page's text without roff's font changes and escapes.
	text := strings.NewReplacer(`\fB`, "", `\fR`, "", `\fP`, "", `\fI`, "", `\&`, "", `\-`, "-").Replace(string(page))
	if _, opts, ok := strings.Cut(text, "\n.SH OPTIONS\n"); ok {
		text = "\n" + opts
	} else {
		t.Fatal("the holds man page has no OPTIONS section")
	}
	flags := flagsOf(holds)
	if len(flags) < 10 {
		t.Fatalf("holds has %d flags", len(flags))
	}
	for _, f := range flags {
		_, usage := pflag.UnquoteUsage(f)
		entry := "--" + f.Name
		if f.Shorthand != "" {
			entry = "-" + f.Shorthand + ", --" + f.Name
		}
		i := strings.Index(text, "\n"+entry)
		if i < 0 {
			t.Errorf("the holds man page has no entry for %s", entry)
			continue
		}
		rest := text[i+1:]
		if end := strings.Index(rest, "\n.PP"); end >= 0 {
			rest = rest[:end]
		} else if end := strings.Index(rest, "\n.SH"); end >= 0 {
			rest = rest[:end]
		}
		if !strings.Contains(rest, usage) {
			t.Errorf("the holds man page does not give %s its usage %q", entry, usage)
		}
	}
	for _, p := range []string{"man/causalctl.1", "man/causalctl-replay.1", "completions/causalctl.bash", "completions/causalctl.zsh", "completions/causalctl.fish", "completions/causalctl.ps1"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("gen-docs wrote no %s: %v", p, err)
		}
	}
	if code, _, _ := run(t, false, "", "gen-docs"); code != 2 {
		t.Errorf("gen-docs without --dir: exit %d, want 2", code)
	}
}
