// Package demo is the world of `causalctl demo`: an embedded Kafka-protocol
// broker (an in-process kfake cluster) and a small simulated causal
// pipeline writing real, honestly stamped records into it.
//
// Three services write: a shop writes orders; a payment service consumes
// orders and writes payments; a shipping service consumes orders and
// payments and writes shipments. Each consuming service runs a real
// delivery gate over what it reads and stamps every record it writes with
// the gate's Stamp — its carried clocks, folded at receipt, joined with its
// delivered prefix — encoded as a parsley.causes header naming the broker's
// own topic UUIDs. Some writes are transactions and some of those abort, so
// offsets have gaps.
//
// The watched node, a notifier consuming all three topics, is a real
// Parsley-format process (Notifier, StartNotifier): application id and
// group "notifier", one gate per task, its ordering state kept in the
// compacted changelog notifier-__parsley.ordering-changelog inside its
// transactions, as SPEC §6 describes. Its shadow, shown live by `demo`, is
// whatever else reads the broker (internal/live, over a kafka.Follower).
// Watch wraps either's feed with the notifier's lag, under which effects
// arrive before their causes and are held.
//
// The pipeline is a step simulation: what each service reads at a step,
// what it delivers and writes, and so every record, header and offset, are
// a function of the seed and the fault alone (and of the log ends when it
// starts). Wall time only paces the steps.
package demo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
)

// The demo's topics.
const (
	TopicOrders    = "orders"
	TopicPayments  = "payments"
	TopicShipments = "shipments"
)

// Topics lists the demo's topics with their partition counts, in pipeline
// order.
var Topics = []struct {
	Name       string
	Partitions int32
}{
	{TopicOrders, 3},
	{TopicPayments, 2},
	{TopicShipments, 2},
}

// Fault is a failure the demo injects for the diagnosis features to reveal.
type Fault string

// The faults of --fault.
const (
	NoFault Fault = ""
	// FaultUndecodable: one shipment carries a corrupt parsley.causes
	// header (cut short: truncated). The watched node fails closed at it.
	FaultUndecodable Fault = "undecodable"
	// FaultDangling: one shipment claims a payments position that is
	// never written. Its head stays held with a not-received blocker, and
	// its partition behind it.
	FaultDangling Fault = "dangling"
	// FaultSlow: the watched node's feed of payments stalls (as when a
	// partition leader stops answering its fetches), then recovers:
	// shipments that claim those payments pile up in hold queues, then
	// drain. The records written are those of a run without fault.
	FaultSlow Fault = "slow"
	// FaultCycle: a payment and a shipment are forged to claim each
	// other. The watched node holds both and reports a wait cycle.
	FaultCycle Fault = "cycle"
	// FaultUnfolded: from the fault step on, the shipping service stamps
	// each shipment it writes for a payment with that payment's position
	// only, without folding the clocks it received (a hand-rolled
	// producer). A node consuming orders and shipments but not payments
	// can then deliver a shipment before the order its payment claims;
	// nothing fails and nothing is held. `causalctl check --scope
	// orders,shipments` finds the holes.
	FaultUnfolded Fault = "unfolded"
	// FaultOpenTxn: a late payments producer (transactional id
	// TxnLatePayment) begins a transaction on payments/1, writes one
	// payment and leaves the transaction open for OpenTxnSteps steps
	// before it commits. The last stable offset of payments/1 stays at
	// that payment meanwhile: shipments claiming later payments on
	// payments/1 are held, their cause open-transaction, naming the
	// producer.
	FaultOpenTxn Fault = "open-txn"
	// FaultMarkerClaim: one shipment claims the offset of the commit
	// marker that ends the last transaction on payments/1, and no payment
	// is written to payments/1 after it. A node that settles only on
	// receipt (--position-advance=false) holds it for good: not-a-record.
	FaultMarkerClaim Fault = "marker-claim"
)

// TxnLatePayment is the transactional id of FaultOpenTxn's producer.
const TxnLatePayment = "causalctl-demo-late-payment"

// OpenTxnSteps is how long FaultOpenTxn keeps its transaction open: five
// seconds at the default tick, below the transaction timeout.
const OpenTxnSteps = 50

// Faults lists the faults, in the order help text shows them.
var Faults = []Fault{FaultUndecodable, FaultDangling, FaultSlow, FaultCycle, FaultUnfolded, FaultOpenTxn, FaultMarkerClaim}

// ParseFault reads a --fault value ("" or "none" for no fault).
func ParseFault(s string) (Fault, error) {
	if s == "" || s == "none" {
		return NoFault, nil
	}
	f := Fault(s)
	if !slices.Contains(Faults, f) {
		return NoFault, fmt.Errorf("fault %q: want undecodable, dangling, slow, cycle, unfolded, open-txn or marker-claim", s)
	}
	return f, nil
}

// Defaults of Config.
const (
	DefaultListen    = "127.0.0.1:0"
	DefaultTick      = 100 * time.Millisecond
	DefaultFaultStep = 20 // two seconds at the default tick
	DefaultStall     = 4 * time.Second
)

// DefaultLags returns how late the watched node reads each topic (see
// Watch): orders well behind payments and shipments, so that effects
// arrive before their causes.
func DefaultLags() map[string]time.Duration {
	return map[string]time.Duration{
		TopicOrders:   1200 * time.Millisecond,
		TopicPayments: 300 * time.Millisecond,
	}
}

// Config sets up a Demo.
type Config struct {
	// Listen is the broker's address (default DefaultListen: a free port
	// on 127.0.0.1). A host that is unspecified (":9092", "0.0.0.0:9092")
	// listens on every interface and advertises 127.0.0.1.
	Listen string
	// DataDir, when set, keeps the broker's state (topics, their UUIDs,
	// records, transactions) in that directory across runs; without it
	// everything is in memory and gone at Close.
	DataDir string
	// Seed chooses the pipeline's random choices.
	Seed uint64
	// Fault is the failure to inject, if any.
	Fault Fault
	// Tick is the wall time of one pipeline step; 0 runs steps back to
	// back (tests). The command uses DefaultTick.
	Tick time.Duration
	// Steps stops the pipeline after that many steps; 0 runs until the
	// context is done.
	Steps int
	// FaultStep is the step at which the fault is injected (default
	// DefaultFaultStep).
	FaultStep int
	// Lags overrides DefaultLags() (topic → how late the watched node
	// reads it); Stall is how long the slow fault stalls the payments
	// feed (default DefaultStall).
	Lags  map[string]time.Duration
	Stall time.Duration
	// RecordTruth keeps the true causal past of every record written
	// (Truth). It grows without bound: for tests.
	RecordTruth bool
}

// Demo is a running embedded broker with the pipeline ready to write.
type Demo struct {
	cfg     Config
	cluster *kfake.Cluster
	addr    string
	names   *clock.Names
	ids     map[string]clock.TopicID
	chans   []clock.Channel
	starts  map[clock.Channel]int64
	resumed bool

	plain *kgo.Client // non-transactional writes, and admin
	txns  []*kgo.Client
	p     *pipeline

	produced, aborted atomic.Int64
	faultOnce         sync.Once
	faulted           chan struct{}

	mu        sync.Mutex
	truth     []TrueRecord
	ran       bool
	notifiers []*Notifier // started, stopped at Close

	onStep func(step int) // tests: called after each step
	// beforeEnd, when set, is called by every transactional producer of
	// the demo and its notifiers just before it ends a transaction, with
	// what the transaction produced and whether it is to commit: tests
	// put the producer in the state in which franz-go aborts a commit
	// (see endTxn).
	beforeEnd func(cl *kgo.Client, written []*kgo.Record, commit bool)
}

// New starts the broker on cfg.Listen, creates the topics (or finds them
// in cfg.DataDir) and connects the services' producers. Nothing is written
// until Run.
func New(ctx context.Context, cfg Config) (_ *Demo, err error) {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.FaultStep <= 0 {
		cfg.FaultStep = DefaultFaultStep
	}
	if cfg.Stall <= 0 {
		cfg.Stall = DefaultStall
	}
	if cfg.Lags == nil {
		cfg.Lags = DefaultLags()
	}
	if _, err := ParseFault(string(cfg.Fault)); err != nil {
		return nil, err
	}
	if _, _, err := net.SplitHostPort(cfg.Listen); err != nil {
		return nil, fmt.Errorf("listen address %q: %w", cfg.Listen, err)
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.ClusterID("causalctl-demo"),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return listen(network, cfg.Listen) }),
	}
	for _, t := range Topics {
		opts = append(opts, kfake.SeedTopics(t.Partitions, t.Name))
	}
	if cfg.DataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.DataDir))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting the embedded broker: %w", err)
	}
	d := &Demo{cfg: cfg, cluster: c, addr: c.ListenAddrs()[0], names: &clock.Names{}, ids: map[string]clock.TopicID{}, faulted: make(chan struct{})}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	if d.plain, err = d.client(""); err != nil {
		return nil, err
	}
	if err := d.setupTopics(ctx); err != nil {
		return nil, err
	}
	for _, id := range []string{"causalctl-demo-shop", "causalctl-demo-payments", "causalctl-demo-shipping", TxnLatePayment} {
		cl, err := d.client(id)
		if err != nil {
			return nil, err
		}
		d.txns = append(d.txns, cl)
	}
	d.p = newPipeline(d)
	return d, nil
}

// client returns a producing client of the embedded broker, transactional
// when txid is set.
func (d *Demo) client(txid string) (*kgo.Client, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(d.addr),
		kgo.ClientID("causalctl-demo"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
		kgo.DisableClientMetrics(),
	}
	if txid != "" {
		opts = append(opts, kgo.TransactionalID(txid), kgo.TransactionTimeout(10*time.Second))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("demo producer: %w", err)
	}
	return cl, nil
}

// listen listens on addr; when its host is unspecified, the listener
// advertises 127.0.0.1 (kfake advertises what Addr says).
func listen(network, addr string) (net.Listener, error) {
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, fmt.Errorf("embedded broker: %w", err)
	}
	ta, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !ta.IP.IsUnspecified() {
		return ln, nil
	}
	return advertised{ln, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: ta.Port}}, nil
}

type advertised struct {
	net.Listener
	addr net.Addr
}

func (a advertised) Addr() net.Addr { return a.addr }

// setupTopics makes sure the topics exist with the demo's partition counts
// (a data directory may already hold them), learns their UUIDs and notes
// where each channel's log ends now: where this run begins.
func (d *Demo) setupTopics(ctx context.Context) error {
	adm := kadm.NewClient(d.plain)
	var names []string
	for _, t := range Topics {
		names = append(names, t.Name)
	}
	md, err := adm.Metadata(ctx, names...)
	if err != nil {
		return fmt.Errorf("embedded broker metadata: %w", err)
	}
	for _, t := range Topics {
		td, ok := md.Topics[t.Name]
		if ok && td.Err == nil {
			if n := int32(len(td.Partitions)); n != t.Partitions {
				return fmt.Errorf("the data directory holds topic %s with %d partitions; the demo needs %d: use another --data-dir", t.Name, n, t.Partitions)
			}
			continue
		}
		if _, err := adm.CreateTopic(ctx, t.Partitions, 1, nil, t.Name); err != nil {
			return fmt.Errorf("creating topic %s: %w", t.Name, err)
		}
	}
	if md, err = adm.Metadata(ctx, names...); err != nil {
		return fmt.Errorf("embedded broker metadata: %w", err)
	}
	for _, t := range Topics {
		id := clock.TopicID(md.Topics[t.Name].ID)
		if id.IsZero() {
			return fmt.Errorf("topic %s has no UUID", t.Name)
		}
		d.ids[t.Name] = id
		if err := d.names.Add(t.Name, id); err != nil {
			return err
		}
		for p := range t.Partitions {
			d.chans = append(d.chans, clock.Channel{Topic: id, Partition: p})
		}
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return fmt.Errorf("embedded broker offsets: %w", err)
	}
	d.starts = map[clock.Channel]int64{}
	var ferr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			ferr = o.Err
			return
		}
		d.starts[clock.Channel{Topic: d.ids[o.Topic], Partition: o.Partition}] = o.Offset
		if o.Offset > 0 {
			d.resumed = true
		}
	})
	if ferr != nil {
		return fmt.Errorf("embedded broker offsets: %w", ferr)
	}
	return nil
}

// Addr returns the broker's address, host:port, for any Kafka client.
func (d *Demo) Addr() string { return d.addr }

// Names returns the topic names and UUIDs.
func (d *Demo) Names() *clock.Names {
	n := &clock.Names{}
	for name, id := range d.ids {
		_ = n.Add(name, id)
	}
	return n
}

// TopicID returns a topic's UUID.
func (d *Demo) TopicID(topic string) clock.TopicID { return d.ids[topic] }

// Channels returns every channel of the demo's topics: the watched node's
// scope, in pipeline order.
func (d *Demo) Channels() []clock.Channel { return slices.Clone(d.chans) }

// Starts returns where each channel's log ended when the demo started:
// where this run's records begin (0 on a new broker).
func (d *Demo) Starts() map[clock.Channel]int64 { return maps.Clone(d.starts) }

// Resumed reports whether the data directory held records of an earlier
// run.
func (d *Demo) Resumed() bool { return d.resumed }

// Config returns the configuration, defaults filled in.
func (d *Demo) Config() Config { return d.cfg }

// Produced returns how many records the pipeline has written and
// committed so far (aborted attempts not counted); Aborted how many were
// written in transactions that aborted.
func (d *Demo) Produced() int64 { return d.produced.Load() }

// Aborted returns how many records were written in aborted transactions.
func (d *Demo) Aborted() int64 { return d.aborted.Load() }

// Faulted is closed once the fault has been injected.
func (d *Demo) Faulted() <-chan struct{} { return d.faulted }

func (d *Demo) markFaulted() { d.faultOnce.Do(func() { close(d.faulted) }) }

// Run runs the pipeline, one step per Tick, until ctx is done or Steps
// steps have run; it returns nil then, or the error of a write that
// failed. A step once begun is finished (its transactions end) even when
// ctx is done meanwhile, so the log never keeps an open transaction. Run
// may be called once.
func (d *Demo) Run(ctx context.Context) error {
	d.mu.Lock()
	if d.ran {
		d.mu.Unlock()
		return errors.New("demo: Run called twice")
	}
	d.ran = true
	d.mu.Unlock()
	var tick *time.Ticker
	if d.cfg.Tick > 0 {
		tick = time.NewTicker(d.cfg.Tick)
		defer tick.Stop()
	}
	for step := 0; d.cfg.Steps == 0 || step < d.cfg.Steps; step++ {
		if tick != nil && step > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := d.p.step(wctx, step)
		cancel()
		if err != nil {
			return fmt.Errorf("demo pipeline, step %d: %w", step, err)
		}
		if d.onStep != nil {
			d.onStep(step)
		}
	}
	return nil
}

// Close stops the producers and the broker (which saves its state when
// DataDir is set). Call it after Run has returned.
func (d *Demo) Close() {
	d.mu.Lock()
	ns := d.notifiers
	d.mu.Unlock()
	for _, n := range ns {
		n.Stop()
	}
	for _, cl := range d.txns {
		cl.Close()
	}
	if d.plain != nil {
		d.plain.Close()
	}
	d.cluster.Close()
}

// TrueRecord is one committed record and its true causal past: the IDs of
// every record delivered to its writer before it was written, their pasts,
// and the writer's earlier records on the same channel. It is recorded by
// the simulation itself, never read from a clock.
type TrueRecord struct {
	ID      int
	Channel clock.Channel
	Offset  int64
	// Step is the pipeline step that committed it.
	Step int
	// Ancestors are record IDs, ascending.
	Ancestors []int
	// Forged is set for the records of a fault, whose claims are out of
	// contract.
	Forged bool
}

// Truth returns every committed record of this run with its true causal
// past, in the order written; nil unless Config.RecordTruth. Each record's
// value is JSON with its "id".
func (d *Demo) Truth() []TrueRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.truth)
}
