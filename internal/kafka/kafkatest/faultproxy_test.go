package kafkatest

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestProxiedClusterAdvertisesProxies: every broker of a proxied cluster
// is named in metadata by its proxy's address, so a client never
// connects to a broker directly, and faults reach every connection.
func TestProxiedClusterAdvertisesProxies(t *testing.T) {
	pc := Proxied(t, kfake.NumBrokers(3), kfake.SeedTopics(3, "orders"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(pc.Addrs()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, b := range md.Brokers {
		got = append(got, kadm.BrokerDetail(b).Host+":"+strconv.Itoa(int(b.Port)))
	}
	for _, p := range pc.Proxies() {
		want = append(want, p.Addr())
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(want) != 3 || !slices.Equal(got, want) {
		t.Errorf("advertised %v, want the proxies %v", got, want)
	}
}

// TestProxyFaults: a reset after N bytes cuts the response and is
// counted; a blackhole answers nothing; healed, the proxy forwards again.
func TestProxyFaults(t *testing.T) {
	pc := Proxied(t, kfake.SeedTopics(1, "orders"))
	p := pc.Proxies()[0]
	request := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cl, err := kgo.NewClient(kgo.SeedBrokers(pc.Addrs()...), kgo.DisableClientMetrics(), kgo.RequestRetries(0),
			kgo.RetryTimeout(timeout))
		if err != nil {
			return err
		}
		defer cl.Close()
		_, err = kadm.NewClient(cl).ListTopics(ctx)
		return err
	}
	if err := request(5 * time.Second); err != nil {
		t.Fatalf("without faults: %v", err)
	}
	p.Set(Faults{ResetAfter: 10})
	_, reset := p.Resets()
	if err := request(2 * time.Second); err == nil {
		t.Error("a request through a proxy that resets after 10 bytes succeeded")
	}
	select {
	case <-reset:
	default:
		t.Error("the reset was not counted")
	}
	p.Set(Faults{Blackhole: true})
	if err := request(300 * time.Millisecond); err == nil {
		t.Error("a request through a blackhole succeeded")
	}
	p.Set(Faults{Slice: 7, Latency: time.Millisecond})
	if err := request(5 * time.Second); err != nil {
		t.Errorf("through a slow fragmenting link: %v", err)
	}
}
