package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/capture"
	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/record"
)

// The offline scenarios read a capture the harness writes itself, without
// a broker, so that they can run at sizes (10 M records) whose broker
// would not fit in memory. Its records have the shape of the seeded ones
// (seed): the same keys, values and 1–8-entry clocks, the same rounds,
// with the offsets of the commit markers of every txnEvery-th round left
// out. It ends with a log-facts line per channel.

// genTopicID is the bench topic's UUID in a generated capture.
var genTopicID = clock.TopicID{0xbe, 0x0c, 0xbe, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}

// upstreamNames binds the upstream topics' UUIDs to names (--topic-id),
// so that check knows them: a clock claiming a topic no one knows is an
// unknown-topic finding, which these stamps are not meant to have.
func upstreamNames() []string {
	var out []string
	for t := range upstreamTopics {
		out = append(out, "--topic-id", fmt.Sprintf("up%d=%s", t+1, upstreamTopic(t)))
	}
	return out
}

func upstreamTopic(t int) clock.TopicID { return clock.TopicID{0xbe, 0x0c, byte(t + 1)} }

// generate writes a capture of n records over channels channels to path.
func generate(path string, channels int, n int64, rng *rand.Rand) (seeded, error) {
	start := time.Now()
	var out seeded
	f, err := os.Create(path)
	if err != nil {
		return out, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := capture.NewWriter(bw)

	var upstream []clock.Channel
	for t := range upstreamTopics {
		for p := range upstreamPartitions {
			upstream = append(upstream, clock.Channel{Topic: upstreamTopic(t), Partition: int32(p)})
		}
	}
	lastRound := make([]int64, channels)
	twoAgo := make([]int64, channels)
	next := make([]int64, channels)
	for c := range channels {
		lastRound[c], twoAgo[c] = -1, -1
	}
	upstreamPos := make([]int64, len(upstream))
	payload := make([]byte, 256)
	for i := range payload {
		payload[i] = 'a' + byte(rng.IntN(26))
	}
	ts := int64(1764450000000)
	var entries int64
	for round := 0; out.Records < n; round++ {
		total := min(int64(roundPerChannel*channels), n-out.Records)
		for i := range total {
			c := int(i) % channels
			hdr, k := stamp(rng, clock.TopicID(genTopicID), channels, c, twoAgo, upstream, upstreamPos)
			entries += int64(k)
			ts++
			key := payload[:8+rng.IntN(9)]
			value := payload[:64+rng.IntN(129)]
			it := record.Item{Kind: record.KindRecord, Topic: benchTopic, TopicID: genTopicID, Partition: int32(c),
				Offset: next[c], Timestamp: ts, HasTimestamp: true, Key: key, Value: value,
				Headers: []clock.Header{{Key: clock.HeaderCauses, Value: hdr}}}
			if err := w.Write(&it); err != nil {
				return out, err
			}
			lastRound[c] = next[c]
			next[c]++
			out.Bytes += int64(len(key) + len(value) + len(hdr) + len(clock.HeaderCauses))
		}
		if round%txnEvery == txnEvery-1 {
			for c := range channels {
				next[c]++ // the commit marker's offset
			}
		}
		copy(twoAgo, lastRound)
		out.Records += total
	}
	// Last, what the brokers knew of each log: the audit reads log facts
	// wherever they lie.
	for c := range channels {
		it := record.Item{Kind: record.KindLogFacts, Topic: benchTopic, TopicID: genTopicID, Partition: int32(c),
			Facts: &record.LogFacts{LastStable: next[c], HighWatermark: next[c], At: 1764450000000}}
		if err := w.Write(&it); err != nil {
			return out, err
		}
	}
	if err := w.Flush(); err != nil {
		return out, err
	}
	if err := bw.Flush(); err != nil {
		return out, err
	}
	out.MeanClock = float64(entries) / float64(max(out.Records, 1))
	out.Took = time.Since(start)
	return out, f.Close()
}

// scopesFile writes a --scopes file of k nodes, each consuming every bench
// channel: k times the scope-dependent work of one scope over the same
// records, with no hole to report (the stamps claim every bench record
// they depend on directly).
func scopesFile(path string, channels, k int) error {
	var chans []string
	for c := range channels {
		chans = append(chans, fmt.Sprintf("%s/%d", benchTopic, c))
	}
	var b strings.Builder
	for i := range k {
		fmt.Fprintf(&b, "node%d: %s\n", i+1, strings.Join(chans, ","))
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}
