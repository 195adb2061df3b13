package conn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/causalctl/causalctl/internal/kafka"
)

// options registers the flags and parses args.
func options(t *testing.T, args ...string) *Options {
	t.Helper()
	var o Options
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &o
}

const testConfigYAML = `
current_profile: dev
profiles:
  dev:
    brokers: [dev-1:9092, dev-2:9092]
  prod:
    brokers: prod-1:9093,prod-2:9093
    tls:
      ca: certs/ca.pem
      server_name: kafka.internal
    sasl:
      mechanism: scram-sha-512
      user: reader
      password_env: PROD_KAFKA_PASSWORD
    dial_timeout: 3s
    request_timeout: 20s
  filepw:
    brokers: [f:9092]
    sasl:
      mechanism: PLAIN
      user: fuser
      password_file: ~/pw.txt
  notls:
    brokers: [n:9092]
    tls:
      enabled: false
      ca: /etc/ca.pem
`

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "xdg", "causalctl")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(cfgDir, "config.yaml"), testConfigYAML)
	write(filepath.Join(dir, "pw.txt"), "from-file\n")
	write(filepath.Join(dir, "flagpw.txt"), "from-flag-file\r\n")
	other := filepath.Join(dir, "other.yaml")
	write(other, "profiles:\n  x:\n    brokers: [other:1]\n")

	baseEnv := map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "xdg"), "HOME": dir}
	prodTLS := &kafka.TLSConfig{CAFile: filepath.Join(cfgDir, "certs", "ca.pem"), ServerName: "kafka.internal"}
	for _, tc := range []struct {
		name  string
		args  []string
		env   map[string]string
		check func(t *testing.T, c kafka.Config)
		err   string
	}{
		{
			name: "current profile applies by default",
			check: func(t *testing.T, c kafka.Config) {
				want := kafka.Config{Brokers: []string{"dev-1:9092", "dev-2:9092"}, DialTimeout: kafka.DefaultDialTimeout, RequestTimeout: kafka.DefaultRequestTimeout,
					Profile: "dev", ConfigFile: filepath.Join(cfgDir, "config.yaml")}
				if !reflect.DeepEqual(c, want) {
					t.Errorf("got %+v\nwant %+v", c, want)
				}
			},
		},
		{
			name: "profile from env, password from the env var it names",
			env:  map[string]string{EnvProfile: "prod", "PROD_KAFKA_PASSWORD": "s3cret"},
			check: func(t *testing.T, c kafka.Config) {
				want := kafka.Config{Brokers: []string{"prod-1:9093", "prod-2:9093"}, TLS: prodTLS,
					SASL:        &kafka.SASLConfig{Mechanism: kafka.MechanismScramSHA512, User: "reader", Password: "s3cret"},
					DialTimeout: 3 * time.Second, RequestTimeout: 20 * time.Second, Profile: "prod", ConfigFile: filepath.Join(cfgDir, "config.yaml")}
				if !reflect.DeepEqual(c, want) {
					t.Errorf("got %+v\nwant %+v", c, want)
				}
			},
		},
		{
			name: "flag beats env beats profile, per setting",
			args: []string{"--profile", "prod", "--brokers", "flag:1", "--sasl-user", "flaguser", "--dial-timeout", "1s"},
			env: map[string]string{EnvProfile: "dev", EnvBrokers: "env:1,env:2", EnvSASLUser: "envuser", EnvSASLMechanism: "PLAIN",
				EnvDialTimeout: "9s", EnvRequestTimeout: "8s", EnvSASLPassword: "envpw", "PROD_KAFKA_PASSWORD": "profilepw"},
			check: func(t *testing.T, c kafka.Config) {
				want := kafka.Config{Brokers: []string{"flag:1"}, TLS: prodTLS,
					SASL:        &kafka.SASLConfig{Mechanism: kafka.MechanismPlain, User: "flaguser", Password: "envpw"},
					DialTimeout: time.Second, RequestTimeout: 8 * time.Second, Profile: "prod", ConfigFile: filepath.Join(cfgDir, "config.yaml")}
				if !reflect.DeepEqual(c, want) {
					t.Errorf("got %+v\nwant %+v", c, want)
				}
			},
		},
		{
			name: "env beats profile",
			env:  map[string]string{EnvBrokers: " env:1 , ", EnvTLS: "true", EnvTLSInsecureSkipVerify: "true"},
			check: func(t *testing.T, c kafka.Config) {
				if !reflect.DeepEqual(c.Brokers, []string{"env:1"}) || c.TLS == nil || !c.TLS.InsecureSkipVerify || c.Profile != "dev" {
					t.Errorf("got %+v", c)
				}
			},
		},
		{
			name: "password file flag beats the password env var and the profile",
			args: []string{"--profile", "prod", "--sasl-password-file", filepath.Join(dir, "flagpw.txt")},
			env:  map[string]string{EnvSASLPassword: "envpw", "PROD_KAFKA_PASSWORD": "profilepw"},
			check: func(t *testing.T, c kafka.Config) {
				if c.SASL == nil || c.SASL.Password != "from-flag-file" {
					t.Errorf("got %+v", c.SASL)
				}
			},
		},
		{
			name: "profile password file, ~ is HOME",
			args: []string{"--profile=filepw"},
			check: func(t *testing.T, c kafka.Config) {
				if c.SASL == nil || c.SASL.Password != "from-file" || c.SASL.User != "fuser" || c.SASL.Mechanism != kafka.MechanismPlain {
					t.Errorf("got %+v", c.SASL)
				}
			},
		},
		{
			name: "env password file",
			args: []string{"--profile=filepw"},
			env:  map[string]string{EnvSASLPasswordFile: filepath.Join(dir, "flagpw.txt")},
			check: func(t *testing.T, c kafka.Config) {
				if c.SASL.Password != "from-flag-file" {
					t.Errorf("got %+v", c.SASL)
				}
			},
		},
		{
			name: "tls disabled explicitly in the profile, enabled by flag",
			args: []string{"--profile", "notls"},
			check: func(t *testing.T, c kafka.Config) {
				if c.TLS != nil {
					t.Errorf("TLS on: %+v", c.TLS)
				}
			},
		},
		{
			name: "tls flag beats profile",
			args: []string{"--profile", "notls", "--tls"},
			check: func(t *testing.T, c kafka.Config) {
				if c.TLS == nil || c.TLS.CAFile != "/etc/ca.pem" {
					t.Errorf("TLS %+v", c.TLS)
				}
			},
		},
		{
			name: "a --tls-* flag implies TLS; --tls=false turns it off",
			args: []string{"--tls-server-name", "x"},
			check: func(t *testing.T, c kafka.Config) {
				if c.TLS == nil || c.TLS.ServerName != "x" {
					t.Errorf("TLS %+v", c.TLS)
				}
			},
		},
		{
			name: "explicit config file, no profile selected",
			args: []string{"--config", other, "--brokers", "b:1"},
			check: func(t *testing.T, c kafka.Config) {
				if c.Profile != "" || c.ConfigFile != other || c.Brokers[0] != "b:1" {
					t.Errorf("got %+v", c)
				}
			},
		},
		{
			name: "config from env",
			env:  map[string]string{EnvConfig: other, EnvProfile: "x"},
			check: func(t *testing.T, c kafka.Config) {
				if c.Profile != "x" || c.Brokers[0] != "other:1" {
					t.Errorf("got %+v", c)
				}
			},
		},
		{
			name: "HOME fallback when XDG_CONFIG_HOME is unset",
			env:  map[string]string{"XDG_CONFIG_HOME": "", "HOME": filepath.Join(dir, "nohome"), EnvBrokers: "h:1"},
			check: func(t *testing.T, c kafka.Config) {
				if c.ConfigFile != "" || c.Profile != "" {
					t.Errorf("got %+v", c)
				}
			},
		},
		{name: "unknown profile", args: []string{"--profile", "nope"}, err: `profile "nope" (from --profile) is not in`},
		{name: "missing explicit config", args: []string{"--config", filepath.Join(dir, "missing.yaml")}, err: "no such file"},
		{name: "profile without a file", env: map[string]string{"XDG_CONFIG_HOME": dir, EnvProfile: "p"}, err: "no config file found"},
		{name: "no brokers", env: map[string]string{"XDG_CONFIG_HOME": dir}, err: "no brokers"},
		{name: "password env var unset", env: map[string]string{EnvProfile: "prod"}, err: "PROD_KAFKA_PASSWORD is unset"},
		{name: "mechanism without password", args: []string{"--sasl-mechanism", "PLAIN", "--sasl-user", "u"}, err: "needs a password"},
		{name: "mechanism without user", args: []string{"--sasl-mechanism", "PLAIN"}, env: map[string]string{EnvSASLPassword: "p"}, err: "needs a user"},
		{name: "user without mechanism", args: []string{"--sasl-user", "u"}, err: "without a mechanism"},
		{name: "bad mechanism", args: []string{"--sasl-mechanism", "GSSAPI", "--sasl-user", "u"}, err: "want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"},
		{name: "both password env vars", env: map[string]string{EnvSASLPassword: "a", EnvSASLPasswordFile: "b"}, err: "set only one"},
		{name: "bad env bool", env: map[string]string{EnvTLS: "yes please"}, err: EnvTLS},
		{name: "bad env duration", env: map[string]string{EnvDialTimeout: "5"}, err: EnvDialTimeout},
		{name: "cert without key", args: []string{"--tls-cert", "c.pem"}, err: "go together"},
		{name: "missing password file", args: []string{"--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-file", filepath.Join(dir, "nope")}, err: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o Options
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{}
			for k, v := range baseEnv {
				env[k] = v
			}
			for k, v := range tc.env {
				env[k] = v
			}
			c, err := o.Resolve(func(k string) string { return env[k] })
			switch {
			case tc.err != "" && err == nil:
				t.Fatalf("accepted: %+v", c)
			case tc.err != "" && !strings.Contains(err.Error(), tc.err):
				t.Fatalf("error %q, want it to mention %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case tc.err == "":
				tc.check(t, c)
			}
		})
	}
}

func TestResolveConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ yaml, want string }{
		{"profiles:\n  p:\n    brokers: [a:1]\n    sasl:\n      mechanism: PLAIN\n      user: u\n      password: hunter2\n", "sasl.password is not accepted"},
		{"profiles:\n  p:\n    brokerz: [a:1]\n", "brokerz"},
		{"profiles:\n  p:\n    brokers: [a:1]\n    dial_timeout: soon\n", "dial_timeout"},
		{"profiles:\n  p:\n    brokers: [a:1]\n    sasl: {mechanism: PLAIN, user: u, password_env: A, password_file: B}\n", "only one of"},
		{"profiles: [\n", "config file"},
	} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		o := options(t, "--config", path, "--profile", "p")
		_, err := o.Resolve(func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to mention %q", tc.yaml, err, tc.want)
		}
	}
	// An empty file is an empty config.
	path := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o := options(t, "--config", path, "--brokers", "a:1")
	if c, err := o.Resolve(func(string) string { return "" }); err != nil || c.ConfigFile != path {
		t.Errorf("empty file: %+v, %v", c, err)
	}
}

func TestEnvVarsDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range EnvVars() {
		if !strings.HasPrefix(v.Name, "CAUSALCTL_") || v.Help == "" || seen[v.Name] {
			t.Errorf("bad entry %+v", v)
		}
		seen[v.Name] = true
	}
	if len(seen) != 15 {
		t.Errorf("%d variables, want 15", len(seen))
	}
}

// TestDocExample resolves the config file example of the package comment,
// so that the documentation cannot drift from the parser.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var yaml []string
	for _, line := range strings.Split(string(doc), "\n") {
		if rest, ok := strings.CutPrefix(line, "//\t"); ok {
			yaml = append(yaml, rest)
		}
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(yaml, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvConfig: path, "PROD_KAFKA_PASSWORD": "pw"}
	var o Options
	c, err := o.Resolve(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("doc example: %v\n%s", err, strings.Join(yaml, "\n"))
	}
	if c.Profile != "prod" || len(c.Brokers) != 2 || c.TLS == nil || c.TLS.KeyFile != filepath.Join(filepath.Dir(path), "client-key.pem") ||
		c.SASL == nil || c.SASL.Mechanism != kafka.MechanismScramSHA512 || c.SASL.Password != "pw" {
		t.Errorf("doc example resolved to %+v %+v %+v", c, c.TLS, c.SASL)
	}
}

// sample is a value of the setting's kind, as text, distinct per source.
func sample(s Setting, source string) string {
	switch s.Kind {
	case KindBool:
		return map[string]string{"flag": "true", "env": "false", "profile": "true"}[source]
	case KindDuration:
		return map[string]string{"flag": "1s", "env": "2s", "profile": "3s"}[source]
	case KindList:
		return source + ":1"
	}
	return "/" + source
}

// TestPrecedenceFromTable checks, for every setting of the table, that a
// flag beats its environment variable, which beats the profile key, and
// that the flag, the variable and the key exist as the table says.
func TestPrecedenceFromTable(t *testing.T) {
	for _, s := range Settings() {
		t.Run(s.Name, func(t *testing.T) {
			var o Options
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if f := fs.Lookup(s.Name); (f != nil) != s.Flag {
				t.Fatalf("flag registered %v, table says %v", f != nil, s.Flag)
			} else if f != nil && (s.Env != "" && !strings.Contains(f.Usage, s.Env) || s.Key != "" && !strings.Contains(f.Usage, s.Key)) {
				t.Errorf("usage %q does not name %s and %s", f.Usage, s.Env, s.Key)
			}
			var layers []layer
			want := ""
			if s.Key != "" {
				n := yamlScalar(t, sample(s, "profile"))
				l, err := profile{s.Key: n}.layer("p", "/", func(string) string { return "" })
				if err != nil {
					t.Fatal(err)
				}
				layers, want = append(layers, l), "profile \"p\" "+s.Key
			}
			if s.Env != "" {
				l, err := envLayer(func(k string) string {
					if k == s.Env {
						return sample(s, "env")
					}
					return ""
				})
				if err != nil {
					t.Fatal(err)
				}
				layers, want = append(layers, l), "env "+s.Env
			}
			if s.Flag {
				if err := fs.Parse([]string{"--" + s.Name + "=" + sample(s, "flag")}); err != nil {
					t.Fatal(err)
				}
				l, err := o.flagLayer()
				if err != nil {
					t.Fatal(err)
				}
				layers, want = append(layers, l), "--"+s.Name
			}
			slices.Reverse(layers) // flags first
			if got := merge(layers...)[s.Name].from; got != want {
				t.Errorf("taken from %q, want %q", got, want)
			}
		})
	}
}

func yamlScalar(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}

// TestPasswordGroup: the ways to give the password are one setting — the
// first source that gives any wins, and one source may give only one.
func TestPasswordGroup(t *testing.T) {
	env := map[string]string{EnvSASLPassword: "from-env"}
	prof := profile{"sasl.password_env": yamlScalar(t, "PW")}
	pl, err := prof.layer("p", "/", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	el, err := envLayer(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	m := merge(layer{}, el, pl)
	if _, ok := m[sPasswordEnv]; ok || m.str(sPassword) != "from-env" {
		t.Errorf("merged %v: want only the environment's password", m)
	}
	both := profile{"sasl.password_env": yamlScalar(t, "PW"), "sasl.password_file": yamlScalar(t, "pw.txt")}
	if _, err := both.layer("p", "/", func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "set only one of") {
		t.Errorf("two ways in one profile: %v", err)
	}
}

// TestMarkdownFresh: docs/connection-settings.md is what the table says
// (regenerate with go generate ./internal/conn).
func TestMarkdownFresh(t *testing.T) {
	got, err := os.ReadFile("../../docs/connection-settings.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != Markdown() {
		t.Error("docs/connection-settings.md is stale: run go generate ./internal/conn")
	}
	for _, s := range Settings() {
		if s.Env != "" && !strings.Contains(string(got), s.Env) {
			t.Errorf("%s is not documented", s.Env)
		}
	}
}

// TestLooseFilePermissions: the config file, the password file and the TLS
// key are warned about, once each, when users other than the owner may
// read or write them.
func TestLooseFilePermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permissions are not mode bits")
	}
	for _, mode := range []os.FileMode{0o600, 0o400, 0o644, 0o640, 0o604, 0o620} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			cfgPath := filepath.Join(dir, "config.yaml")
			pwPath := filepath.Join(dir, "pw")
			keyPath := filepath.Join(dir, "key.pem")
			yaml := "current_profile: p\nprofiles:\n  p:\n    brokers: [b:9092]\n    tls:\n      cert: cert.pem\n      key: key.pem\n" +
				"    sasl:\n      mechanism: PLAIN\n      user: u\n      password_file: pw\n"
			for path, data := range map[string]string{cfgPath: yaml, pwPath: "secret\n", keyPath: "key"} {
				if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, mode); err != nil { // not subject to the umask
					t.Fatal(err)
				}
			}
			o := options(t, "--config", cfgPath)
			var lines []string
			warn := func(s string) { lines = append(lines, s) }
			for range 2 { // once per run, however often resolved
				cfg, err := o.ResolveWarn(func(string) string { return "" }, warn)
				if err != nil {
					t.Fatal(err)
				}
				if cfg.SASL.Password != "secret" {
					t.Fatalf("password %q: the password file was not read", cfg.SASL.Password)
				}
			}
			var want []string
			if how := map[os.FileMode]string{0o644: "readable", 0o640: "readable", 0o604: "readable", 0o620: "writable"}[mode]; how != "" {
				for _, f := range []struct{ what, path string }{{"config file", cfgPath}, {"TLS key file", keyPath}, {"password file", pwPath}} {
					want = append(want, fmt.Sprintf("warning: %s %s is %s by others (mode %04o); chmod 600 it", f.what, f.path, how, mode))
				}
			}
			if !slices.Equal(lines, want) {
				t.Errorf("warnings\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
			// Resolve, as completion uses it, warns nowhere and still works.
			if _, err := options(t, "--config", cfgPath).Resolve(func(string) string { return "" }); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSecretFilesBounded: a password or config file that never ends
// (/dev/zero) or is too long is refused in one line naming the setting
// and the file, after reading at most the limit, never sent to a broker.
func TestSecretFilesBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", kafka.MaxPasswordFile+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	exact := filepath.Join(dir, "exact.txt")
	if err := os.WriteFile(exact, []byte(strings.Repeat("x", kafka.MaxPasswordFile)), 0o600); err != nil {
		t.Fatal(err)
	}
	var zero []string
	if _, err := os.Stat("/dev/zero"); err == nil {
		zero = append(zero, "/dev/zero")
	}
	// The file first: without the bound it fails here, before /dev/zero
	// would take the machine's memory.
	for _, path := range append([]string{big}, zero...) {
		o := options(t, "--brokers", "a:1", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-file", path)
		c, err := o.Resolve(func(string) string { return "" })
		if err == nil {
			t.Fatalf("%s: accepted a password of %d bytes", path, len(c.SASL.Password))
		}
		var tooLarge *kafka.FileTooLargeError
		msg := err.Error()
		if !errors.As(err, &tooLarge) || !strings.Contains(msg, "--sasl-password-file") || !strings.Contains(msg, path) || !strings.Contains(msg, "64 KiB") || strings.Contains(msg, "\n") {
			t.Errorf("%s: %v", path, err)
		}
		t.Logf("%s: %v", path, err)
	}
	o := options(t, "--brokers", "a:1", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-file", exact)
	if c, err := o.Resolve(func(string) string { return "" }); err != nil || len(c.SASL.Password) != kafka.MaxPasswordFile {
		t.Errorf("a password of exactly the limit: %v", err)
	}
	for _, path := range zero {
		o := options(t, "--config", path, "--brokers", "a:1")
		if _, err := o.Resolve(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "config file") || !strings.Contains(err.Error(), "1 MiB") {
			t.Errorf("--config %s: %v", path, err)
		}
	}
}
