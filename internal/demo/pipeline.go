package demo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/gate"
)

// simRec is one record the pipeline writes.
type simRec struct {
	id     int
	topic  string
	ch     clock.Channel
	off    int64
	clk    clock.Clock
	header []byte // the parsley.causes value; nil for no header
	order  string // the business key
	value  []byte
	step   int   // when it was committed
	anc    idSet // true causal past (Config.RecordTruth)
	forged bool  // written by a fault
	fault  bool  // the record that injects the fault
}

// service is one simulated node that consumes: it reads what its inputs
// committed, as late as its lags say, through a real gate, and reacts to
// each delivery by writing, stamped with the gate's Stamp.
type service struct {
	name    string
	cl      *kgo.Client // transactional
	g       *gate.Gate
	scope   []clock.Channel
	lag     map[string]int // topic → steps before a committed record is read
	inbox   map[clock.Channel][]*simRec
	pending map[clock.Channel][]*simRec // received, not yet delivered
	// delivered is the offset of the last record delivered per channel;
	// seed the claim of a channel where the run began, before any.
	delivered map[clock.Channel]int64
	seed      map[clock.Channel]int64
	past      idSet                   // everything delivered, and their pasts
	own       map[clock.Channel]idSet // own records per output channel
	evs       []gate.Event
	out       []*simRec // this step's writes
	react     func(p *pipeline, s *service, r *simRec)
}

// pipeline is the step simulation. One goroutine runs it (Demo.Run).
type pipeline struct {
	d       *Demo
	rng     *rand.Rand
	shop    *service // writes orders; consumes nothing, has no gate
	pay     *service
	ship    *service
	readers map[string][]*service // topic → services consuming it
	nextID  int
	lastOff map[clock.Channel]int64
	now     int  // the step running
	faulted bool // the fault's record was written
	// open is FaultOpenTxn's payment while its transaction is open, and
	// openWritten what its transaction produced.
	open        *simRec
	openWritten []*kgo.Record
}

func newPipeline(d *Demo) *pipeline {
	p := &pipeline{
		d:       d,
		rng:     rand.New(rand.NewPCG(d.cfg.Seed, 0x63617573616c)),
		readers: map[string][]*service{},
		lastOff: map[clock.Channel]int64{},
	}
	for ch, end := range d.starts {
		p.lastOff[ch] = end - 1
	}
	p.shop = &service{name: "shop", cl: d.txns[0], own: map[clock.Channel]idSet{}}
	p.pay = p.consumer("payments", d.txns[1], map[string]int{TopicOrders: 1}, reactPayment)
	p.ship = p.consumer("shipping", d.txns[2], map[string]int{TopicOrders: 3, TopicPayments: 0}, reactShipping)
	return p
}

// consumer makes a service reading the topics of lag, seeded at where this
// run begins: a restarted service claims what the log held before it.
func (p *pipeline) consumer(name string, cl *kgo.Client, lag map[string]int, react func(*pipeline, *service, *simRec)) *service {
	s := &service{name: name, cl: cl, lag: lag, react: react,
		inbox: map[clock.Channel][]*simRec{}, pending: map[clock.Channel][]*simRec{}, own: map[clock.Channel]idSet{},
		delivered: map[clock.Channel]int64{}, seed: map[clock.Channel]int64{}}
	var opts []gate.Option
	for _, ch := range p.d.chans {
		if _, ok := lag[p.topic(ch)]; ok {
			s.scope = append(s.scope, ch)
			opts = append(opts, gate.WithStart(ch, p.d.starts[ch]))
			s.seed[ch] = p.d.starts[ch] - 1
		}
	}
	for topic := range lag {
		p.readers[topic] = append(p.readers[topic], s)
	}
	g, err := gate.New(s.scope, opts...)
	if err != nil {
		panic(err) // the channels come from the broker's metadata
	}
	s.g = g
	return s
}

func (p *pipeline) topic(ch clock.Channel) string {
	name, _ := p.d.names.Name(ch.Topic)
	return name
}

func (p *pipeline) channel(topic string, partition int32) clock.Channel {
	return clock.Channel{Topic: p.d.ids[topic], Partition: partition}
}

// step runs one step: the shop writes orders, then the payment service and
// the shipping service read what is due, deliver, and write.
func (p *pipeline) step(ctx context.Context, t int) error {
	p.now = t
	for range 1 + p.rng.IntN(3) {
		part := int32(p.rng.IntN(3))
		r := p.emit(p.shop, TopicOrders, part, "")
		r.value = fmt.Appendf(nil, `{"id":%d,"type":"order","order":%q,"amount":%d}`, r.id, r.order, 5+p.rng.IntN(200))
		if p.rng.IntN(4) == 0 {
			r.header = nil // a producer that stamps nothing claims nothing
		}
	}
	if err := p.flush(ctx, p.shop, 3); err != nil {
		return err
	}
	for _, s := range []*service{p.pay, p.ship} {
		if err := p.poll(s, t); err != nil {
			return fmt.Errorf("%s service: %w", s.name, err)
		}
		if err := p.flush(ctx, s, 0); err != nil {
			return err
		}
	}
	if t == p.d.cfg.FaultStep {
		switch p.d.cfg.Fault {
		case FaultCycle:
			if err := p.forgeCycle(ctx); err != nil {
				return fmt.Errorf("forging the cycle: %w", err)
			}
			p.d.markFaulted()
		case FaultSlow:
			p.d.markFaulted() // the feed stalls from now: see Watch
		case FaultOpenTxn:
			if err := p.openTxn(ctx); err != nil {
				return fmt.Errorf("opening the late transaction: %w", err)
			}
		}
	}
	if p.open != nil && t >= p.d.cfg.FaultStep+OpenTxnSteps {
		if err := p.commitOpen(ctx); err != nil {
			return fmt.Errorf("committing the late transaction: %w", err)
		}
		// Recorded as committed, but handed to no reader: the shipping
		// service has read past its offset, and a late record would be an
		// out-of-order feed.
		p.record([]*simRec{p.open})
		p.open, p.openWritten = nil, nil
	}
	return nil
}

// commitOpen commits FaultOpenTxn's transaction, or, when the broker
// aborted it instead, writes its payment again in a new one.
func (p *pipeline) commitOpen(ctx context.Context) error {
	err := p.d.endTxn(ctx, p.d.txns[3], p.openWritten, true)
	if !errors.Is(err, errTxnAborted) {
		return err
	}
	p.d.aborted.Add(int64(len(p.openWritten)))
	return p.txn(ctx, p.d.txns[3], []*simRec{p.open}, true)
}

// openTxn begins FaultOpenTxn's transaction on payments/1 and writes one
// payment in it, leaving it open.
func (p *pipeline) openTxn(ctx context.Context) error {
	r := p.emit(p.pay, TopicPayments, 1, "")
	p.pay.out = p.pay.out[:len(p.pay.out)-1] // written here, not by the service's flush
	r.value = fmt.Appendf(nil, `{"id":%d,"type":"payment","order":%q,"payment":"late-%d"}`, r.id, r.order, r.id)
	written, err := p.begin(ctx, p.d.txns[3], []*simRec{r})
	if err != nil {
		return err
	}
	r.step, r.fault = p.now, true
	p.open, p.openWritten = r, written
	p.d.markFaulted()
	return nil
}

// poll feeds s every committed record it is due to read by step t, its
// inputs interleaved at random (each in offset order), and lets it react
// to each delivery.
func (p *pipeline) poll(s *service, t int) error {
	var open []clock.Channel
	var delivered []*simRec
	for {
		open = open[:0]
		for _, ch := range s.scope {
			if q := s.inbox[ch]; len(q) > 0 && q[0].step+s.lag[q[0].topic] <= t {
				open = append(open, ch)
			}
		}
		if len(open) == 0 {
			return nil
		}
		ch := open[p.rng.IntN(len(open))]
		r := s.inbox[ch][0]
		s.inbox[ch][0] = nil
		s.inbox[ch] = s.inbox[ch][1:]
		s.pending[ch] = append(s.pending[ch], r)
		if err := s.g.Receive(ch, r.off, r.clk, nil); err != nil {
			return err
		}
		delivered = delivered[:0]
		s.evs = s.g.Drain(s.evs[:0])
		for _, ev := range s.evs {
			q := s.pending[ev.Channel]
			if ev.Kind != gate.EventDeliver || len(q) == 0 || q[0].off != ev.Offset {
				return fmt.Errorf("unexpected %v", ev)
			}
			delivered = append(delivered, q[0])
			s.delivered[ev.Channel] = ev.Offset
			q[0] = nil
			s.pending[ev.Channel] = q[1:]
		}
		if p.d.cfg.RecordTruth {
			for _, d := range delivered {
				s.past.add(d.id)
				s.past.union(d.anc)
			}
		}
		for _, d := range delivered {
			s.react(p, s, d)
		}
	}
}

// emit makes a record of s on topic/partition, stamped with what s would
// claim now, and queues it for this step's write.
func (p *pipeline) emit(s *service, topic string, part int32, order string) *simRec {
	ch := p.channel(topic, part)
	r := &simRec{id: p.nextID, topic: topic, ch: ch, order: order}
	p.nextID++
	if r.order == "" {
		r.order = "o-" + strconv.Itoa(r.id)
	}
	if s.g != nil {
		r.clk = s.stamp()
	}
	r.header = clock.Encode(r.clk)
	if p.d.cfg.RecordTruth {
		own := s.own[ch]
		r.anc = s.past.clone()
		r.anc.union(own)
		own.add(r.id)
		s.own[ch] = own
	}
	s.out = append(s.out, r)
	return r
}

// stamp is what s claims on a record it writes now, as Parsley stamps: the
// clocks it received, folded, and the last record it delivered on each
// channel it consumes (before any, where its run began). Unlike the gate's
// Stamp it never claims the settled position below a held head, which may
// be a transaction marker: Parsley's wire contract forbids naming one.
func (s *service) stamp() clock.Clock {
	var es []clock.Entry
	for _, ch := range s.scope {
		es = append(es, s.g.Carried(ch).Entries()...)
		if off, ok := s.delivered[ch]; ok {
			es = append(es, clock.Entry{Channel: ch, Position: off})
		} else if seed := s.seed[ch]; seed >= 0 {
			es = append(es, clock.Entry{Channel: ch, Position: seed})
		}
	}
	return clock.MustNew(es...)
}

func reactPayment(p *pipeline, s *service, order *simRec) {
	if p.rng.IntN(100) >= 85 {
		return // not paid (yet)
	}
	part := order.ch.Partition % 2
	if p.d.cfg.Fault == FaultMarkerClaim && p.faulted {
		part = 0 // nothing follows the claimed marker on payments/1
	}
	r := p.emit(s, TopicPayments, part, order.order)
	r.value = fmt.Appendf(nil, `{"id":%d,"type":"payment","order":%q,"payment":"p-%d"}`, r.id, r.order, r.id)
}

func reactShipping(p *pipeline, s *service, in *simRec) {
	event := "shipped"
	part := in.ch.Partition
	if in.topic == TopicOrders {
		if p.rng.IntN(100) >= 30 {
			return
		}
		event, part = "packing", part%2
	}
	r := p.emit(s, TopicShipments, part, in.order)
	r.value = fmt.Appendf(nil, `{"id":%d,"type":"shipment","order":%q,"event":%q}`, r.id, r.order, event)
	if p.d.cfg.Fault == FaultUnfolded && p.now >= p.d.cfg.FaultStep && in.topic == TopicPayments {
		// A hand-rolled producer: it claims the payment it reacts to and
		// folds nothing it received, so the order that payment claims
		// hides behind payments.
		r.clk = clock.MustNew(clock.Entry{Channel: in.ch, Position: in.off})
		r.header = clock.Encode(r.clk)
		r.forged = true
		if !p.faulted {
			r.fault, p.faulted = true, true
		}
		return
	}
	if p.faulted || p.now < p.d.cfg.FaultStep {
		return
	}
	if (p.d.cfg.Fault == FaultDangling || p.d.cfg.Fault == FaultMarkerClaim) && part != 1 {
		// The forged claim is on payments/1: the notifier's task 1, which
		// receives partition 1 of every topic, holds it only on
		// shipments/1 (a task's gate waits on its own scope only).
		return
	}
	switch p.d.cfg.Fault {
	case FaultUndecodable:
		r.header = r.header[:len(r.header)-1] // cut short: truncated
	case FaultDangling:
		// A claim on payments/1 far beyond anything written.
		ch := p.channel(TopicPayments, 1)
		r.clk = r.clk.With(ch, p.lastOff[ch]+1_000_000)
		r.header = clock.Encode(r.clk)
	case FaultMarkerClaim:
		// The payments service writes in transactions only, so the
		// offset after its last payment on payments/1 is that
		// transaction's commit marker — once it wrote one in this run.
		ch := p.channel(TopicPayments, 1)
		if p.lastOff[ch] < p.d.starts[ch] {
			return
		}
		r.clk = r.clk.With(ch, p.lastOff[ch]+1)
		r.header = clock.Encode(r.clk)
	default:
		return
	}
	r.forged, r.fault, p.faulted = true, true, true
}

// flush writes this step's records of s: plainPct percent of the time
// without a transaction, otherwise in one, which one time in six first
// aborts an attempt holding the same records.
func (p *pipeline) flush(ctx context.Context, s *service, plainPct int) error {
	recs := s.out
	s.out = nil
	if len(recs) == 0 {
		return nil
	}
	roll := p.rng.IntN(100)
	switch {
	case roll < plainPct:
		if _, err := produce(ctx, p.d.plain, recs); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	default:
		if roll%6 == 0 {
			if err := p.txn(ctx, s.cl, recs, false); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
		}
		if err := p.txn(ctx, s.cl, recs, true); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	p.committed(recs)
	return nil
}

// produce writes recs and notes their offsets. It returns the records the
// broker took, all of them unless err is set.
func produce(ctx context.Context, cl *kgo.Client, recs []*simRec) (written []*kgo.Record, err error) {
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krs[i] = &kgo.Record{Topic: r.topic, Partition: r.ch.Partition, Key: []byte(r.order), Value: r.value}
		if r.header != nil {
			krs[i].Headers = []kgo.RecordHeader{{Key: clock.HeaderCauses, Value: r.header}}
		}
	}
	if written, err = produceSync(ctx, cl, krs); err != nil {
		return written, err
	}
	for i, r := range recs {
		r.off = krs[i].Offset
	}
	return written, nil
}

// txn writes recs in one transaction and commits it, or aborts it when
// commit is false; the records of every attempt that did not commit count
// in Aborted.
func (p *pipeline) txn(ctx context.Context, cl *kgo.Client, recs []*simRec, commit bool) error {
	aborted := func(written int) { p.d.aborted.Add(int64(written)) }
	if commit {
		return p.d.transact(ctx, cl, func() ([]*kgo.Record, error) { return produce(ctx, cl, recs) }, aborted)
	}
	written, err := p.begin(ctx, cl, recs)
	if err != nil {
		return err
	}
	if err := p.d.endTxn(ctx, cl, written, false); err != nil {
		return err
	}
	aborted(len(written))
	return nil
}

// begin begins a transaction of cl and writes recs in it, leaving it open;
// it returns what the transaction produced.
func (p *pipeline) begin(ctx context.Context, cl *kgo.Client, recs []*simRec) ([]*kgo.Record, error) {
	return inTxn(ctx, cl, func() ([]*kgo.Record, error) { return produce(ctx, cl, recs) },
		func(written int) { p.d.aborted.Add(int64(written)) })
}

// committed hands committed records to the services that read their topic
// and records their truth.
func (p *pipeline) committed(recs []*simRec) {
	for _, r := range recs {
		r.step = p.now
		for _, s := range p.readers[r.topic] {
			s.inbox[r.ch] = append(s.inbox[r.ch], r)
		}
		if r.fault {
			p.d.markFaulted()
		}
	}
	p.record(recs)
}

// record counts committed records and records their truth.
func (p *pipeline) record(recs []*simRec) {
	for _, r := range recs {
		p.lastOff[r.ch] = max(p.lastOff[r.ch], r.off)
	}
	p.d.produced.Add(int64(len(recs)))
	if !p.d.cfg.RecordTruth {
		return
	}
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	for _, r := range recs {
		p.d.truth = append(p.d.truth, TrueRecord{ID: r.id, Channel: r.ch, Offset: r.off, Step: p.now, Ancestors: r.anc.ids(), Forged: r.forged})
	}
}

// forgeCycle writes a payment on payments/0 claiming the next shipment of
// shipments/0, and that shipment claiming the payment: each waits for the
// other. Nothing else writes meanwhile (the pipeline writes one thing at a
// time, and no transaction is open), so the next offsets are the log ends.
func (p *pipeline) forgeCycle(ctx context.Context) error {
	pay, ship := p.channel(TopicPayments, 0), p.channel(TopicShipments, 0)
	ends, err := kadm.NewClient(p.d.plain).ListEndOffsets(ctx, TopicPayments, TopicShipments)
	if err != nil {
		return err
	}
	pe, _ := ends.Lookup(TopicPayments, 0)
	se, _ := ends.Lookup(TopicShipments, 0)
	if pe.Err != nil || se.Err != nil {
		return fmt.Errorf("log ends: %v %v", pe.Err, se.Err)
	}
	forged := func(topic string, ch clock.Channel, claim clock.Entry, typ string) *simRec {
		r := &simRec{id: p.nextID, topic: topic, ch: ch, order: "forged", forged: true}
		p.nextID++
		r.clk = clock.MustNew(claim)
		r.header = clock.Encode(r.clk)
		r.value = fmt.Appendf(nil, `{"id":%d,"type":%q,"order":"forged"}`, r.id, typ)
		return r
	}
	fp := forged(TopicPayments, pay, clock.Entry{Channel: ship, Position: se.Offset}, "payment")
	fs := forged(TopicShipments, ship, clock.Entry{Channel: pay, Position: pe.Offset}, "shipment")
	for _, r := range []*simRec{fp, fs} {
		if _, err := produce(ctx, p.d.plain, []*simRec{r}); err != nil {
			return err
		}
	}
	if fp.off != pe.Offset || fs.off != se.Offset {
		return fmt.Errorf("forged records landed at %d and %d, not at the log ends %d and %d", fp.off, fs.off, pe.Offset, se.Offset)
	}
	p.committed([]*simRec{fp, fs})
	return nil
}
