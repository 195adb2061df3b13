package kafka

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
)

// TestDialSilentListener: a listener that accepts TCP and never answers
// fails Dial with *NoResponseError naming it, after the dial timeout (not
// the dial and request timeouts together), and it counts as unreachable.
func TestDialSilentListener(t *testing.T) {
	addr := kafkatest.SilentListener(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := Dial(ctx, Config{Brokers: []string{addr}, DialTimeout: 300 * time.Millisecond, RequestTimeout: time.Minute})
	if err == nil {
		cl.Close()
		t.Fatal("Dial succeeded against a listener that never answers")
	}
	var nr *NoResponseError
	if !errors.As(err, &nr) || nr.Addr != addr || nr.Wait != 300*time.Millisecond || !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v (%T), want *NoResponseError for %s after 300ms, unreachable", err, err, addr)
	}
	if ctx.Err() != nil {
		t.Fatal("Dial waited out the request timeout")
	}
}

// TestDialSilentSeedBesideAGoodOne: a silent seed does not fail Dial
// when another seed answers, in either order, and later requests do not
// wait on it either. The request timeout is a minute and the test's
// deadline 15s, so a request sent to the silent seed would fail the test.
func TestDialSilentSeedBesideAGoodOne(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "orders"))
	good := c.ListenAddrs()[0]
	silent := kafkatest.SilentListener(t)
	for _, seeds := range [][]string{{silent, good}, {good, silent}} {
		t.Run(strings.Join(seeds, ","), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			cl, err := Dial(ctx, Config{Brokers: seeds, DialTimeout: 200 * time.Millisecond, RequestTimeout: time.Minute})
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer cl.Close()
			for range 5 {
				infos, err := cl.Topics(ctx)
				if err != nil || len(infos) != 1 || infos[0].Name != "orders" {
					t.Fatalf("topics: %v %v", infos, err)
				}
			}
		})
	}
}

// TestDialEverySeedFails: when no seed answers, the error names every
// seed and each one's failure on one line.
func TestDialEverySeedFails(t *testing.T) {
	silent := kafkatest.SilentListener(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, err = Dial(ctx, Config{Brokers: []string{silent, closed}, DialTimeout: 200 * time.Millisecond, RequestTimeout: time.Minute})
	var ce *ConnectError
	var nr *NoResponseError
	if !errors.As(err, &ce) || !errors.As(err, &nr) || nr.Addr != silent || !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v (%T), want a *ConnectError holding the silent seed's *NoResponseError", err, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "any of brokers "+silent+", "+closed) || !strings.Contains(msg, "no Kafka response from "+silent) ||
		!strings.Contains(msg, closed+": connect: connection refused") || strings.Contains(msg, "\n") {
		t.Errorf("message %q should name both seeds and both failures on one line", msg)
	}
	if ctx.Err() != nil {
		t.Fatal("Dial waited out the request timeout")
	}
}
