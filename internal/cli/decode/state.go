package decode

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/shared/render"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/record"
)

// The JSON of one ordering-state entry (docs/state.md, "Decoding one
// entry"; docs/schemas/decode-state.schema.json). Fields that only some
// tags carry are left out where they do not apply; null means unknown.
type stateEntryJSON struct {
	Key   stateKeyJSON    `json:"key"`
	Value *stateValueJSON `json:"value"` // null: no value given (a tombstone's is null too)
}

type stateKeyJSON struct {
	Hex       string  `json:"hex"`
	Size      int     `json:"size"`
	Tag       string  `json:"tag"`  // the tag byte: v, f, c, p, n, h
	Kind      string  `json:"kind"` // what it is: version, fed-up-to, …
	Channel   string  `json:"channel,omitempty"`
	TopicID   string  `json:"topic_id,omitempty"`
	Topic     string  `json:"topic,omitempty"`
	Partition *int32  `json:"partition,omitempty"`
	Position  *int64  `json:"position,omitempty"`
	Name      *string `json:"name,omitempty"`
}

type stateValueJSON struct {
	Size int `json:"size"`
	// Version is the store format of a version entry or a held record.
	Version *int `json:"version,omitempty"`
	// Position is the int64 of a fed-up-to, frontier or delivered-past
	// entry: null for −1 (nothing known), Deleted for 2^63−1.
	Position *json.RawMessage `json:"position,omitempty"`
	Deleted  bool             `json:"deleted,omitempty"`
	// TopicID (and Topic when known) is the binding of a name entry.
	TopicID string `json:"topic_id,omitempty"`
	Topic   string `json:"topic,omitempty"`
	// Record is a held record.
	Record *heldRecordJSON `json:"record,omitempty"`
}

type heldRecordJSON struct {
	Timestamp    *string          `json:"timestamp"` // null for a negative (absent) timestamp
	TimestampMs  int64            `json:"timestamp_ms"`
	Key          *string          `json:"key"` // base64; null for a null key
	KeySize      *int             `json:"key_size"`
	Value        *string          `json:"value"`
	ValueSize    *int             `json:"value_size"`
	Headers      []heldHeaderJSON `json:"headers"`
	Causes       string           `json:"causes"` // text form, stored order
	CauseEntries []jsonEntry      `json:"cause_entries"`
}

type heldHeaderJSON struct {
	Key   string  `json:"key"`
	Value *string `json:"value"` // base64; null for a null value
	Size  *int    `json:"size"`  // null for a null value
}

// runStateEntry decodes one store entry: the key of --state-key, the
// value of --state-value or, without it, raw bytes on stdin (none read on
// a terminal; an empty stdin is no value).
func runStateEntry(opts *Options) error {
	key, err := hex.DecodeString(strings.TrimSpace(opts.StateKey))
	if err != nil {
		return cmdutil.Usagef("--state-key: %v", err)
	}
	var value []byte
	switch {
	case opts.StateValue != "":
		if value, err = hex.DecodeString(strings.TrimSpace(opts.StateValue)); err != nil {
			return cmdutil.Usagef("--state-value: %v", err)
		}
	case !opts.IO.InTTY:
		if value, err = io.ReadAll(io.LimitReader(opts.IO.In, int64(opts.MaxHeaderSize)+1)); err != nil {
			return fmt.Errorf("reading stdin: %w", err)
		}
		if len(value) > opts.MaxHeaderSize {
			return fmt.Errorf("store value on stdin: more than --max-header-size %d bytes", opts.MaxHeaderSize)
		}
		if len(value) == 0 {
			value = nil
		}
	}
	entry, err := decodeStateEntry(key, value, opts.Names)
	if err != nil {
		return err
	}
	return opts.Final.Do(func() error {
		if opts.Output == "json" {
			return encodeJSON(opts.IO.Out, entry)
		}
		_, err := io.WriteString(opts.IO.Out, stateEntryText(entry))
		return err
	})
}

// decodeStateEntry decodes key and, when not nil, value as SPEC §6 says.
// A corrupt key or value is an error naming the key and the defect.
func decodeStateEntry(key, value []byte, names *clock.Names) (*stateEntryJSON, error) {
	k, err := parsley.ParseKey(key)
	if err != nil {
		return nil, fmt.Errorf("corrupt store key %x: %v", key, err)
	}
	out := &stateEntryJSON{Key: stateKeyJSON{Hex: hex.EncodeToString(key), Size: len(key), Tag: string(rune(k.Tag)), Kind: k.Tag.String()}}
	switch k.Tag {
	case parsley.TagFedUpTo, parsley.TagFrontier, parsley.TagDeliveredPast, parsley.TagHeld:
		jk := &out.Key
		jk.Channel, jk.TopicID = names.Channel(k.Channel), k.Channel.Topic.String()
		jk.Topic, _ = names.Name(k.Channel.Topic)
		p := k.Channel.Partition
		jk.Partition = &p
		if k.Tag == parsley.TagHeld {
			pos := k.Position
			jk.Position = &pos
		}
	case parsley.TagName:
		name := k.Name
		out.Key.Name = &name
	}
	if value == nil {
		return out, nil
	}
	corrupt := func(err error) error {
		return fmt.Errorf("corrupt store value of %s (key %x, value %d bytes): %v", k, key, len(value), err)
	}
	jv := &stateValueJSON{Size: len(value)}
	switch k.Tag {
	case parsley.TagVersion:
		v, err := parsley.ParseVersion(value)
		if err != nil {
			return nil, corrupt(err)
		}
		jv.Version = &v
	case parsley.TagFedUpTo, parsley.TagFrontier, parsley.TagDeliveredPast:
		p, err := parsley.ParsePosition(value)
		if err != nil {
			return nil, corrupt(err)
		}
		raw := json.RawMessage("null")
		if p >= 0 {
			raw = json.RawMessage(strconv.FormatInt(p, 10))
		}
		jv.Position = &raw
		jv.Deleted = p == parsley.DeletedPosition
	case parsley.TagName:
		id, err := parsley.ParseNameValue(value)
		if err != nil {
			return nil, corrupt(err)
		}
		jv.TopicID = id.String()
		jv.Topic, _ = names.Name(id)
	case parsley.TagHeld:
		rec, err := parsley.ParseHeldRecord(value)
		if err != nil {
			return nil, corrupt(err)
		}
		v := parsley.StoreVersion
		jv.Version = &v
		jv.Record = heldJSON(&rec, names)
	}
	out.Value = jv
	return out, nil
}

func heldJSON(rec *parsley.HeldRecord, names *clock.Names) *heldRecordJSON {
	jr := &heldRecordJSON{TimestampMs: rec.Timestamp, Headers: []heldHeaderJSON{}, CauseEntries: jsonEntries(rec.Causes, names)}
	if ts, ok := record.TimeOf(rec.Timestamp); ok {
		s := render.Time(ts)
		jr.Timestamp = &s
	}
	jr.Key, jr.KeySize = bytesJSON(rec.Key)
	jr.Value, jr.ValueSize = bytesJSON(rec.Value)
	for _, h := range rec.Headers {
		v, n := bytesJSON(h.Value)
		jr.Headers = append(jr.Headers, heldHeaderJSON{Key: h.Key, Value: v, Size: n})
	}
	// The causes as stored (Parsley sorts them; a store that did not is
	// shown as it is, not re-sorted).
	jr.Causes = "{}"
	if len(rec.Causes) > 0 {
		parts := make([]string, len(rec.Causes))
		for i, e := range rec.Causes {
			parts[i] = names.Channel(e.Channel) + "=" + strconv.FormatInt(e.Position, 10)
		}
		jr.Causes = strings.Join(parts, ",")
	}
	return jr
}

// bytesJSON is b as base64 and its size; both nil for null.
func bytesJSON(b []byte) (*string, *int) {
	if b == nil {
		return nil, nil
	}
	s, n := base64.StdEncoding.EncodeToString(b), len(b)
	return &s, &n
}

// stateEntryText is the entry for people: the key, then the value field
// by field. Names, bound topics and header keys come from the store, which
// any writer of the changelog fills: each is escaped (escape.Text).
func stateEntryText(e *stateEntryJSON) string {
	var b strings.Builder
	k := e.Key
	fmt.Fprintf(&b, "store key %s (%d %s): %s", k.Hex, k.Size, render.Noun(k.Size, "byte", "bytes"), k.Kind)
	switch {
	case k.Name != nil:
		fmt.Fprintf(&b, " %q", *k.Name)
	case k.Position != nil:
		fmt.Fprintf(&b, " %s@%d", escape.Text(k.Channel), *k.Position)
	case k.Channel != "":
		fmt.Fprintf(&b, " %s", escape.Text(k.Channel))
	}
	b.WriteString("\n")
	v := e.Value
	if v == nil {
		b.WriteString("value: none given\n")
		return b.String()
	}
	fmt.Fprintf(&b, "value (%d %s): ", v.Size, render.Noun(v.Size, "byte", "bytes"))
	switch {
	case v.Record != nil:
		r := v.Record
		fmt.Fprintf(&b, "held record v%d\n", *v.Version)
		ts := "none"
		if r.Timestamp != nil {
			ts = *r.Timestamp
		}
		fmt.Fprintf(&b, "  timestamp  %s (%d ms; the record's own time, not when it was held)\n", ts, r.TimestampMs)
		fmt.Fprintf(&b, "  key        %s\n", bytesText(r.Key, r.KeySize))
		fmt.Fprintf(&b, "  value      %s\n", bytesText(r.Value, r.ValueSize))
		if len(r.Headers) == 0 {
			b.WriteString("  headers    none\n")
		}
		for i, h := range r.Headers {
			label := "             "
			if i == 0 {
				label = "  headers    "
			}
			fmt.Fprintf(&b, "%s%s  %s\n", label, escape.Text(h.Key), bytesText(h.Value, h.Size))
		}
		fmt.Fprintf(&b, "  causes     %s\n", escape.Text(r.Causes))
	case v.Version != nil:
		fmt.Fprintf(&b, "store format version %d\n", *v.Version)
	case v.Position != nil:
		switch p := string(*v.Position); {
		case v.Deleted:
			b.WriteString("2^63-1: the topic was deleted, the channel is settled for ever\n")
		case p == "null":
			b.WriteString("-1: nothing known (an older release)\n")
		default:
			b.WriteString("position " + p + "\n")
		}
	case v.TopicID != "":
		fmt.Fprintf(&b, "bound to topic %s", v.TopicID)
		if v.Topic != "" {
			fmt.Fprintf(&b, " (%s)", escape.Text(v.Topic))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func bytesText(s *string, n *int) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%d %s (base64) %s", *n, render.Noun(*n, "byte", "bytes"), *s)
}
