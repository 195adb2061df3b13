package kafka

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/kafka/kafkatest"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestTLSAndSASL runs against a TLS listener with SCRAM-SHA-256 and ACLs:
// alice may read "open", only describe "listed", and not see "secret".
func TestTLSAndSASL(t *testing.T) {
	srvTLS, caFile := kafkatest.PKI(t)
	topicACL := func(name string, op kmsg.ACLOperation) kfake.ACL {
		return kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: name, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: op, Allow: true}
	}
	c := newCluster(t,
		kfake.TLS(srvTLS),
		kfake.EnableSASL(),
		kfake.EnableACLs(),
		kfake.Superuser(MechanismScramSHA256, "admin", "admin-pw"),
		kfake.User(MechanismScramSHA256, "alice", "alice-pw",
			topicACL("open", kmsg.ACLOperationRead),
			topicACL("listed", kmsg.ACLOperationDescribe)),
		kfake.SeedTopics(1, "open", "listed", "secret"),
	)
	addrs := c.ListenAddrs()

	// Seed as the superuser.
	rootCAs := x509.NewCertPool()
	pemData, _ := os.ReadFile(caFile)
	rootCAs.AppendCertsFromPEM(pemData)
	admin := writer(t, c,
		kgo.DialTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12, RootCAs: rootCAs}),
		kgo.SASL(scram.Auth{User: "admin", Pass: "admin-pw"}.AsSha256Mechanism()))
	produce(t, admin, rec("open", "hello"), rec("listed", "hidden"))

	cfg := func(user, pass string) Config {
		return Config{
			Brokers:        addrs,
			TLS:            &TLSConfig{CAFile: caFile},
			SASL:           &SASLConfig{Mechanism: MechanismScramSHA256, User: user, Password: pass},
			DialTimeout:    2 * time.Second,
			RequestTimeout: 5 * time.Second,
		}
	}

	t.Run("success", func(t *testing.T) {
		cl, err := Dial(testCtx(t), cfg("alice", "alice-pw"))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		got := trace(openDrain(t, cl, []string{"open"}, "start"), false)
		if got != "p0 r0=hello p1" {
			t.Errorf("got %s", got)
		}
		// Listing every topic shows only what alice may describe.
		infos, err := cl.Topics(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, ti := range infos {
			names = append(names, ti.Name)
		}
		if strings.Join(names, ",") != "listed,open" {
			t.Errorf("topics %v, want listed,open", names)
		}
	})

	t.Run("server name", func(t *testing.T) {
		c := cfg("alice", "alice-pw")
		c.TLS.ServerName = "kafka.test"
		cl, err := Dial(testCtx(t), c)
		if err != nil {
			t.Fatal(err)
		}
		cl.Close()
		c.TLS.ServerName = "wrong.test"
		if _, err := Dial(testCtx(t), c); !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "wrong.test") {
			t.Errorf("wrong server name: %v", err)
		}
	})

	t.Run("wrong password", func(t *testing.T) {
		_, err := Dial(testCtx(t), cfg("alice", "nope"))
		var ae *AuthError
		if !errors.As(err, &ae) || !errors.Is(err, ErrAuthentication) || !IsAuthError(err) {
			t.Fatalf("got %v, want an authentication error", err)
		}
		if !strings.Contains(err.Error(), `SCRAM-SHA-256 as user "alice"`) || strings.Contains(err.Error(), "nope") {
			t.Errorf("message %q", err)
		}
		t.Logf("wrong password: %v", err)
	})

	t.Run("missing ACL", func(t *testing.T) {
		cl, err := Dial(testCtx(t), cfg("alice", "alice-pw"))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		var aze *AuthorizationError
		_, err = cl.Topics(testCtx(t), "secret")
		if !errors.As(err, &aze) || aze.Topic != "secret" || err.Error() != `not authorized to describe topic "secret"` {
			t.Errorf("describe: %v", err)
		}
		spec, _ := ParseOffsets("start", time.Now())
		_, err = cl.OpenRange(testCtx(t), []TopicSel{{Topic: "secret", Partition: AllPartitions}}, spec)
		if !errors.As(err, &aze) || aze.Topic != "secret" {
			t.Errorf("open: %v", err)
		}
		// Describe but not read: refused when the range opens, before
		// anything is read (authorized operations in the metadata).
		_, err = cl.OpenRange(testCtx(t), []TopicSel{{Topic: "listed", Partition: AllPartitions}}, spec)
		if !errors.As(err, &aze) || aze.Topic != "listed" || aze.Op != "read" || err.Error() != `not authorized to read topic "listed"` {
			t.Errorf("read: %v", err)
		}
		t.Logf("read denied: %v", err)
	})

	t.Run("no TLS", func(t *testing.T) {
		c := cfg("alice", "alice-pw")
		c.TLS = nil
		_, err := Dial(testCtx(t), c)
		if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), addrs[0]) {
			t.Errorf("plaintext against TLS: %v", err)
		}
		t.Logf("plaintext against TLS: %v", err)
	})

	t.Run("untrusted CA", func(t *testing.T) {
		c := cfg("alice", "alice-pw")
		c.TLS.CAFile = ""
		_, err := Dial(testCtx(t), c)
		if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("untrusted CA: %v", err)
		}
		t.Logf("untrusted CA: %v", err)
	})
}

func TestDialUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now

	done := make(chan error, 1)
	go func() {
		_, err := Dial(testCtx(t), Config{Brokers: []string{addr}, DialTimeout: 2 * time.Second, RequestTimeout: 2 * time.Second})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("got %v, want ErrUnreachable", err)
		}
		if !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "\n") {
			t.Errorf("message %q should be one line naming %s", err, addr)
		}
		t.Logf("error: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Dial did not return within 10s")
	}
}

// TestTLSDefaults: certificates are verified against the host dialled
// unless a server name or --tls-insecure-skip-verify says otherwise, and a
// broker offering nothing newer than TLS 1.1 is refused.
func TestTLSDefaults(t *testing.T) {
	dial := func(c *kfake.Cluster, tc *TLSConfig) error {
		cl, err := Dial(testCtx(t), Config{Brokers: c.ListenAddrs(), TLS: tc, DialTimeout: 2 * time.Second, RequestTimeout: 5 * time.Second})
		if err == nil {
			cl.Close()
		}
		return err
	}

	t.Run("certificate for another host", func(t *testing.T) {
		srvTLS, caFile := kafkatest.PKIFor(t, []string{"kafka.test"}, []net.IP{net.ParseIP("127.0.0.2")})
		c := newCluster(t, kfake.TLS(srvTLS))
		err := dial(c, &TLSConfig{CAFile: caFile})
		if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "certificate is valid for 127.0.0.2, not 127.0.0.1") || !strings.Contains(err.Error(), "--tls-server-name") {
			t.Errorf("dialling 127.0.0.1 with a certificate for kafka.test: %v", err)
		}
		t.Logf("another host: %v", err)
		if err := dial(c, &TLSConfig{CAFile: caFile, ServerName: "kafka.test"}); err != nil {
			t.Errorf("with the server name: %v", err)
		}
		if err := dial(c, &TLSConfig{InsecureSkipVerify: true}); err != nil {
			t.Errorf("with verification off: %v", err)
		}
	})

	t.Run("TLS 1.1", func(t *testing.T) {
		srvTLS, caFile := kafkatest.PKI(t)
		srvTLS.MinVersion, srvTLS.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
		c := newCluster(t, kfake.TLS(srvTLS))
		for _, tc := range []*TLSConfig{{CAFile: caFile}, {InsecureSkipVerify: true}} {
			err := dial(c, tc)
			if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "TLS 1.2") {
				t.Errorf("a TLS 1.1 listener (insecure %v): %v", tc.InsecureSkipVerify, err)
			}
			t.Logf("TLS 1.1: %v", err)
		}
		// Not only Go's default, which GODEBUG=tls10server=1 lowers.
		tc, err := (&TLSConfig{}).build()
		if err != nil {
			t.Fatal(err)
		}
		if tc.MinVersion != tls.VersionTLS12 {
			t.Errorf("MinVersion %x, want TLS 1.2", tc.MinVersion)
		}
	})
}

// TestTLSFilesBounded: a CA, certificate or key path naming a file that
// never ends or is too long is refused naming the flag and the file,
// after reading at most the limit.
func TestTLSFilesBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), MaxPEMFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	paths := []string{big}
	if _, err := os.Stat("/dev/zero"); err == nil {
		paths = append(paths, "/dev/zero")
	}
	for _, path := range paths {
		for _, tc := range []struct {
			cfg  TLSConfig
			flag string
		}{
			{TLSConfig{CAFile: path}, "--tls-ca"},
			{TLSConfig{CertFile: path, KeyFile: path}, "--tls-cert"},
		} {
			_, err := tc.cfg.build()
			var tooLarge *FileTooLargeError
			if !errors.As(err, &tooLarge) || !strings.Contains(err.Error(), tc.flag) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "4 MiB") {
				t.Fatalf("%s %s: %v", tc.flag, path, err)
			}
		}
	}
	// The key is bounded too, behind a good certificate's path.
	cert := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(cert, []byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := (&TLSConfig{CertFile: cert, KeyFile: big}).build()
	if err == nil || !strings.Contains(err.Error(), "--tls-key") || !strings.Contains(err.Error(), big) {
		t.Errorf("an oversized key: %v", err)
	}
}
