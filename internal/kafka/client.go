package kafka

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/causalctl/causalctl/internal/clock"
)

// Client is a read-only connection to a Kafka cluster. It never joins a
// consumer group, never commits offsets and never produces: it only reads
// metadata, offsets, committed group offsets and records (read_committed).
// Its methods may be called from several goroutines, but one Range must be
// read by one goroutine at a time.
type Client struct {
	cfg          Config
	cl           *kgo.Client
	adm          *kadm.Client
	decompressor kgo.Decompressor

	mu    sync.Mutex
	ids   map[string]clock.TopicID // every topic name seen in this run
	names map[clock.TopicID]string
}

// Dial connects to the cluster described by cfg and checks that a broker
// answers (TLS and SASL included) within the dial timeout plus the request
// timeout. Failures are typed: *ConnectError when no broker answers,
// *AuthError when SASL fails.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("no brokers to connect to")
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID("causalctl"),
		kgo.DialTimeout(cfg.dialTimeout()),
		kgo.RequestTimeoutOverhead(cfg.requestTimeout()),
		// ListOffsets is asked again by listAt, on its clock and per
		// partition: kgo would ask every partition of a broker again for
		// one that keeps failing, for its whole retry timeout.
		kgo.RetryTimeoutFn(func(key int16) time.Duration {
			if key == int16(kmsg.ListOffsets) {
				return time.Nanosecond
			}
			return cfg.requestTimeout()
		}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DisableClientMetrics(),
	}
	if cfg.TLS != nil {
		tc, err := cfg.TLS.build()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	watch := new(saslWatch)
	if cfg.SASL != nil {
		mech, err := cfg.SASL.mechanism()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(mech), kgo.WithHooks(watch))
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.dialTimeout()+cfg.requestTimeout())
	defer cancel()
	live := &liveness{wait: cfg.dialTimeout(), probes: map[int32]*probe{}}
	defer live.stop()
	opts = append(opts, kgo.WithHooks(live))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	c := &Client{
		cfg:          cfg,
		cl:           cl,
		adm:          kadm.NewClient(cl),
		decompressor: kgo.DefaultDecompressor(),
		ids:          make(map[string]clock.TopicID),
		names:        make(map[clock.TopicID]string),
	}
	first, errs := live.probeSeeds(pctx, cl)
	if first >= 0 {
		if len(cfg.Brokers) > 1 {
			// Later requests go to any seed until brokers are discovered:
			// keep only one that answered, so that none waits on a
			// silent one.
			if err := cl.UpdateSeedBrokers(cfg.Brokers[first]); err != nil {
				cl.Close()
				return nil, fmt.Errorf("kafka client: %w", err)
			}
		}
		return c, nil
	}
	cl.Close()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, c.dialError(errs, watch.failed.Load())
}

// dialError makes one error of the seeds' failures (one per seed, in
// order): an authentication failure if any seed reported one, since
// retrying cannot help; a single seed's silence as it is; otherwise a
// *ConnectError naming every seed and each one's failure.
func (c *Client) dialError(errs []error, saslDropped bool) error {
	var all seedErrors
	for _, err := range errs {
		if saslDropped && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
			err = fmt.Errorf("the broker closed the connection instead of accepting the credentials: %w", err)
			return &AuthError{Mechanism: c.cfg.SASL.Mechanism, User: c.cfg.SASL.User, Err: err}
		}
		err = c.classify(explainTLS(err))
		if _, ok := errors.AsType[*AuthError](err); ok {
			return err
		}
		if ce, ok := errors.AsType[*ConnectError](err); ok {
			err = ce.Err // named once, by the ConnectError made below
		}
		all = append(all, err)
	}
	if _, ok := errors.AsType[*NoResponseError](all[0]); ok && len(all) == 1 {
		return all[0]
	}
	if len(all) == 1 {
		return &ConnectError{Brokers: c.cfg.Brokers, Err: all[0]}
	}
	return &ConnectError{Brokers: c.cfg.Brokers, Err: all}
}

// explainTLS says what to do about the TLS failures that have a setting
// for a fix, or none: a certificate for another host name, and a broker
// that offers only TLS versions below 1.2.
func explainTLS(err error) error {
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return fmt.Errorf("%w (the certificate names another host: verify against one of its names with --tls-server-name)", err)
	}
	// crypto/tls reports the broker's protocol_version alert as a
	// *net.OpError "remote error" over an unexported type: its text is
	// all there is to go by.
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "remote error" && oe.Err != nil && oe.Err.Error() == "tls: protocol version not supported" {
		return fmt.Errorf("%w (the broker offers only TLS versions older than TLS 1.2, which causalctl refuses)", err)
	}
	return err
}

// seedErrors are the failures of several seeds, in seed order.
type seedErrors []error

// Error joins the distinct failures on one line.
func (e seedErrors) Error() string {
	var texts []string
	for _, err := range e {
		if t := err.Error(); !slices.Contains(texts, t) {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, "; ")
}

// Unwrap returns the failures, for errors.Is and errors.As.
func (e seedErrors) Unwrap() []error { return e }

// liveness fails the first contact with a seed broker that accepts the
// TCP connection but sends no Kafka response within wait (the dial
// timeout): a port that is not a Kafka listener, a proxy with nothing
// behind it, a broker that hangs. Without it that takes the dial and
// request timeouts together, tens of seconds. Each seed is probed on its
// own, at once, so a silent seed fails the dial only when no other seed
// answers.
type liveness struct {
	wait time.Duration

	mu      sync.Mutex
	probes  map[int32]*probe // by the seed's broker ID, while probing
	stopped bool
	timers  []*time.Timer
}

// probe is the first contact with one seed.
type probe struct {
	addr     string
	cancel   context.CancelCauseFunc
	answered bool
}

// seedID is the broker ID kgo gives the i-th seed broker until metadata
// names it (its BrokerMetadata.NodeID in hooks).
func seedID(i int) int32 { return math.MinInt32 + int32(i) }

// probeSeeds sends every seed a metadata request at once and waits until
// one answers, returning its index, or until all failed, returning -1 and
// each one's error in seed order.
func (l *liveness) probeSeeds(ctx context.Context, cl *kgo.Client) (int, []error) {
	seeds := cl.SeedBrokers()
	type result struct {
		i   int
		err error
	}
	results := make(chan result, len(seeds))
	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	for i, b := range seeds {
		pctx, cancel := context.WithCancelCause(ctx)
		l.mu.Lock()
		l.probes[seedID(i)] = &probe{cancel: cancel}
		l.mu.Unlock()
		go func() {
			defer cancel(nil)
			req := kmsg.NewPtrMetadataRequest()
			req.Topics = []kmsg.MetadataRequestTopic{}
			_, err := b.Request(pctx, req)
			if err != nil {
				if nr, ok := errors.AsType[*NoResponseError](context.Cause(pctx)); ok {
					err = nr
				}
			}
			results <- result{i, err}
		}()
	}
	errs := make([]error, len(seeds))
	for range seeds {
		r := <-results
		if r.err == nil {
			return r.i, nil
		}
		errs[r.i] = r.err
	}
	return -1, errs
}

// OnBrokerWrite implements kgo.HookBrokerWrite: a request (the first is
// a new connection's ApiVersions) was sent, its response is awaited.
func (l *liveness) OnBrokerWrite(meta kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	addr := net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.probes[meta.NodeID]
	if l.stopped || p == nil || p.answered {
		return
	}
	l.timers = append(l.timers, time.AfterFunc(l.wait, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if !p.answered && !l.stopped {
			p.cancel(&NoResponseError{Addr: addr, Wait: l.wait})
		}
	}))
}

// OnBrokerRead implements kgo.HookBrokerRead: a response arrived.
func (l *liveness) OnBrokerRead(meta kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.probes[meta.NodeID]; p != nil {
		p.answered = true
	}
}

// stop ends the watch once the first contact is over.
func (l *liveness) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range l.timers {
		t.Stop()
	}
	l.stopped = true
	l.probes = nil
}

// saslWatch notes a connection that dropped while a SASL authentication
// answer was awaited. Brokers answering SaslAuthenticate v0 (and kfake)
// reject bad credentials that way rather than with an error code.
type saslWatch struct{ failed atomic.Bool }

// OnBrokerE2E implements kgo.HookBrokerE2E.
func (w *saslWatch) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if key == int16(kmsg.SASLAuthenticate) && e2e.ReadErr != nil {
		w.failed.Store(true)
	}
}

// Close closes the connections.
func (c *Client) Close() { c.cl.Close() }

// Config returns the configuration the client was dialled with.
func (c *Client) Config() Config { return c.cfg }

func (t *TLSConfig) build() (*tls.Config, error) {
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify, //nolint:gosec // the user asked for it by name
	}
	if t.CAFile != "" {
		pem, err := ReadFileLimit("PEM file", t.CAFile, MaxPEMFile)
		if err != nil {
			return nil, fmt.Errorf("TLS CA file (--tls-ca): %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA file %s: no PEM certificate in it", t.CAFile)
		}
		tc.RootCAs = pool
	}
	if t.CertFile != "" || t.KeyFile != "" {
		certPEM, err := ReadFileLimit("PEM file", t.CertFile, MaxPEMFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate (--tls-cert): %w", err)
		}
		keyPEM, err := ReadFileLimit("PEM file", t.KeyFile, MaxPEMFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client key (--tls-key): %w", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate %s / key %s: %w", t.CertFile, t.KeyFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

func (s *SASLConfig) mechanism() (sasl.Mechanism, error) {
	switch s.Mechanism {
	case MechanismPlain:
		return plain.Auth{User: s.User, Pass: s.Password}.AsMechanism(), nil
	case MechanismScramSHA256:
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha256Mechanism(), nil
	case MechanismScramSHA512:
		return scram.Auth{User: s.User, Pass: s.Password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("SASL mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", s.Mechanism)
}

// Names returns the topic names learned from metadata so far in this run,
// for printing channels as NAME/PARTITION. The result is a snapshot: later
// lookups do not change it. Call Topics with no names first to learn every
// topic the credentials may describe.
func (c *Client) Names() *clock.Names {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := new(clock.Names)
	for name, id := range c.ids {
		_ = n.Add(name, id) // c.ids is kept one-to-one by learn
	}
	return n
}

// TopicName is the name of topic id learned from metadata so far in this
// run: Names for one topic, without copying every name.
func (c *Client) TopicName(id clock.TopicID) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	name, ok := c.names[id]
	return name, ok
}

// learn records that name is topic id, failing with *IdentityChangedError
// when name was bound to another UUID earlier in the run. A UUID whose name
// changed cannot happen in Kafka (names are the keys); it is rebound.
func (c *Client) learn(name string, id clock.TopicID) error {
	if id.IsZero() {
		return nil // a broker without topic IDs (before 2.8)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.ids[name]; ok && old != id {
		return &IdentityChangedError{Topic: name, Old: old, New: id}
	}
	if oldName, ok := c.names[id]; ok && oldName != name {
		delete(c.ids, oldName)
	}
	c.ids[name] = id
	c.names[id] = name
	return nil
}

// Forget drops the identity learned for name, so that a later lookup
// binds name to whatever topic it names then instead of failing with an
// *IdentityChangedError. A one-shot read never calls it (an identity
// change mid-run is its error); a long-running reader (the exporter) does,
// once it has reported the change and starts over on the new topic.
func (c *Client) Forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.ids[name]; ok {
		delete(c.names, id)
		delete(c.ids, name)
	}
}

// known returns the UUID seen for name earlier in the run.
func (c *Client) known(name string) (clock.TopicID, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.ids[name]
	return id, ok
}

// topicMeta is what metadata says about one topic.
type topicMeta struct {
	name     string
	id       clock.TopicID
	internal bool
	leaders  map[int32]int32 // partition → leader broker (-1 when none)
	err      error           // a per-topic error that is not fatal here
}

func (t *topicMeta) partitions() []int32 {
	ps := make([]int32, 0, len(t.leaders))
	for p := range t.leaders {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// metadata asks for the named topics (all topics when names is nil) and
// checks their identity against earlier lookups. Unknown topics and topics
// the user may not describe are errors naming the topic; with skipUnknown,
// unknown topics are left out of the result instead.
func (c *Client) metadata(ctx context.Context, names []string, skipUnknown bool) (map[string]*topicMeta, error) {
	resp, err := c.requestMetadata(ctx, names, false)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*topicMeta, len(resp.Topics))
	for _, t := range resp.Topics {
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		switch err := kerr.ErrorForCode(t.ErrorCode); {
		case err == nil:
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			if skipUnknown {
				continue
			}
			if old, ok := c.known(name); ok {
				return nil, &IdentityChangedError{Topic: name, Old: old}
			}
			return nil, &UnknownTopicError{Topic: name}
		case errors.Is(err, kerr.TopicAuthorizationFailed):
			return nil, &AuthorizationError{Op: "describe", Topic: name, Err: err}
		default:
			// LEADER_NOT_AVAILABLE and the like while a topic is being
			// created: keep it, the partitions may still be listed.
			if len(t.Partitions) == 0 {
				return nil, fmt.Errorf("metadata of topic %q: %w", name, err)
			}
		}
		tm := &topicMeta{name: name, id: t.TopicID, internal: t.IsInternal, leaders: make(map[int32]int32, len(t.Partitions))}
		for _, p := range t.Partitions {
			tm.leaders[p.Partition] = p.Leader
		}
		if err := c.learn(name, tm.id); err != nil {
			return nil, err
		}
		out[name] = tm
	}
	// A topic seen earlier in the run that is now gone was deleted: when it
	// was asked for by name, that is an identity change, not just unknown.
	for _, n := range names {
		if _, ok := out[n]; ok || skipUnknown {
			continue
		}
		if old, ok := c.known(n); ok {
			return nil, &IdentityChangedError{Topic: n, Old: old}
		}
		return nil, &UnknownTopicError{Topic: n}
	}
	return out, nil
}

// TopicInfo describes one topic: its identity and its partitions.
type TopicInfo struct {
	Name       string
	ID         clock.TopicID // zero on brokers without topic IDs (before 2.8)
	Internal   bool
	Partitions []PartitionInfo // sorted by partition
}

// PartitionInfo describes one partition's offsets as listed at one moment.
type PartitionInfo struct {
	Partition int32
	Leader    int32 // broker ID, -1 when the partition has no leader
	// LogStart is the first offset still in the log.
	LogStart int64
	// HighWatermark is the log end: one past the last offset written.
	HighWatermark int64
	// LastStable is the last stable offset: the end a read_committed reader
	// sees, below any open transaction. -1 when the broker did not say.
	LastStable int64
}

// Topics describes the named topics, or every topic the credentials may
// describe (internal topics left out) when no name is given, listing each
// partition's log start, high watermark and last stable offset. It also
// teaches Names the topics it saw. An unknown topic is *UnknownTopicError;
// a topic the user may not describe is *AuthorizationError naming it.
func (c *Client) Topics(ctx context.Context, names ...string) ([]TopicInfo, error) {
	var ask []string
	if len(names) > 0 {
		ask = slices.Compact(slices.Sorted(slices.Values(names)))
	}
	meta, err := c.metadata(ctx, ask, false)
	if err != nil {
		return nil, err
	}
	var parts []chanKey
	var infos []TopicInfo
	for _, tm := range meta {
		if tm.internal && ask == nil {
			continue
		}
		ti := TopicInfo{Name: tm.name, ID: tm.id, Internal: tm.internal}
		for _, p := range tm.partitions() {
			ti.Partitions = append(ti.Partitions, PartitionInfo{Partition: p, Leader: tm.leaders[p], LastStable: -1})
			parts = append(parts, chanKey{tm.name, p})
		}
		infos = append(infos, ti)
	}
	slices.SortFunc(infos, func(a, b TopicInfo) int { return cmp.Compare(a.Name, b.Name) })
	offs, err := c.listOffsets(ctx, parts, listBound{})
	if err != nil {
		return nil, err
	}
	for i := range infos {
		for j := range infos[i].Partitions {
			p := &infos[i].Partitions[j]
			o := offs[chanKey{infos[i].Name, p.Partition}]
			p.LogStart, p.HighWatermark, p.LastStable = o.logStart, o.hwm, o.lso
		}
	}
	return infos, nil
}

// chanKey names a partition by topic name, as Kafka's offset APIs do.
type chanKey struct {
	topic     string
	partition int32
}

// partOffsets are the listed offsets of one partition.
type partOffsets struct {
	logStart, hwm, lso int64
}

// listOffsets lists log start, high watermark and last stable offset of the
// given partitions. They are three requests, listed in the order of the
// offsets (log start, last stable, high watermark): a partition written
// between two of them then still has log start ≤ last stable ≤ high
// watermark, as its log facts must (the other order gave a last stable
// offset beyond the high watermark, and `check` refused its own spool).
// The three share one deadline (see listBound).
func (c *Client) listOffsets(ctx context.Context, parts []chanKey, b listBound) (map[chanKey]partOffsets, error) {
	out := make(map[chanKey]partOffsets, len(parts))
	if len(parts) == 0 {
		return out, nil
	}
	dl := c.deadline(b)
	starts, err := c.listAt(ctx, parts, -2, 0, dl)
	if err != nil {
		return nil, err
	}
	lsos, err := c.listAt(ctx, parts, -1, 1, dl)
	if err != nil {
		return nil, err
	}
	hwms, err := c.listAt(ctx, parts, -1, 0, dl)
	if err != nil {
		return nil, err
	}
	for _, k := range parts {
		out[k] = partOffsets{logStart: starts[k].offset, hwm: hwms[k].offset, lso: lsos[k].offset}
	}
	return out, nil
}

// listBound bounds how long a listing asks again the partitions answered
// with a retriable error: wait, on clock. The zero value is the request
// timeout on the wall clock.
type listBound struct {
	clock Clock
	wait  time.Duration
}

// listDeadline is a listBound begun: when its asking again ends.
type listDeadline struct {
	clock Clock
	wait  time.Duration
	at    time.Time
}

func (c *Client) deadline(b listBound) listDeadline {
	if b.clock == nil {
		b.clock = wallClock{}
	}
	if b.wait <= 0 {
		b.wait = c.cfg.requestTimeout()
	}
	return listDeadline{clock: b.clock, wait: b.wait, at: b.clock.Now().Add(b.wait)}
}

// listed is one answer of ListOffsets.
type listed struct {
	offset    int64 // -1 when the broker has none (no record at or after a timestamp)
	timestamp int64
}

// listAt issues ListOffsets for parts at timestamp ts (-2 log start, -1 end,
// or a time in milliseconds) with the given isolation level (1 =
// read_committed, whose end is the last stable offset). kgo routes each
// partition to its leader, and retries a leadership change only while it
// holds the topic's metadata cached; so a partition still answered with a
// retriable error (NOT_LEADER_FOR_PARTITION: a leader that moved between
// the metadata and the question) is asked again here, backing off, until
// dl; the partitions still failing then are a *StuckError. Each round of
// requests has the request timeout.
func (c *Client) listAt(ctx context.Context, parts []chanKey, ts int64, isolation int8, dl listDeadline) (map[chanKey]listed, error) {
	out := make(map[chanKey]listed, len(parts))
	pending := parts
	for backoff := minBackoff; ; backoff = min(2*backoff, maxBackoff) {
		rctx, cancel := context.WithTimeout(ctx, c.cfg.requestTimeout())
		retry, lastErr, err := c.listOnce(ctx, rctx, pending, ts, isolation, out)
		cancel()
		if err != nil {
			return nil, err
		}
		if len(retry) == 0 {
			break
		}
		left := dl.at.Sub(dl.clock.Now())
		if left <= 0 {
			return nil, stuckError(retry, dl.wait, lastErr)
		}
		if err := dl.clock.Sleep(ctx, min(backoff, left)); err != nil {
			return nil, err
		}
		pending = retry
	}
	for _, k := range parts {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("listing offsets: no answer for %s/%d", k.topic, k.partition)
		}
	}
	return out, nil
}

// listOnce is one ListOffsets round of listAt over parts, within rctx: the
// answers go into out, and the partitions answered with a retriable error
// are returned with the last such error.
func (c *Client) listOnce(ctx, rctx context.Context, parts []chanKey, ts int64, isolation int8, out map[chanKey]listed) (retry []chanKey, lastErr, err error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	req.TimeoutMillis = millis32(c.cfg.requestTimeout())
	byTopic := make(map[string]int)
	for _, k := range parts {
		i, ok := byTopic[k.topic]
		if !ok {
			i = len(req.Topics)
			byTopic[k.topic] = i
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = k.topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = k.partition
		rp.Timestamp = ts
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	for _, shard := range c.cl.RequestSharded(rctx, req) {
		if shard.Err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			sreq, ok := shard.Req.(*kmsg.ListOffsetsRequest)
			if !ok || !kerr.IsRetriable(shard.Err) && !kgo.IsRetryableBrokerErr(shard.Err) {
				return nil, nil, fmt.Errorf("listing offsets: %w", c.classify(shard.Err))
			}
			// A broker gone or moving: its partitions are asked again.
			for _, t := range sreq.Topics {
				for _, p := range t.Partitions {
					retry = append(retry, chanKey{t.Topic, p.Partition})
				}
			}
			lastErr = c.classify(shard.Err)
			continue
		}
		resp := shard.Resp.(*kmsg.ListOffsetsResponse)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				switch perr := kerr.ErrorForCode(p.ErrorCode); {
				case perr == nil:
				case errors.Is(perr, kerr.TopicAuthorizationFailed):
					return nil, nil, &AuthorizationError{Op: "describe", Topic: t.Topic, Err: perr}
				case errors.Is(perr, kerr.UnknownTopicOrPartition):
					return nil, nil, &UnknownPartitionError{Topic: t.Topic, Partition: p.Partition}
				case kerr.IsRetriable(perr):
					retry, lastErr = append(retry, chanKey{t.Topic, p.Partition}), perr
					continue
				default:
					return nil, nil, fmt.Errorf("listing offsets of %s/%d: %w", t.Topic, p.Partition, perr)
				}
				out[chanKey{t.Topic, p.Partition}] = listed{offset: p.Offset, timestamp: p.Timestamp}
			}
		}
	}
	return retry, lastErr, nil
}

// GroupOffsets reads the offsets a consumer group has committed, keyed by
// channel, for use as start positions (a committed offset is the next
// offset the group would read, so it is the position). It only reads
// (OffsetFetch): it never joins the group. Committed offsets of topics that
// no longer exist, or that were committed on an earlier incarnation of a
// recreated topic, are left out; a topic the user may not describe is an
// *AuthorizationError naming it. A group with nothing committed on any
// existing topic is ErrNoCommittedOffsets, so that a mistyped group name is
// not silently read as "start from the beginning".
func (c *Client) GroupOffsets(ctx context.Context, group string) (map[clock.Channel]int64, error) {
	if group == "" {
		return nil, errors.New("empty group name")
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.requestTimeout())
	defer cancel()
	resps, err := c.adm.FetchOffsets(rctx, group)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch {
		case errors.Is(err, kerr.GroupAuthorizationFailed):
			return nil, &AuthorizationError{Op: "describe", Group: group, Err: err}
		case errors.Is(err, kerr.GroupIDNotFound):
			return nil, fmt.Errorf("group %q: %w", group, ErrNoCommittedOffsets)
		}
		return nil, fmt.Errorf("committed offsets of group %q: %w", group, c.classify(err))
	}
	var topics []string
	for t, ps := range resps {
		for p, r := range ps {
			if r.Err != nil {
				if errors.Is(r.Err, kerr.TopicAuthorizationFailed) {
					return nil, &AuthorizationError{Op: "describe", Topic: t, Err: r.Err}
				}
				return nil, fmt.Errorf("committed offset of group %q on %s/%d: %w", group, t, p, r.Err)
			}
		}
		topics = append(topics, t)
	}
	out := make(map[clock.Channel]int64)
	if len(topics) > 0 {
		slices.Sort(topics)
		meta, err := c.metadata(ctx, topics, true)
		if err != nil {
			return nil, err
		}
		for t, ps := range resps {
			tm, ok := meta[t]
			if !ok || tm.id.IsZero() {
				continue // deleted since, or no topic IDs to key by
			}
			for p, r := range ps {
				if _, exists := tm.leaders[p]; !exists || r.At < 0 {
					continue
				}
				if r.TopicID != ([16]byte{}) && clock.TopicID(r.TopicID) != tm.id {
					continue // committed on an earlier incarnation of the topic
				}
				out[clock.Channel{Topic: tm.id, Partition: p}] = r.At
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("group %q: %w", group, ErrNoCommittedOffsets)
	}
	return out, nil
}
