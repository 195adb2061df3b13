package capture

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/causalctl/causalctl/internal/clock"
)

// Stopped is the last line of a capture that did not reach the end of its
// range — `causalctl capture` interrupted or failing — so that no reader
// takes what was captured for the whole range (docs/capture-format.md §4b):
//
//	{"stopped":{"reason":"interrupted","records":1234,
//	  "channels":[{"topic":"orders","topic_id":"…","partition":0,"reached":42,"end":60}]}}
//
// It names no channel of its own and is no item: a Reader returns io.EOF
// at it and Reader.Stopped says what it said.
type Stopped struct {
	// Line is the line number it was read from; 0 when written.
	Line int64
	// Reason says why the capture stopped: "interrupted", or the error.
	Reason string
	// Records is the number of records written before it.
	Records int64
	// Channels are the channels whose range was not read to its end.
	Channels []StoppedChannel
}

// StoppedChannel is how far a capture got on a channel it did not finish.
type StoppedChannel struct {
	Topic     string
	TopicID   clock.TopicID
	Partition int32
	// Reached is the position the capture reached on the channel (the
	// offsets below it are in the file); −1 when it wrote nothing of it.
	Reached int64
	// End is where the channel's range ends; −1 when unknown.
	End int64
}

// String names the channel and how far it got: "orders/0 at 42 of 60".
func (c StoppedChannel) String() string {
	name := c.Topic
	if name == "" {
		name = c.TopicID.String()
	}
	s := name + "/" + strconv.Itoa(int(c.Partition))
	if c.Reached < 0 {
		s += " before its first offset"
	} else {
		s += " at " + strconv.FormatInt(c.Reached, 10)
	}
	if c.End >= 0 {
		s += " of " + strconv.FormatInt(c.End, 10)
	}
	return s
}

// WriteStopped writes s as the stopped line, which must be the file's
// last: nothing may be written after it.
func (w *Writer) WriteStopped(s *Stopped) error {
	b := append(w.buf[:0], `{"stopped":{"reason":`...)
	b = appendJSONString(b, s.Reason)
	b = append(b, `,"records":`...)
	b = strconv.AppendInt(b, s.Records, 10)
	b = append(b, `,"channels":[`...)
	for i, c := range s.Channels {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		if c.Topic != "" {
			b = append(b, `"topic":`...)
			b = appendJSONString(b, c.Topic)
			b = append(b, ',')
		}
		if !c.TopicID.IsZero() {
			b = append(b, `"topic_id":"`...)
			b = appendTopicID(b, c.TopicID)
			b = append(b, `",`...)
		}
		b = append(b, `"partition":`...)
		b = strconv.AppendInt(b, int64(c.Partition), 10)
		if c.Reached >= 0 {
			b = append(b, `,"reached":`...)
			b = strconv.AppendInt(b, c.Reached, 10)
		}
		if c.End >= 0 {
			b = append(b, `,"end":`...)
			b = strconv.AppendInt(b, c.End, 10)
		}
		b = append(b, '}')
	}
	b = append(b, "]}}\n"...)
	w.buf = b[:0]
	_, err := w.bw.Write(b)
	return err
}

// decodeStopped reads the value of a stopped field: reason required,
// records and channels optional; per channel, partition and a topic
// (name or UUID) required, reached and end optional.
func decodeStopped(raw []byte) (*Stopped, error) {
	s := &Stopped{}
	present, err := members(raw, map[string]memberFunc{
		"reason":  stringInto(&s.Reason),
		"records": intInto(&s.Records, 0, math.MaxInt64),
		"channels": listOf(func(i int, raw json.RawMessage) error {
			c := StoppedChannel{Reached: -1, End: -1}
			var id string
			p, err := members(raw, map[string]memberFunc{
				"topic":     stringInto(&c.Topic),
				"topic_id":  stringInto(&id),
				"partition": intInto(&c.Partition, 0, math.MaxInt32),
				"reached":   intInto(&c.Reached, 0, math.MaxInt64),
				"end":       intInto(&c.End, 0, math.MaxInt64),
			})
			if err == nil {
				err = require(p, "partition")
			}
			if err == nil && !p["topic"] && !p["topic_id"] {
				err = fmt.Errorf(`missing "topic" or "topic_id"`)
			}
			if err == nil && p["topic"] {
				err = clock.CheckTopicName(c.Topic)
			}
			if err == nil && p["topic_id"] {
				c.TopicID, err = clock.ParseTopicID(id)
			}
			if err != nil {
				return fmt.Errorf("channels[%d]: %w", i, err)
			}
			s.Channels = append(s.Channels, c)
			return nil
		}),
	})
	if err == nil {
		err = require(present, "reason")
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}
