package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/parsley"
)

// The fleet scenarios' clusters: processes of fleetTasks tasks, each
// receiving two of fleetTopics business topics of fleetTasks partitions
// (fleetFill records each), as BenchmarkProcesses builds them.
const (
	fleetTasks  = 8
	fleetTopics = 50
	fleetFill   = 10
	// stateApp is the process of the state scenario; it receives the
	// stateTopics, of fleetTasks partitions and no records.
	stateApp = "bench-state"
)

var stateTopics = []string{"state-a", "state-b"}

func fleetApp(i int) string { return fmt.Sprintf("app%04d", i) }

// startCluster starts a one-broker in-process cluster with topics (name →
// partitions) and returns it with the topics' IDs.
func startCluster(ctx context.Context, topics map[string]int32) (*kfake.Cluster, *kgo.Client, map[string]clock.TopicID, error) {
	var opts []kfake.Opt
	for name, n := range topics {
		opts = append(opts, kfake.SeedTopics(n, name))
	}
	c, err := kfake.NewCluster(append(opts, kfake.NumBrokers(1))...)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("starting the in-process broker: %w", err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0), kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		c.Close()
		return nil, nil, nil, err
	}
	md, err := kadm.NewClient(cl).Metadata(ctx)
	if err != nil {
		cl.Close()
		c.Close()
		return nil, nil, nil, fmt.Errorf("listing the seeded topics: %w", err)
	}
	ids := map[string]clock.TopicID{}
	for _, td := range md.Topics {
		ids[td.Topic] = clock.TopicID(td.ID)
	}
	return c, cl, ids, nil
}

// produce writes rs in batches.
func produce(ctx context.Context, cl *kgo.Client, rs []*kgo.Record) error {
	for len(rs) > 0 {
		n := min(len(rs), 20000)
		if err := cl.ProduceSync(ctx, rs[:n]...).FirstErr(); err != nil {
			return fmt.Errorf("seeding: %w", err)
		}
		rs = rs[n:]
	}
	return nil
}

// fleet is a seeded cluster of Parsley processes.
type fleet struct {
	cluster *kfake.Cluster
	procs   int
	took    time.Duration
	// liveBytes are the bytes of every live store: the key and value of
	// each changelog entry (none is replaced or deleted).
	liveBytes int64
}

// seedFleet starts a cluster of procs Parsley processes: every task's
// store holds its version, two bindings and two fed-up-to positions and,
// on every other task, one held record waiting for its neighbour topic
// (a lagging head); every group has committed offsets and no member.
func seedFleet(ctx context.Context, procs int) (*fleet, error) {
	start := time.Now()
	spec := map[string]int32{}
	for i := range fleetTopics {
		spec[fmt.Sprintf("t%02d", i)] = fleetTasks
	}
	for i := range procs {
		spec[parsley.ChangelogTopic(fleetApp(i))] = fleetTasks
	}
	c, cl, ids, err := startCluster(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var rs []*kgo.Record
	var live int64
	for i := range fleetTopics {
		for p := range int32(fleetTasks) {
			for range fleetFill {
				rs = append(rs, &kgo.Record{Topic: fmt.Sprintf("t%02d", i), Partition: p, Value: []byte("x")})
			}
		}
	}
	adm := kadm.NewClient(cl)
	for i := range procs {
		app := fleetApp(i)
		in := []string{fmt.Sprintf("t%02d", i%fleetTopics), fmt.Sprintf("t%02d", (i+1)%fleetTopics)}
		topic := parsley.ChangelogTopic(app)
		var offsets kadm.Offsets
		for p := range int32(fleetTasks) {
			entry := func(k parsley.Key, v []byte) {
				key := parsley.AppendKey(nil, k)
				live += int64(len(key) + len(v))
				rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Key: key, Value: v})
			}
			entry(parsley.Key{Tag: parsley.TagVersion}, []byte{parsley.StoreVersion})
			for _, name := range in {
				ch := clock.Channel{Topic: ids[name], Partition: p}
				entry(parsley.Key{Tag: parsley.TagName, Name: name}, parsley.AppendNameValue(nil, ids[name]))
				entry(parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch}, parsley.AppendPosition(nil, fleetFill-4))
				offsets.Add(kadm.Offset{Topic: name, Partition: p, At: fleetFill - 3, LeaderEpoch: -1})
			}
			if p%2 == 0 {
				v := parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: start.Add(-time.Minute).UnixMilli(), Key: []byte("k"), Value: make([]byte, 100),
					Causes: []clock.Entry{{Channel: clock.Channel{Topic: ids[in[1]], Partition: p}, Position: fleetFill - 2}}})
				entry(parsley.Key{Tag: parsley.TagHeld, Channel: clock.Channel{Topic: ids[in[0]], Partition: p}, Position: fleetFill - 4}, v)
			}
		}
		resp, err := adm.CommitOffsets(ctx, app, offsets)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("committing the offsets of %s: %w", app, err)
		}
	}
	if err := produce(ctx, cl, rs); err != nil {
		c.Close()
		return nil, err
	}
	return &fleet{cluster: c, procs: procs, took: time.Since(start), liveBytes: live}, nil
}

// stateSeed is the changelog the state scenario reads.
type stateSeed struct {
	cluster *kfake.Cluster
	entries int64 // changelog entries, tombstones included
	deleted int64 // tombstones
	held    int64 // live held records after the last entry
	// liveBytes are the bytes of the live store: the key and value of
	// every entry a later one did not replace or delete (issue 36's
	// measure of what state, processes and the exporter hold).
	liveBytes int64
	took      time.Duration
}

// seedState starts a cluster holding stateApp's ordering changelog of n
// entries over fleetTasks partitions, as a busy process writes it: held
// records on the task's two channels, three in ten entries a tombstone of
// a record held three positions earlier (delivered), one in ten a
// fed-up-to rewritten. The held records wait for the other channel, at a
// position beyond its end.
func seedState(ctx context.Context, n int64, rng *rand.Rand) (*stateSeed, error) {
	start := time.Now()
	spec := map[string]int32{parsley.ChangelogTopic(stateApp): fleetTasks}
	for _, name := range stateTopics {
		spec[name] = fleetTasks
	}
	c, cl, ids, err := startCluster(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	out := &stateSeed{cluster: c}
	topic := parsley.ChangelogTopic(stateApp)
	live := map[string]bool{}
	sizes := map[string]int{} // every live entry's key and value bytes
	var rs []*kgo.Record
	add := func(p int32, k parsley.Key, v []byte) {
		key := parsley.AppendKey(nil, k)
		rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Key: key, Value: v})
		out.entries++
		if id := string([]byte{byte(p)}) + string(key); v == nil {
			delete(sizes, id)
		} else {
			sizes[id] = len(key) + len(v)
		}
		if k.Tag == parsley.TagHeld {
			if v == nil {
				out.deleted++
				delete(live, string([]byte{byte(p)})+string(key))
			} else {
				live[string([]byte{byte(p)})+string(key)] = true
			}
		}
	}
	for p := range int32(fleetTasks) {
		add(p, parsley.Key{Tag: parsley.TagVersion}, []byte{parsley.StoreVersion})
		for _, name := range stateTopics {
			add(p, parsley.Key{Tag: parsley.TagName, Name: name}, parsley.AppendNameValue(nil, ids[name]))
		}
	}
	var pos [fleetTasks][2]int64
	ts := start.Add(-time.Hour).UnixMilli()
	for i := 0; out.entries < n-int64(len(stateTopics)*fleetTasks); i++ { // the last fed-up-to entries follow
		p := int32(i % fleetTasks)
		side := (i / fleetTasks) % 2
		ch := clock.Channel{Topic: ids[stateTopics[side]], Partition: p}
		other := clock.Channel{Topic: ids[stateTopics[1-side]], Partition: p}
		switch r := rng.IntN(10); {
		case r < 6:
			v := parsley.AppendHeldRecord(nil, &parsley.HeldRecord{Timestamp: ts + int64(i), Key: []byte("key"), Value: make([]byte, 32+rng.IntN(64)),
				Causes: []clock.Entry{{Channel: other, Position: 1 << 40}}})
			add(p, parsley.Key{Tag: parsley.TagHeld, Channel: ch, Position: pos[p][side]}, v)
			pos[p][side]++
		case r < 9:
			add(p, parsley.Key{Tag: parsley.TagHeld, Channel: ch, Position: max(0, pos[p][side]-3)}, nil)
		default:
			add(p, parsley.Key{Tag: parsley.TagFedUpTo, Channel: ch}, parsley.AppendPosition(nil, pos[p][side]-1))
		}
	}
	// Fed up to every held record, as a task is.
	for p := range int32(fleetTasks) {
		for side, name := range stateTopics {
			add(p, parsley.Key{Tag: parsley.TagFedUpTo, Channel: clock.Channel{Topic: ids[name], Partition: p}}, parsley.AppendPosition(nil, pos[p][side]-1))
		}
	}
	out.held = int64(len(live))
	for _, n := range sizes {
		out.liveBytes += int64(n)
	}
	if err := produce(ctx, cl, rs); err != nil {
		c.Close()
		return nil, err
	}
	out.took = time.Since(start)
	return out, nil
}
