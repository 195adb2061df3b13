package parsley

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/causalctl/causalctl/internal/clock"
)

// ChangelogSuffix ends the name of every ordering changelog: the topic of
// application APP is APP + ChangelogSuffix. No application topic contains
// "__parsley.", so every topic with this suffix is one process's state.
const ChangelogSuffix = "-__parsley.ordering-changelog"

// ChangelogTopic returns the ordering changelog of application app.
func ChangelogTopic(app string) string { return app + ChangelogSuffix }

// AppOf returns the application id whose ordering changelog is topic, and
// false when topic is no ordering changelog.
func AppOf(topic string) (string, bool) {
	app, ok := strings.CutSuffix(topic, ChangelogSuffix)
	if !ok || app == "" {
		return "", false
	}
	return app, true
}

// StoreVersion is the store format this package reads: the value of the
// `v` key and the first byte of a held record.
const StoreVersion = 1

// DeletedPosition, as a fed-up-to value, says the channel's topic was
// deleted: the channel is settled for ever.
const DeletedPosition = 1<<63 - 1

// Tag is the first byte of a store key: what the entry is.
type Tag byte

// The tags of store format v1.
const (
	TagVersion       Tag = 'v' // store format version
	TagFedUpTo       Tag = 'f' // + channel: highest position received
	TagFrontier      Tag = 'c' // + channel: the position claimed on what is sent
	TagDeliveredPast Tag = 'p' // + channel: delivered causal past
	TagName          Tag = 'n' // + topic name: the topic ID bound to the name
	TagHeld          Tag = 'h' // + channel + position: one held record
)

// String names the tag as the docs do.
func (t Tag) String() string {
	switch t {
	case TagVersion:
		return "version"
	case TagFedUpTo:
		return "fed-up-to"
	case TagFrontier:
		return "frontier"
	case TagDeliveredPast:
		return "delivered-past"
	case TagName:
		return "name"
	case TagHeld:
		return "held"
	}
	return fmt.Sprintf("tag 0x%02x", byte(t))
}

const (
	channelSize = 20                  // topic UUID, int32 partition
	heldKeySize = 1 + channelSize + 8 // tag, channel, int64 position
)

// Key is one decoded store key. Channel is set for the per-channel tags,
// Position for TagHeld, Name for TagName.
type Key struct {
	Tag      Tag
	Channel  clock.Channel
	Position int64
	Name     string
}

// String is the key in the text the docs and errors use, e.g.
// "held 0102…/2@41" or "name orders".
func (k Key) String() string {
	switch k.Tag {
	case TagVersion:
		return k.Tag.String()
	case TagName:
		return fmt.Sprintf("%s %q", k.Tag, k.Name)
	case TagHeld:
		return fmt.Sprintf("%s %s@%d", k.Tag, k.Channel, k.Position)
	}
	return fmt.Sprintf("%s %s", k.Tag, k.Channel)
}

// ParseKey decodes a store key. It refuses an unknown tag, a key of the
// wrong length, a zero topic UUID, a negative partition and, in a held
// key, a negative or reserved position.
func ParseKey(b []byte) (Key, error) {
	if len(b) == 0 {
		return Key{}, fmt.Errorf("empty key")
	}
	k := Key{Tag: Tag(b[0])}
	rest := b[1:]
	switch k.Tag {
	case TagVersion:
		if len(rest) != 0 {
			return k, fmt.Errorf("version key of %d bytes, want 1", len(b))
		}
	case TagFedUpTo, TagFrontier, TagDeliveredPast:
		if len(rest) != channelSize {
			return k, fmt.Errorf("%s key of %d bytes, want %d", k.Tag, len(b), 1+channelSize)
		}
		ch, err := parseChannel(rest)
		if err != nil {
			return k, err
		}
		k.Channel = ch
	case TagHeld:
		if len(b) != heldKeySize {
			return k, fmt.Errorf("held key of %d bytes, want %d", len(b), heldKeySize)
		}
		ch, err := parseChannel(rest[:channelSize])
		if err != nil {
			return k, err
		}
		k.Channel = ch
		k.Position = int64(binary.BigEndian.Uint64(rest[channelSize:]))
		if err := checkPosition(k.Position); err != nil {
			return k, err
		}
	case TagName:
		if len(rest) == 0 {
			return k, fmt.Errorf("name key with no name")
		}
		if !utf8.Valid(rest) {
			return k, fmt.Errorf("name key is not UTF-8")
		}
		k.Name = string(rest)
	default:
		return k, fmt.Errorf("unknown key tag 0x%02x", b[0])
	}
	return k, nil
}

// AppendKey appends the encoding of k to dst.
func AppendKey(dst []byte, k Key) []byte {
	dst = append(dst, byte(k.Tag))
	switch k.Tag {
	case TagFedUpTo, TagFrontier, TagDeliveredPast:
		dst = appendChannel(dst, k.Channel)
	case TagHeld:
		dst = appendChannel(dst, k.Channel)
		dst = binary.BigEndian.AppendUint64(dst, uint64(k.Position))
	case TagName:
		dst = append(dst, k.Name...)
	}
	return dst
}

func parseChannel(b []byte) (clock.Channel, error) {
	var ch clock.Channel
	copy(ch.Topic[:], b[:16])
	ch.Partition = int32(binary.BigEndian.Uint32(b[16:20]))
	if ch.Topic.IsZero() {
		return ch, fmt.Errorf("zero topic UUID")
	}
	if ch.Partition < 0 {
		return ch, fmt.Errorf("negative partition %d", ch.Partition)
	}
	return ch, nil
}

func appendChannel(dst []byte, ch clock.Channel) []byte {
	dst = append(dst, ch.Topic[:]...)
	return binary.BigEndian.AppendUint32(dst, uint32(ch.Partition))
}

func checkPosition(p int64) error {
	switch {
	case p < 0:
		return fmt.Errorf("negative position %d", p)
	case p == DeletedPosition:
		return fmt.Errorf("reserved position 2^63-1")
	}
	return nil
}

// hexKey is a key as errors print it: binary keys are hex.
func hexKey(b []byte) string { return hex.EncodeToString(b) }
