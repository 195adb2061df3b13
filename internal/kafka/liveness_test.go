package kafka

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// TestDialSilentListener: a listener that accepts TCP and never answers
// fails Dial with *NoResponseError naming it, after the dial timeout (not
// the dial and request timeouts together), and it counts as unreachable.
func TestDialSilentListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	addr := ln.Addr().String()
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
