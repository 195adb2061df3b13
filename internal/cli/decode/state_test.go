package decode

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/testutil"
)

// heldKey is the `held` key vector: orders/2@41 when orders is named.
const heldKey = "680102030405060708090a0b0c0d0e0f10000000020000000000000029"

type stateVector struct{ kind, label, hex, expected string }

// stateVectors reads ../shared/vectors/ordering-state.txt.
func stateVectors(t *testing.T) []stateVector {
	t.Helper()
	f, err := os.Open(testutil.Shared(t, "vectors", "ordering-state.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []stateVector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.SplitN(line, " ", 4)
		if len(fs) != 4 {
			t.Fatalf("vector line %q", line)
		}
		vs = append(vs, stateVector{fs[0], fs[1], fs[2], fs[3]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

// runDecode runs decode with args, stdin in, as a terminal or a pipe.
func runDecode(t *testing.T, tty bool, in string, args ...string) (string, error) {
	t.Helper()
	ios, stdin, out, _ := iostreams.Test()
	ios.SetTTY(tty)
	stdin.WriteString(in)
	cmd := NewCmdDecode(cmdutiltest.Factory(ios, ""), nil)
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return out.String(), err
}

func decodeEntry(t *testing.T, out string) stateEntryJSON {
	t.Helper()
	var e stateEntryJSON
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return e
}

func b64hex(s *string) string {
	if s == nil {
		return "null"
	}
	b, _ := base64.StdEncoding.DecodeString(*s)
	return hex.EncodeToString(b)
}

// TestStateEntryVectors: every vector of the shared file through the
// command — blobs decode to exactly the expected fields (as the value of
// a held key, in a pipe, so JSON), corrupt blobs exit 1 with the defect,
// keys give their tag and fields.
func TestStateEntryVectors(t *testing.T) {
	vs := stateVectors(t)
	if len(vs) < 20 {
		t.Fatalf("%d vectors", len(vs))
	}
	for _, v := range vs {
		t.Run(v.kind+"/"+v.label, func(t *testing.T) {
			switch v.kind {
			case "blob":
				out, err := runDecode(t, false, "", "--state-key", heldKey, "--state-value", v.hex)
				if err != nil {
					t.Fatal(err)
				}
				e := decodeEntry(t, out)
				r := e.Value.Record
				if e.Value.Size != len(v.hex)/2 || r == nil || *e.Value.Version != 1 {
					t.Fatalf("value %+v", e.Value)
				}
				var hs []string
				for _, h := range r.Headers {
					hs = append(hs, h.Key+":"+b64hex(h.Value))
				}
				headers := strings.Join(hs, ";")
				if headers == "" {
					headers = "-"
				}
				var cs []string
				for _, c := range r.CauseEntries {
					cs = append(cs, c.TopicID+"/"+strconv.Itoa(int(c.Partition))+"="+strconv.FormatInt(c.Position, 10))
				}
				causes := strings.Join(cs, ",")
				if causes == "" {
					causes = "{}"
				}
				got := "ts=" + strconv.FormatInt(r.TimestampMs, 10) + " key=" + b64hex(r.Key) + " value=" + b64hex(r.Value) +
					" headers=" + headers + " causes=" + causes
				if got != v.expected {
					t.Errorf("decoded\n  %s\nwant\n  %s", got, v.expected)
				}
				// The text form (no names given) and the sizes agree.
				if r.Causes != causes || (r.Key == nil) != (r.KeySize == nil) || (r.Key != nil && *r.KeySize != len(b64hex(r.Key))/2) {
					t.Errorf("causes %q sizes %v %v", r.Causes, r.KeySize, r.ValueSize)
				}
			case "corrupt":
				out, err := runDecode(t, false, "", "--state-key", heldKey, "--state-value", v.hex)
				if cmdutil.ExitCode(err) != cmdutil.ExitFailure || out != "" {
					t.Fatalf("exit %d (%v), output %q: want 1 and nothing printed", cmdutil.ExitCode(err), err, out)
				}
				if msg := err.Error(); !strings.Contains(msg, "corrupt store value of held") || !strings.Contains(msg, heldKey) {
					t.Errorf("error %q does not name the entry", msg)
				}
				t.Logf("%s: %v (vector says: %s)", v.label, err, v.expected)
			case "key":
				out, err := runDecode(t, false, "", "--state-key", v.hex)
				if err != nil {
					t.Fatal(err)
				}
				e := decodeEntry(t, out)
				k := e.Key
				got := "tag=" + k.Tag
				if k.Channel != "" {
					got += " channel=" + k.Channel
				}
				if k.Name != nil {
					got += " name=" + *k.Name
				}
				if k.Position != nil {
					got += " position=" + strconv.FormatInt(*k.Position, 10)
				}
				if got != v.expected || e.Value != nil || k.Hex != v.hex || k.Size != len(v.hex)/2 {
					t.Errorf("key %+v value %v: %q, want %q", k, e.Value, got, v.expected)
				}
			default:
				t.Fatalf("unknown vector kind %s", v.kind)
			}
		})
	}
}

// TestStateEntryValues: each tag's value decoded, names resolved through
// --topic-id, on stdin as raw bytes; the special positions.
func TestStateEntryValues(t *testing.T) {
	const uuid = "01020304-0506-0708-090a-0b0c0d0e0f10"
	names := []string{"--topic-id", "orders=" + uuid}
	pos := func(p uint64) string { return hex.EncodeToString(binary.BigEndian.AppendUint64(nil, p)) }
	for _, tc := range []struct {
		name, key, value string
		want             string // the JSON value object
		wantKey          string // a fragment of the key object
	}{
		{"version", "76", "01", `{"size":1,"version":1}`, `"tag":"v","kind":"version"}`},
		{"fed-up-to", "660102030405060708090a0b0c0d0e0f1000000002", pos(41), `{"size":8,"position":41}`,
			`"kind":"fed-up-to","channel":"orders/2","topic_id":"` + uuid + `","topic":"orders","partition":2}`},
		{"deleted topic", "660102030405060708090a0b0c0d0e0f1000000002", pos(1<<63 - 1), `{"size":8,"position":9223372036854775807,"deleted":true}`, `"kind":"fed-up-to"`},
		{"older release", "630102030405060708090a0b0c0d0e0f1000000002", pos(1<<64 - 1), `{"size":8,"position":null}`, `"kind":"frontier"`},
		{"delivered past", "700102030405060708090a0b0c0d0e0f1000000002", pos(0), `{"size":8,"position":0}`, `"kind":"delivered-past"`},
		{"name", "6e6f7264657273", "0102030405060708090a0b0c0d0e0f1000000000", `{"size":20,"topic_id":"` + uuid + `","topic":"orders"}`, `"kind":"name","name":"orders"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := hex.DecodeString(tc.value)
			for _, viaStdin := range []bool{false, true} {
				args := append([]string{"--state-key", tc.key}, names...)
				in := ""
				if viaStdin {
					in = string(raw)
				} else {
					args = append(args, "--state-value", tc.value)
				}
				out, err := runDecode(t, false, in, args...)
				if err != nil {
					t.Fatal(err)
				}
				decodeEntry(t, out) // every field declared
				var raw map[string]json.RawMessage
				if err := json.Unmarshal([]byte(out), &raw); err != nil {
					t.Fatal(err)
				}
				if got := string(raw["value"]); got != tc.want || !strings.Contains(out, tc.wantKey) {
					t.Errorf("stdin %v: %s\nwant value %s and key with %s", viaStdin, out, tc.want, tc.wantKey)
				}
			}
		})
	}
}

// TestStateEntryCorrupt: a corrupt key or value is exit 1 with the defect
// named; bad hex and a value without its key are usage errors.
func TestStateEntryCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		wants string
	}{
		{"unknown tag", []string{"--state-key", "7a01"}, 1, "unknown key tag 0x7a"},
		{"empty key", []string{"--state-key", " "}, 1, "empty key"},
		{"short channel key", []string{"--state-key", "6601"}, 1, "fed-up-to key of 2 bytes, want 21"},
		{"zero topic", []string{"--state-key", "66" + strings.Repeat("00", 16) + "00000002"}, 1, "zero"},
		{"negative partition", []string{"--state-key", "660102030405060708090a0b0c0d0e0f10ffffffff"}, 1, "negative partition"},
		{"held key negative position", []string{"--state-key", "680102030405060708090a0b0c0d0e0f1000000002ffffffffffffffff"}, 1, "negative"},
		{"version 2", []string{"--state-key", "76", "--state-value", "02"}, 1, "unknown store version 2"},
		{"short position", []string{"--state-key", "660102030405060708090a0b0c0d0e0f1000000002", "--state-value", "0001"}, 1, "position value of 2 bytes, want 8"},
		{"negative position", []string{"--state-key", "660102030405060708090a0b0c0d0e0f1000000002", "--state-value", "fffffffffffffffe"}, 1, "negative position -2"},
		{"zero bound topic", []string{"--state-key", "6e61", "--state-value", "0000000000000000000000000000000000000000"}, 1, "zero topic UUID"},
		{"empty held record", []string{"--state-key", heldKey, "--state-value", "00"}, 1, "unknown held-record version 0"},
		{"bad hex key", []string{"--state-key", "7g"}, 2, "--state-key"},
		{"bad hex value", []string{"--state-key", "76", "--state-value", "0"}, 2, "--state-value"},
		{"value without key", []string{"--state-value", "01"}, 2, "needs --state-key"},
		{"with --hex", []string{"--state-key", "76", "--hex", "0100"}, 2, "give one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runDecode(t, false, "", tc.args...)
			if code := cmdutil.ExitCode(err); code != tc.code || err == nil || !strings.Contains(err.Error(), tc.wants) {
				t.Errorf("exit %d, error %v; want %d and %q", code, err, tc.code, tc.wants)
			}
			if out != "" {
				t.Errorf("printed %q", out)
			}
		})
	}
}

// TestStateEntryText: on a terminal a held record reads field by field,
// and no stdin is waited for; -o json there still gives JSON.
func TestStateEntryText(t *testing.T) {
	vs := stateVectors(t)
	var blob string
	for _, v := range vs {
		if v.label == "both-null-two-causes" {
			blob = v.hex
		}
	}
	if blob == "" {
		t.Fatal("no both-null-two-causes vector")
	}
	names := []string{"--topic-id", "orders=01020304-0506-0708-090a-0b0c0d0e0f10"}
	out, err := runDecode(t, true, "", append([]string{"--state-key", heldKey, "--state-value", blob}, names...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"store key " + heldKey + " (29 bytes): held orders/2@41\n",
		"value (131 bytes): held record v1\n",
		"  timestamp  2025-11-29T21:00:00.999Z (1764450000999 ms; the record's own time, not when it was held)\n",
		"  key        null\n", "  value      null\n",
		"  headers    trace  3 bytes (base64) YWJj\n", "             empty  0 bytes (base64) \n",
		"  causes     orders/2=41,orders/5=7,11020304-0506-0708-090a-0b0c0d0e0f10/0=9\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	// The key alone on a terminal: stdin is not read.
	out, err = runDecode(t, true, "ignored", "--state-key", "76")
	if err != nil || out != "store key 76 (1 byte): version\nvalue: none given\n" {
		t.Errorf("key alone: %q, %v", out, err)
	}
	out, err = runDecode(t, true, "", "--state-key", "76", "--state-value", "01", "-o", "json")
	if err != nil || out != `{"key":{"hex":"76","size":1,"tag":"v","kind":"version"},"value":{"size":1,"version":1}}`+"\n" {
		t.Errorf("-o json on a terminal: %q, %v", out, err)
	}
}

// TestStateValueHostileStrings: a store's names, bound topics and held
// records' header keys are written by whoever writes the changelog: the
// text of decode --state-value escapes them.
func TestStateValueHostileStrings(t *testing.T) {
	id := clock.TopicID{1, 15: 1}
	for _, s := range testutil.Hostile {
		name := hex.EncodeToString(parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagName, Name: s}))
		held := hex.EncodeToString(parsley.AppendKey(nil, parsley.Key{Tag: parsley.TagHeld, Channel: clock.Channel{Topic: id}, Position: 3}))
		rec := hex.EncodeToString(parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: 1, Headers: []clock.Header{{Key: s, Value: []byte("v")}}}))
		for _, args := range [][]string{
			{"--state-key", name, "--state-value", hex.EncodeToString(parsley.AppendNameValue(nil, id))},
			{"--state-key", held, "--state-value", rec, "--topic-id", "orders=" + id.String()},
		} {
			out, err := runDecode(t, true, "", args...)
			if err != nil { // a name key must be UTF-8: refused, named by its hex
				testutil.NoRawHostile(t, "decode --state-value error", err.Error())
				continue
			}
			if !strings.Contains(out, "EVIL") {
				t.Fatalf("%q: the string is not shown:\n%s", args, out)
			}
			testutil.NoRawHostile(t, "decode --state-value", out)
		}
	}
}
