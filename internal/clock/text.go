package clock

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Names maps topic names to topic UUIDs and back, so that channels print as
// NAME/PARTITION where the name is known and UUID/PARTITION where it is not.
// A nil *Names knows no names.
type Names struct {
	byID   map[TopicID]string
	byName map[string]TopicID
}

// Add records that name is the topic with UUID id. A name already bound to
// another UUID, or a UUID already bound to another name, is an error: within
// one run a topic's identity must not change.
func (n *Names) Add(name string, id TopicID) error {
	if err := CheckTopicName(name); err != nil {
		return err
	}
	if id.IsZero() {
		return fmt.Errorf("topic %q: zero topic UUID", name)
	}
	if old, ok := n.byName[name]; ok && old != id {
		return fmt.Errorf("topic %q: UUID %s conflicts with %s", name, id, old)
	}
	if old, ok := n.byID[id]; ok && old != name {
		return fmt.Errorf("topic UUID %s: name %q conflicts with %q", id, name, old)
	}
	if n.byID == nil {
		n.byID = make(map[TopicID]string)
		n.byName = make(map[string]TopicID)
	}
	n.byID[id] = name
	n.byName[name] = id
	return nil
}

// AddFlag parses NAME=UUID, the form of --topic-id, and adds it.
func (n *Names) AddFlag(s string) error {
	name, uuid, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("topic ID %q: want NAME=UUID", s)
	}
	id, err := ParseTopicID(uuid)
	if err != nil {
		return err
	}
	return n.Add(name, id)
}

// Name returns the topic name of id, if known.
func (n *Names) Name(id TopicID) (string, bool) {
	if n == nil {
		return "", false
	}
	name, ok := n.byID[id]
	return name, ok
}

// ID returns the UUID of the topic called name, if known.
func (n *Names) ID(name string) (TopicID, bool) {
	if n == nil {
		return TopicID{}, false
	}
	id, ok := n.byName[name]
	return id, ok
}

// All returns the known topic names, sorted.
func (n *Names) All() []string {
	if n == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(n.byName))
}

// Len returns the number of known topics.
func (n *Names) Len() int {
	if n == nil {
		return 0
	}
	return len(n.byID)
}

// Channel formats ch as NAME/PARTITION, or UUID/PARTITION when the name of
// its topic is unknown.
func (n *Names) Channel(ch Channel) string {
	if name, ok := n.Name(ch.Topic); ok {
		return name + "/" + strconv.Itoa(int(ch.Partition))
	}
	return ch.String()
}

// ParseChannel reads NAME/PARTITION or UUID/PARTITION. A topic part that is
// a well-formed UUID is taken as one; any other is looked up as a name.
func (n *Names) ParseChannel(s string) (Channel, error) {
	topic, part, ok := cutLast(s, "/")
	if !ok || topic == "" {
		return Channel{}, fmt.Errorf("channel %q: want NAME/PARTITION or UUID/PARTITION", s)
	}
	p, err := strconv.ParseInt(part, 10, 32)
	if err != nil || p < 0 {
		return Channel{}, fmt.Errorf("channel %q: partition %q is not a number from 0 to 2147483647", s, part)
	}
	id, err := n.ParseTopic(topic)
	if err != nil {
		return Channel{}, fmt.Errorf("channel %q: %w", s, err)
	}
	return Channel{Topic: id, Partition: int32(p)}, nil
}

// ParseTopic resolves a topic given as a UUID or a known name.
func (n *Names) ParseTopic(s string) (TopicID, error) {
	if id, err := ParseTopicID(s); err == nil {
		if id.IsZero() {
			return TopicID{}, fmt.Errorf("zero topic UUID")
		}
		return id, nil
	}
	if id, ok := n.ID(s); ok {
		return id, nil
	}
	if err := CheckTopicName(s); err != nil {
		return TopicID{}, err // no hint: no --topic-id could name it
	}
	return TopicID{}, fmt.Errorf("unknown topic %q (name its UUID with --topic-id %s=UUID)", s, s)
}

// CheckTopicName applies Kafka's rule for topic names: 1 to 249 bytes of
// ASCII letters, digits, '.', '_' and '-', and neither "." nor "..". Every
// name that enters causalctl — a capture line, --topic, --topic-id, a clock
// in text form — is checked by it, so a name never holds '/', ',' or '=',
// which the text forms rely on, nor a byte a terminal would act on.
func CheckTopicName[S []byte | string](s S) error {
	bad := len(s) == 0 || len(s) > 249 || string(s) == "." || string(s) == ".."
	for i := 0; i < len(s) && !bad; i++ {
		c := s[i]
		bad = !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-')
	}
	if bad {
		return fmt.Errorf("%q is not a Kafka topic name (1 to 249 of a-z A-Z 0-9 . _ -, not . or ..)", s)
	}
	return nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// Format returns the text form of c (SPEC §2.2): CHANNEL=POSITION entries
// joined by commas, in clock order (topic UUID, then partition — the wire
// order, so text and bytes correspond entry by entry), or {} when empty.
func (n *Names) Format(c Clock) string {
	if c.IsEmpty() {
		return "{}"
	}
	var b strings.Builder
	for i, e := range c.entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n.Channel(e.Channel))
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(e.Position, 10))
	}
	return b.String()
}

// Parse reads the text form. {} is the empty clock; white space around
// entries is allowed; a channel named twice is an error.
func (n *Names) Parse(s string) (Clock, error) {
	s = strings.TrimSpace(s)
	if s == "{}" {
		return Clock{}, nil
	}
	if s == "" {
		return Clock{}, fmt.Errorf("empty clock text: write {} for the empty clock")
	}
	parts := strings.Split(s, ",")
	entries := make([]Entry, 0, len(parts))
	seen := make(map[Channel]bool, len(parts))
	for _, part := range parts {
		part = strings.TrimSpace(part)
		chText, posText, ok := cutLast(part, "=")
		if !ok {
			return Clock{}, fmt.Errorf("entry %q: want CHANNEL=POSITION", part)
		}
		ch, err := n.ParseChannel(strings.TrimSpace(chText))
		if err != nil {
			return Clock{}, err
		}
		pos, err := strconv.ParseInt(strings.TrimSpace(posText), 10, 64)
		if err != nil || pos < 0 || pos > MaxPosition {
			return Clock{}, fmt.Errorf("entry %q: position must be a number from 0 to 2^63-2", part)
		}
		if seen[ch] {
			return Clock{}, fmt.Errorf("entry %q: channel %s named twice", part, n.Channel(ch))
		}
		seen[ch] = true
		entries = append(entries, Entry{ch, pos})
	}
	return fromUnsorted(entries), nil
}
