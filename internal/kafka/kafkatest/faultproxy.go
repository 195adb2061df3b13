package kafkatest

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// This file is the fault harness: a TCP proxy on 127.0.0.1 between the
// client and a kfake broker that misbehaves on request — latency, a
// bandwidth limit, a reset after some bytes, a blackhole, fragmented
// writes — and a kfake cluster whose every broker is reached through one,
// advertised in metadata, so that no connection bypasses it. Broker-side
// errors (NOT_LEADER, OFFSET_OUT_OF_RANGE, throttling, UNKNOWN_TOPIC_ID)
// are kfake's own Cluster.Fault and Cluster.ControlKey; the proxy is for
// what the network does.

// Faults is what a Proxy does to the bytes it forwards. The zero value
// forwards faithfully.
type Faults struct {
	// Latency delays every chunk forwarded, in both directions.
	Latency time.Duration
	// BytesPerSecond limits the broker-to-client direction; 0 is no limit.
	BytesPerSecond int
	// Slice writes the broker's bytes to the client in pieces of at most
	// this many bytes, SliceDelay apart: a fragmenting link, so that a
	// response arrives in many reads. 0 writes chunks whole.
	Slice      int
	SliceDelay time.Duration
	// ResetAfter resets a connection (TCP RST, both sides) once it has
	// forwarded this many bytes from the broker to the client, cutting
	// the response it is in; 0 never. Resets bounds how many connections
	// are reset in all (0: every connection that gets that far).
	ResetAfter int64
	Resets     int
	// Blackhole accepts connections and reads what the client sends, and
	// forwards nothing either way: a broker that never answers.
	Blackhole bool
	// Refuse resets every new connection at once: a broker that is down.
	Refuse bool
}

// Proxy forwards TCP connections from its address to a target, applying
// its Faults. Faults can be changed at any time; a change applies to the
// next chunk of every connection, open or new.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	faults Faults
	resets int // connections reset by ResetAfter so far
	conns  map[net.Conn]bool
	closed bool
	reset  chan struct{} // closed and replaced at each reset
	wg     sync.WaitGroup
}

// NewProxy starts a proxy on a free port of 127.0.0.1 forwarding to target.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]bool{}, reset: make(chan struct{})}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is the proxy's HOST:PORT.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Set replaces the proxy's faults.
func (p *Proxy) Set(f Faults) {
	p.mu.Lock()
	p.faults, p.resets = f, 0
	p.mu.Unlock()
}

// Heal removes every fault: Set(Faults{}).
func (p *Proxy) Heal() { p.Set(Faults{}) }

// ResetAll resets every open connection now, as a broker restart or a
// middlebox dropping its state would.
func (p *Proxy) ResetAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		rst(c)
	}
	p.noteResetLocked()
}

// Resets returns how many connections ResetAfter has reset since the last
// Set, and a channel closed at the next reset: a test waits on it rather
// than polling.
func (p *Proxy) Resets() (int, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resets, p.reset
}

// Close stops accepting and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

func (p *Proxy) noteResetLocked() {
	close(p.reset)
	p.reset = make(chan struct{})
}

func (p *Proxy) current() Faults {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.faults
}

// track adds c to the open connections, or reports false once closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = true
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			c.Close()
			return
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// serve forwards one client connection until either side ends it.
func (p *Proxy) serve(client net.Conn) {
	defer p.untrack(client)
	defer client.Close()
	if p.current().Refuse {
		rst(client)
		return
	}
	if p.current().Blackhole {
		io.Copy(io.Discard, client)
		return
	}
	broker, err := net.Dial("tcp", p.target)
	if err != nil {
		rst(client)
		return
	}
	if !p.track(broker) {
		broker.Close()
		return
	}
	defer p.untrack(broker)
	defer broker.Close()
	done := make(chan struct{}, 2)
	go func() { p.pump(client, broker, false); done <- struct{}{} }()
	go func() { p.pump(broker, client, true); done <- struct{}{} }()
	<-done
	// One direction ended: end both, so that the other pump returns.
	client.Close()
	broker.Close()
	<-done
}

// pump copies src to dst under the faults; down is the broker-to-client
// direction, where bandwidth, slicing and resets apply.
func (p *Proxy) pump(src, dst net.Conn, down bool) {
	buf := make([]byte, 32<<10)
	var sent int64
	for {
		n, err := src.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			f := p.current()
			if f.Blackhole {
				chunk = nil // swallowed
			}
			if f.Latency > 0 {
				time.Sleep(f.Latency)
			}
			if down && f.ResetAfter > 0 && sent+int64(len(chunk)) > f.ResetAfter && p.takeReset(f) {
				dst.Write(chunk[:f.ResetAfter-sent])
				rst(src)
				rst(dst)
				return
			}
			if werr := p.write(dst, chunk, f, down); werr != nil {
				return
			}
			sent += int64(len(chunk))
		}
		if err != nil {
			return
		}
	}
}

// takeReset reports whether one more connection may be reset under f.
func (p *Proxy) takeReset(f Faults) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f.Resets > 0 && p.resets >= f.Resets {
		return false
	}
	p.resets++
	p.noteResetLocked()
	return true
}

func (p *Proxy) write(dst net.Conn, b []byte, f Faults, down bool) error {
	step := len(b)
	if down && f.Slice > 0 {
		step = f.Slice
	}
	for len(b) > 0 {
		k := min(step, len(b))
		if _, err := dst.Write(b[:k]); err != nil {
			return err
		}
		b = b[k:]
		if down && f.BytesPerSecond > 0 {
			time.Sleep(time.Duration(k) * time.Second / time.Duration(f.BytesPerSecond))
		}
		if down && f.Slice > 0 && f.SliceDelay > 0 && len(b) > 0 {
			time.Sleep(f.SliceDelay)
		}
	}
	return nil
}

// rst closes c with a TCP reset rather than a FIN.
func rst(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// ProxiedCluster is a kfake cluster whose brokers are each reached through
// a Proxy: the brokers advertise the proxies' addresses in metadata, so a
// client seeded with Addrs never connects to a broker directly.
type ProxiedCluster struct {
	*kfake.Cluster
	mu      sync.Mutex
	proxies []*Proxy // in listen order: broker 0 first
}

// DialDirect dials a broker past its proxy when addr is a proxy's
// address: kgo.Dialer(pc.DialDirect) makes a test's writer that faults
// do not reach.
func (pc *ProxiedCluster) DialDirect(ctx context.Context, network, addr string) (net.Conn, error) {
	for _, p := range pc.Proxies() {
		if p.Addr() == addr {
			addr = p.target
		}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// Proxied starts a kfake cluster (one broker unless opts say more) behind
// fault proxies, both closed when the test ends.
func Proxied(t testing.TB, opts ...kfake.Opt) *ProxiedCluster {
	t.Helper()
	pc := &ProxiedCluster{}
	listen := func(network, address string) (net.Listener, error) {
		ln, err := net.Listen(network, address)
		if err != nil {
			return nil, err
		}
		p, err := NewProxy(ln.Addr().String())
		if err != nil {
			ln.Close()
			return nil, err
		}
		pc.mu.Lock()
		pc.proxies = append(pc.proxies, p)
		pc.mu.Unlock()
		return &advertised{Listener: ln, proxy: p}, nil
	}
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, append(opts, kfake.ListenFn(listen))...)...)
	if err != nil {
		t.Fatal(err)
	}
	pc.Cluster = c
	t.Cleanup(func() {
		c.Close()
		for _, p := range pc.Proxies() {
			p.Close()
		}
	})
	return pc
}

// Proxies returns the brokers' proxies, broker 0 first.
func (pc *ProxiedCluster) Proxies() []*Proxy {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return append([]*Proxy(nil), pc.proxies...)
}

// Addrs returns the proxies' addresses, the seed brokers for a client.
func (pc *ProxiedCluster) Addrs() []string { return pc.ListenAddrs() }

// SetAll sets f on every broker's proxy.
func (pc *ProxiedCluster) SetAll(f Faults) {
	for _, p := range pc.Proxies() {
		p.Set(f)
	}
}

// advertised is a broker's listener that names its proxy's address as its
// own, which is what kfake advertises in metadata.
type advertised struct {
	net.Listener
	proxy *Proxy
}

func (a *advertised) Addr() net.Addr { return a.proxy.ln.Addr() }

// Close closes the listener; the proxy stays until the cluster's cleanup,
// so that a broker restarted on the same port is reached again.
func (a *advertised) Close() error {
	err := a.Listener.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
