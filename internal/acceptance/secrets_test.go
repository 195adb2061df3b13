package acceptance

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestLooseConfigFileWarned: a broker command reading a config file that
// others may read says so on stderr in one line, once, and goes on.
func TestLooseConfigFileWarned(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permissions are not mode bits")
	}
	p := newPipeline(t)
	for _, mode := range []os.FileMode{0o600, 0o640, 0o644} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(path, []byte("current_profile: p\nprofiles:\n  p:\n    brokers: ["+p.addr+"]\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			code, out, stderr := runEnv(t, map[string]string{"CAUSALCTL_CONFIG": path}, "check", "-t", "orders,payments")
			if code != 0 && code != 4 || !strings.Contains(out, "orders") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
			}
			want := ""
			if mode != 0o600 {
				want = fmt.Sprintf("warning: config file %s is readable by others (mode %04o); chmod 600 it\n", path, mode)
			}
			if stderr != want {
				t.Errorf("stderr %q, want %q", stderr, want)
			}
		})
	}
}

// Sentinels: distinctive secrets that must reach the connection and never
// the output.
const (
	sentinelPassword = "Sentinel-Pw-7f3a9c41"
	sentinelKeyText  = "SentinelKeyMaterial0d5e2b"
)

// secretPKI writes a client key and certificate (self-signed, a key of
// their own), a second key, and a file that looks like a PEM key but holds
// the key sentinel.
type secretPKI struct {
	cert, key, otherKey, fakeKey string
	keyLines                     []string // the base64 lines of both keys' PEM bodies
}

func newSecretPKI(t *testing.T) secretPKI {
	t.Helper()
	dir := t.TempDir()
	var s secretPKI
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	newKey := func(name string) (*ecdsa.PrivateKey, string) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		data := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
		for _, line := range strings.Split(string(data), "\n") {
			if line != "" && !strings.HasPrefix(line, "-----") {
				s.keyLines = append(s.keyLines, line)
			}
		}
		return k, write(name, data)
	}
	k, keyPath := newKey("client-key.pem")
	s.key = keyPath
	_, s.otherKey = newKey("other-key.pem")
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "causalctl client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	s.cert = write("client-cert.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	s.fakeKey = write("fake-key.pem", []byte("-----BEGIN PRIVATE KEY-----\n"+base64.StdEncoding.EncodeToString([]byte(sentinelKeyText))+
		"\n"+sentinelKeyText+"\n-----END PRIVATE KEY-----\n"))
	return s
}

// leaks returns the secrets found in text: the password (plain, hex or
// base64), the key sentinel, or a line of a private key.
func (s secretPKI) leaks(text string) []string {
	var found []string
	for _, secret := range append([]string{sentinelPassword, hex.EncodeToString([]byte(sentinelPassword)),
		base64.StdEncoding.EncodeToString([]byte(sentinelPassword)), base64.RawStdEncoding.EncodeToString([]byte(sentinelPassword)),
		sentinelKeyText, base64.RawStdEncoding.EncodeToString([]byte(sentinelKeyText))}, s.keyLines...) {
		if strings.Contains(text, secret) {
			found = append(found, secret)
		}
	}
	return found
}

// TestSecretsNeverPrinted runs a sentinel password and sentinel key
// material through every path that can fail (and some that succeed)
// against a TLS + SASL kfake cluster, through the real command tree, and
// finds neither in stdout or stderr. It is not vacuous: the broker is
// seen to receive the sentinel password, a user whose password is the
// sentinel logs in, the key is seen to be read, and the sentinel given as
// a user name — printed by design — is found.
func TestSecretsNeverPrinted(t *testing.T) {
	srvTLS, caFile := kafkatest.PKI(t)
	var mu sync.Mutex
	var authBytes [][]byte // what SaslAuthenticate carried
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.TLS(srvTLS), kfake.EnableSASL(), kfake.SeedTopics(1, "orders")}
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		opts = append(opts, kfake.Superuser(mech, "alice", "alice-pw"), kfake.Superuser(mech, "bob", sentinelPassword))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		authBytes = append(authBytes, slices.Clone(req.(*kmsg.SASLAuthenticateRequest).SASLAuthBytes))
		return nil, nil, false
	})
	addr := c.ListenAddrs()[0]
	pool := x509.NewCertPool()
	caPEM, _ := os.ReadFile(caFile)
	pool.AppendCertsFromPEM(caPEM)
	w, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableClientMetrics(),
		kgo.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}),
		kgo.SASL(scram.Auth{User: "alice", Pass: "alice-pw"}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.ProduceSync(context.Background(), &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pki := newSecretPKI(t)
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()
	silent := kafkatest.SilentListener(t)
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pwFile := file("pw", sentinelPassword+"\n")
	profile := func(name, body string) string {
		return file(name, "current_profile: p\nprofiles:\n  p:\n    brokers: ["+addr+"]\n    tls:\n      ca: "+caFile+"\n"+body)
	}

	type tc struct {
		name string
		env  map[string]string
		args []string
		code int // the exit code wanted; -1 any
		leak bool
	}
	// base is the environment of a SASL login as user with the sentinel
	// password, plus extra.
	base := func(mech, user string, extra ...string) map[string]string {
		env := map[string]string{
			"CAUSALCTL_BROKERS": addr, "CAUSALCTL_TLS_CA": caFile, "CAUSALCTL_SASL_MECHANISM": mech, "CAUSALCTL_SASL_USER": user,
			"CAUSALCTL_SASL_PASSWORD": sentinelPassword, "CAUSALCTL_DIAL_TIMEOUT": "2s", "CAUSALCTL_REQUEST_TIMEOUT": "5s",
		}
		for i := 0; i+1 < len(extra); i += 2 {
			if extra[i+1] == "" {
				delete(env, extra[i])
			} else {
				env[extra[i]] = extra[i+1]
			}
		}
		return env
	}
	cases := []tc{
		// Wrong passwords, every mechanism and every way to give it.
		{name: "wrong password PLAIN", env: base("PLAIN", "alice"), args: []string{"topics"}, code: 1},
		{name: "wrong password SCRAM-SHA-256", env: base("SCRAM-SHA-256", "alice"), args: []string{"topics"}, code: 1},
		{name: "wrong password SCRAM-SHA-512", env: base("SCRAM-SHA-512", "alice"), args: []string{"capture", "-t", "orders"}, code: 1},
		{name: "wrong password from a file", env: base("PLAIN", "alice", "CAUSALCTL_SASL_PASSWORD", ""), args: []string{"decode", "-t", "orders", "--sasl-password-file", pwFile}, code: 1},
		{name: "wrong password from the env file", env: base("PLAIN", "alice", "CAUSALCTL_SASL_PASSWORD", "", "CAUSALCTL_SASL_PASSWORD_FILE", pwFile), args: []string{"replay", "-t", "orders"}, code: 1},
		{name: "wrong password from password_env", env: map[string]string{"KAFKA_PW": sentinelPassword,
			"CAUSALCTL_CONFIG": profile("pwenv.yaml", "    sasl:\n      mechanism: PLAIN\n      user: alice\n      password_env: KAFKA_PW\n")}, args: []string{"holds", "-t", "orders"}, code: 1},
		{name: "wrong password from password_file", env: map[string]string{
			"CAUSALCTL_CONFIG": profile("pwfile.yaml", "    sasl:\n      mechanism: SCRAM-SHA-256\n      user: alice\n      password_file: "+pwFile+"\n")}, args: []string{"check", "-t", "orders"}, code: 1},
		{name: "wrong password watch", env: base("SCRAM-SHA-512", "alice"), args: []string{"watch", "-t", "orders"}, code: 1},
		{name: "unknown user", env: base("SCRAM-SHA-512", "nobody"), args: []string{"topics"}, code: 1},
		// The right password: the sentinel logs in, and the outputs hold it not.
		{name: "login PLAIN topics json", env: base("PLAIN", "bob"), args: []string{"topics", "-o", "json"}, code: 0},
		{name: "login SCRAM decode", env: base("SCRAM-SHA-512", "bob"), args: []string{"decode", "-t", "orders"}, code: 0},
		{name: "login capture", env: base("SCRAM-SHA-256", "bob"), args: []string{"capture", "-t", "orders"}, code: 0},
		{name: "login check", env: base("SCRAM-SHA-256", "bob"), args: []string{"check", "-t", "orders"}, code: -1},
		{name: "login with a client certificate", env: base("PLAIN", "bob", "CAUSALCTL_TLS_CERT", pki.cert, "CAUSALCTL_TLS_KEY", pki.key), args: []string{"topics"}, code: 0},
		{name: "unknown topic", env: base("PLAIN", "bob"), args: []string{"decode", "-t", "nope"}, code: -1},
		// No broker to hear it.
		{name: "unreachable", env: base("PLAIN", "alice", "CAUSALCTL_BROKERS", closed), args: []string{"topics"}, code: 1},
		{name: "silent", env: base("SCRAM-SHA-512", "alice", "CAUSALCTL_BROKERS", silent, "CAUSALCTL_DIAL_TIMEOUT", "200ms"), args: []string{"topics"}, code: 1},
		{name: "silent and unreachable", env: base("PLAIN", "alice", "CAUSALCTL_BROKERS", silent+","+closed, "CAUSALCTL_DIAL_TIMEOUT", "200ms"), args: []string{"capture", "-t", "orders"}, code: 1},
		{name: "plaintext against TLS", env: base("PLAIN", "alice", "CAUSALCTL_TLS_CA", ""), args: []string{"topics"}, code: 1},
		// Key material in the wrong places.
		{name: "key that is no key", env: base("PLAIN", "bob", "CAUSALCTL_TLS_CERT", pki.cert, "CAUSALCTL_TLS_KEY", pki.fakeKey), args: []string{"topics"}, code: 1},
		{name: "key as certificate", env: base("PLAIN", "bob", "CAUSALCTL_TLS_CERT", pki.key, "CAUSALCTL_TLS_KEY", pki.key), args: []string{"topics"}, code: 1},
		{name: "certificate as key", env: base("PLAIN", "bob", "CAUSALCTL_TLS_CERT", pki.cert, "CAUSALCTL_TLS_KEY", pki.cert), args: []string{"topics"}, code: 1},
		{name: "key of another certificate", env: base("PLAIN", "bob", "CAUSALCTL_TLS_CERT", pki.cert, "CAUSALCTL_TLS_KEY", pki.otherKey), args: []string{"topics"}, code: 1},
		{name: "key as CA", env: base("PLAIN", "bob", "CAUSALCTL_TLS_CA", pki.key), args: []string{"topics"}, code: 1},
		{name: "fake key as CA", env: base("PLAIN", "bob", "CAUSALCTL_TLS_CA", pki.fakeKey), args: []string{"topics"}, code: 1},
		{name: "key without certificate", env: base("PLAIN", "bob", "CAUSALCTL_TLS_KEY", pki.key), args: []string{"topics"}, code: 2},
		// Settings that cannot be resolved.
		{name: "password in the config file", env: map[string]string{
			"CAUSALCTL_CONFIG": profile("pw.yaml", "    sasl:\n      mechanism: PLAIN\n      user: alice\n      password: "+sentinelPassword+"\n")}, args: []string{"topics"}, code: 2},
		{name: "password where its variable's name goes", env: map[string]string{
			"CAUSALCTL_CONFIG": profile("pwname.yaml", "    sasl:\n      mechanism: PLAIN\n      user: alice\n      password_env: "+sentinelPassword+"\n")}, args: []string{"topics"}, code: 2},
		{name: "config file that is no YAML", env: map[string]string{
			"CAUSALCTL_CONFIG": file("bad.yaml", "profiles:\n  p:\n    sasl: {password: \""+sentinelPassword+"\n")}, args: []string{"topics"}, code: 2},
		{name: "password in a list", env: map[string]string{
			"CAUSALCTL_CONFIG": profile("list.yaml", "    sasl:\n      password: ["+sentinelPassword+"]\n")}, args: []string{"topics"}, code: 2},
		{name: "unknown mechanism", env: base("OAUTHBEARER", "alice"), args: []string{"topics"}, code: 2},
		{name: "no user", env: base("PLAIN", "", "CAUSALCTL_SASL_USER", ""), args: []string{"topics"}, code: 2},
		{name: "two passwords", env: base("PLAIN", "alice", "CAUSALCTL_SASL_PASSWORD_FILE", pwFile), args: []string{"topics"}, code: 2},
		{name: "bad timeout", env: base("PLAIN", "alice", "CAUSALCTL_DIAL_TIMEOUT", "0s"), args: []string{"topics"}, code: 2},
		// Files past their limit: refused after reading one byte past it,
		// never sent to the broker or echoed.
		{name: "password file past 64 KiB", env: base("PLAIN", "bob", "CAUSALCTL_SASL_PASSWORD", ""),
			args: []string{"topics", "--sasl-password-file", file("bigpw", strings.Repeat(sentinelPassword, (64<<10)/len(sentinelPassword)+1))}, code: 2},
		{name: "password file that never ends (dev zero)", env: base("PLAIN", "bob", "CAUSALCTL_SASL_PASSWORD", "", "CAUSALCTL_SASL_PASSWORD_FILE", "/dev/zero"), args: []string{"topics"}, code: 2},
		{name: "TLS key that never ends (dev zero)", env: base("PLAIN", "bob", "CAUSALCTL_TLS_CERT", pki.cert, "CAUSALCTL_TLS_KEY", "/dev/zero"), args: []string{"topics"}, code: 1},
		// Help, usage and the commands that print about the build.
		{name: "help", env: base("PLAIN", "alice"), args: []string{"--help"}, code: 0},
		{name: "usage error", env: base("PLAIN", "alice"), args: []string{"topics", "--bogus"}, code: 2},
		{name: "unknown command", env: base("PLAIN", "alice"), args: []string{"topicz"}, code: 2},
		{name: "version json", env: base("PLAIN", "alice"), args: []string{"version", "-o", "json"}, code: 0},
		{name: "--version", env: base("PLAIN", "alice"), args: []string{"--version"}, code: 0},
		{name: "completion from the cluster", env: base("PLAIN", "bob"), args: []string{"__complete", "decode", "-t", ""}, code: 0},
		{name: "completion, wrong password", env: base("PLAIN", "alice"), args: []string{"__complete", "decode", "-t", ""}, code: 0},
		// The control: a user name is printed by design, so a sentinel
		// there must be found.
		{name: "control: sentinel as user name", env: base("PLAIN", sentinelPassword), args: []string{"topics"}, code: 1, leak: true},
	}
	for _, cmd := range []string{"topics", "capture", "decode", "replay", "watch", "holds", "check", "completion", "version"} {
		cases = append(cases, tc{name: cmd + " --help", env: base("PLAIN", "alice"), args: []string{cmd, "--help"}, code: 0})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runEnv(t, tc.env, tc.args...)
			if tc.code >= 0 && code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			found := pki.leaks(out + stderr)
			if got := len(found) > 0; got != tc.leak {
				t.Errorf("secrets found: %q\nstdout %q\nstderr %q", found, out, stderr)
			}
			t.Logf("exit %d: %s", code, strings.TrimSpace(stderr))
		})
	}

	// The broker did hear the sentinel: PLAIN sends it as is.
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(authBytes, func(b []byte) bool { return bytes.Equal(b, []byte("\x00alice\x00"+sentinelPassword)) }) {
		t.Errorf("no PLAIN login of alice with the sentinel password reached the broker (%d logins seen)", len(authBytes))
	}
}
