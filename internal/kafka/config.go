package kafka

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// Defaults of the connection settings.
const (
	DefaultDialTimeout    = 5 * time.Second
	DefaultRequestTimeout = 30 * time.Second
)

// The SASL mechanisms causalctl speaks.
const (
	MechanismPlain       = "PLAIN"
	MechanismScramSHA256 = "SCRAM-SHA-256"
	MechanismScramSHA512 = "SCRAM-SHA-512"
)

// Environment variables read by ConnOptions.Resolve. Each overrides the
// selected profile and is overridden by its flag. An empty value counts as
// unset.
const (
	EnvBrokers               = "CAUSALCTL_BROKERS"                  // comma-separated host:port list
	EnvTLS                   = "CAUSALCTL_TLS"                      // true/false
	EnvTLSCA                 = "CAUSALCTL_TLS_CA"                   // PEM file of CA certificates
	EnvTLSCert               = "CAUSALCTL_TLS_CERT"                 // PEM client certificate
	EnvTLSKey                = "CAUSALCTL_TLS_KEY"                  // PEM client key
	EnvTLSServerName         = "CAUSALCTL_TLS_SERVER_NAME"          // name to verify the broker certificate against
	EnvTLSInsecureSkipVerify = "CAUSALCTL_TLS_INSECURE_SKIP_VERIFY" // true/false
	EnvSASLMechanism         = "CAUSALCTL_SASL_MECHANISM"           // PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
	EnvSASLUser              = "CAUSALCTL_SASL_USER"                // SASL user name
	EnvSASLPassword          = "CAUSALCTL_SASL_PASSWORD"            // the SASL password itself
	EnvSASLPasswordFile      = "CAUSALCTL_SASL_PASSWORD_FILE"       // file holding the SASL password
	EnvProfile               = "CAUSALCTL_PROFILE"                  // profile to select from the config file
	EnvConfig                = "CAUSALCTL_CONFIG"                   // path of the config file
	EnvDialTimeout           = "CAUSALCTL_DIAL_TIMEOUT"             // Go duration, e.g. 5s
	EnvRequestTimeout        = "CAUSALCTL_REQUEST_TIMEOUT"          // Go duration, e.g. 30s
)

// EnvVar describes one environment variable, for help texts.
type EnvVar struct {
	Name string
	Help string
}

// EnvVars lists the environment variables Resolve reads, in a stable order,
// with a one-line description each.
func EnvVars() []EnvVar {
	return []EnvVar{
		{EnvBrokers, "brokers, comma-separated host:port (--brokers)"},
		{EnvTLS, "true to connect with TLS (--tls)"},
		{EnvTLSCA, "PEM file of CA certificates to trust (--tls-ca)"},
		{EnvTLSCert, "PEM client certificate file (--tls-cert)"},
		{EnvTLSKey, "PEM client key file (--tls-key)"},
		{EnvTLSServerName, "server name to verify broker certificates against (--tls-server-name)"},
		{EnvTLSInsecureSkipVerify, "true to skip broker certificate verification (--tls-insecure-skip-verify)"},
		{EnvSASLMechanism, "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (--sasl-mechanism)"},
		{EnvSASLUser, "SASL user (--sasl-user)"},
		{EnvSASLPassword, "SASL password"},
		{EnvSASLPasswordFile, "file holding the SASL password (--sasl-password-file)"},
		{EnvProfile, "profile to use from the config file (--profile)"},
		{EnvConfig, "config file path (--config)"},
		{EnvDialTimeout, "time to connect to a broker, e.g. 5s (--dial-timeout)"},
		{EnvRequestTimeout, "time allowed for one broker request, e.g. 30s (--request-timeout)"},
	}
}

// Config is a resolved connection configuration: everything Dial needs.
// Build it with ConnOptions.Resolve, or directly in tests.
type Config struct {
	Brokers []string
	// TLS is nil for a plaintext connection.
	TLS *TLSConfig
	// SASL is nil when not authenticating.
	SASL *SASLConfig
	// DialTimeout bounds connecting to one broker, TLS and SASL included
	// (0 means DefaultDialTimeout).
	DialTimeout time.Duration
	// RequestTimeout bounds one broker request, retries included (0 means
	// DefaultRequestTimeout).
	RequestTimeout time.Duration
	// Profile is the name of the profile that was applied, "" for none.
	Profile string
	// ConfigFile is the config file that was read, "" for none.
	ConfigFile string
}

// TLSConfig holds the TLS settings. Files are PEM.
type TLSConfig struct {
	CAFile             string // CA certificates to trust; "" means the system pool
	CertFile           string // client certificate, with KeyFile
	KeyFile            string
	ServerName         string // "" means the host dialled
	InsecureSkipVerify bool
}

// SASLConfig holds the SASL settings.
type SASLConfig struct {
	Mechanism string // one of the Mechanism constants
	User      string
	Password  string
}

// String describes the settings without the password.
func (s SASLConfig) String() string {
	return fmt.Sprintf("{%s user=%q password=<redacted>}", s.Mechanism, s.User)
}

// GoString is String, so that %#v does not print the password either.
func (s SASLConfig) GoString() string { return s.String() }

func (c Config) dialTimeout() time.Duration {
	if c.DialTimeout > 0 {
		return c.DialTimeout
	}
	return DefaultDialTimeout
}

func (c Config) requestTimeout() time.Duration {
	if c.RequestTimeout > 0 {
		return c.RequestTimeout
	}
	return DefaultRequestTimeout
}

// ConnOptions are the connection flags of every command that talks to a
// broker. Register them with AddFlags, then call Resolve after parsing to
// merge them with the environment and the config file.
type ConnOptions struct {
	Brokers               []string
	TLS                   bool
	TLSCA                 string
	TLSCert               string
	TLSKey                string
	TLSServerName         string
	TLSInsecureSkipVerify bool
	SASLMechanism         string
	SASLUser              string
	SASLPasswordFile      string
	Profile               string
	ConfigFile            string
	DialTimeout           time.Duration
	RequestTimeout        time.Duration

	// flags, when set by AddFlags, tells which flags the user gave. Without
	// it a non-zero field counts as given.
	flags *pflag.FlagSet
}

// AddFlags registers the connection flags on fs. Resolve then uses fs to
// tell flags the user gave from defaults.
func (o *ConnOptions) AddFlags(fs *pflag.FlagSet) {
	o.flags = fs
	fs.StringSliceVar(&o.Brokers, "brokers", nil, "Kafka brokers, comma-separated host:port (env "+EnvBrokers+")")
	fs.BoolVar(&o.TLS, "tls", false, "connect with TLS (implied by any other --tls-* flag)")
	fs.StringVar(&o.TLSCA, "tls-ca", "", "PEM file of CA certificates to trust (default: the system pool)")
	fs.StringVar(&o.TLSCert, "tls-cert", "", "PEM client certificate file (with --tls-key)")
	fs.StringVar(&o.TLSKey, "tls-key", "", "PEM client key file (with --tls-cert)")
	fs.StringVar(&o.TLSServerName, "tls-server-name", "", "name to verify broker certificates against (default: the broker host)")
	fs.BoolVar(&o.TLSInsecureSkipVerify, "tls-insecure-skip-verify", false, "do not verify broker certificates (unsafe)")
	fs.StringVar(&o.SASLMechanism, "sasl-mechanism", "", "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fs.StringVar(&o.SASLUser, "sasl-user", "", "SASL user")
	fs.StringVar(&o.SASLPasswordFile, "sasl-password-file", "", "file holding the SASL password (or env "+EnvSASLPassword+")")
	fs.StringVar(&o.Profile, "profile", "", "profile to use from the config file (env "+EnvProfile+")")
	fs.StringVar(&o.ConfigFile, "config", "", "config file (default $XDG_CONFIG_HOME/causalctl/config.yaml)")
	fs.DurationVar(&o.DialTimeout, "dial-timeout", DefaultDialTimeout, "time to connect to a broker, TLS and SASL included")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", DefaultRequestTimeout, "time allowed for one broker request, retries included")
}

// given reports whether the user set the flag name. Without a flag set,
// nonZero (whether the field differs from its zero value) decides.
func (o *ConnOptions) given(name string, nonZero bool) bool {
	if o.flags != nil {
		if f := o.flags.Lookup(name); f != nil {
			return f.Changed
		}
	}
	return nonZero
}

// layer is one source of settings; nil fields are not set by it.
type layer struct {
	brokers        []string
	tls            *bool
	tlsCA          *string
	tlsCert        *string
	tlsKey         *string
	tlsServerName  *string
	tlsInsecure    *bool
	mechanism      *string
	user           *string
	password       *secret
	dialTimeout    *time.Duration
	requestTimeout *time.Duration
}

// secret says where a password comes from.
type secret struct {
	what  string // for messages: "env CAUSALCTL_SASL_PASSWORD", "--sasl-password-file"
	value string // the password itself, when given directly
	file  string // a file holding it
	env   string // an environment variable holding it
}

// DefaultConfigPath returns where the config file is looked for when neither
// --config nor CAUSALCTL_CONFIG names one: $XDG_CONFIG_HOME/causalctl/
// config.yaml, or $HOME/.config/causalctl/config.yaml when XDG_CONFIG_HOME is
// unset. It returns "" when neither variable is set.
func DefaultConfigPath(getenv func(string) string) string {
	if dir := getenv("XDG_CONFIG_HOME"); dir != "" {
		return filepath.Join(dir, "causalctl", "config.yaml")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "causalctl", "config.yaml")
	}
	return ""
}

// Resolve merges the flags, the environment (read through getenv, normally
// os.Getenv) and the selected profile of the config file into a Config.
//
// Each setting is taken from the first source that sets it: a flag the user
// gave, then its CAUSALCTL_* variable, then the profile. The config file is
// --config, else CAUSALCTL_CONFIG, else DefaultConfigPath (a missing default
// file is not an error). The profile is --profile, else CAUSALCTL_PROFILE,
// else the file's current_profile; without any, no profile applies.
//
// The SASL password is never taken from a flag: it comes from
// --sasl-password-file, CAUSALCTL_SASL_PASSWORD, CAUSALCTL_SASL_PASSWORD_FILE,
// or the profile's password_env or password_file, in that order.
func (o *ConnOptions) Resolve(getenv func(string) string) (Config, error) {
	flags, err := o.flagLayer()
	if err != nil {
		return Config{}, err
	}
	env, err := envLayer(getenv)
	if err != nil {
		return Config{}, err
	}

	// The config file and the profile name.
	path, explicit := o.configPath(getenv)
	profileName, profileWhy := "", ""
	switch {
	case o.given("profile", o.Profile != ""):
		profileName, profileWhy = o.Profile, "--profile"
	case getenv(EnvProfile) != "":
		profileName, profileWhy = getenv(EnvProfile), EnvProfile
	}

	var (
		file    *fileConfig
		profile layer
		cfg     Config
	)
	if path != "" {
		file, err = readConfigFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !explicit:
			file, err = nil, nil
		case err != nil:
			return Config{}, err
		default:
			cfg.ConfigFile = path
		}
	}
	if profileName == "" && file != nil && file.CurrentProfile != "" {
		profileName, profileWhy = file.CurrentProfile, "current_profile in "+path
	}
	if profileName != "" {
		if file == nil {
			return Config{}, fmt.Errorf("profile %q (from %s): no config file found (looked for %s)", profileName, profileWhy, orNone(path))
		}
		p, ok := file.Profiles[profileName]
		if !ok {
			return Config{}, fmt.Errorf("profile %q (from %s) is not in %s (profiles: %s)", profileName, profileWhy, path, strings.Join(file.profileNames(), ", "))
		}
		profile, err = p.layer(profileName, filepath.Dir(path), getenv)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", path, err)
		}
		cfg.Profile = profileName
	}

	m := merge(flags, env, profile)
	cfg.Brokers = m.brokers
	if len(cfg.Brokers) == 0 {
		return Config{}, fmt.Errorf("no brokers: set --brokers, %s or a profile's brokers", EnvBrokers)
	}
	for _, b := range cfg.Brokers {
		if b == "" || strings.ContainsAny(b, " \t/") {
			return Config{}, fmt.Errorf("broker %q: want host:port", b)
		}
	}

	tlsOn := deref(m.tlsCA) != "" || deref(m.tlsCert) != "" || deref(m.tlsKey) != "" ||
		deref(m.tlsServerName) != "" || deref(m.tlsInsecure)
	if m.tls != nil {
		tlsOn = *m.tls
	}
	if tlsOn {
		cfg.TLS = &TLSConfig{
			CAFile:             deref(m.tlsCA),
			CertFile:           deref(m.tlsCert),
			KeyFile:            deref(m.tlsKey),
			ServerName:         deref(m.tlsServerName),
			InsecureSkipVerify: deref(m.tlsInsecure),
		}
		if (cfg.TLS.CertFile == "") != (cfg.TLS.KeyFile == "") {
			return Config{}, errors.New("TLS client certificate and key go together: set both --tls-cert and --tls-key, or neither")
		}
	}

	mech, user := deref(m.mechanism), deref(m.user)
	switch {
	case mech != "":
		canon, err := canonicalMechanism(mech)
		if err != nil {
			return Config{}, err
		}
		if user == "" {
			return Config{}, fmt.Errorf("SASL %s needs a user: set --sasl-user, %s or the profile's sasl.user", canon, EnvSASLUser)
		}
		if m.password == nil {
			return Config{}, fmt.Errorf("SASL %s needs a password: set %s, --sasl-password-file, %s, or the profile's sasl.password_env or sasl.password_file",
				canon, EnvSASLPassword, EnvSASLPasswordFile)
		}
		pw, err := m.password.read(getenv)
		if err != nil {
			return Config{}, err
		}
		cfg.SASL = &SASLConfig{Mechanism: canon, User: user, Password: pw}
	case user != "":
		return Config{}, fmt.Errorf("SASL user %q given without a mechanism: set --sasl-mechanism or %s", user, EnvSASLMechanism)
	}

	cfg.DialTimeout = DefaultDialTimeout
	if m.dialTimeout != nil {
		cfg.DialTimeout = *m.dialTimeout
	}
	cfg.RequestTimeout = DefaultRequestTimeout
	if m.requestTimeout != nil {
		cfg.RequestTimeout = *m.requestTimeout
	}
	if cfg.DialTimeout <= 0 || cfg.RequestTimeout <= 0 {
		return Config{}, errors.New("dial and request timeouts must be positive")
	}
	return cfg, nil
}

// configPath returns the config file to read and whether it was named
// (--config or CAUSALCTL_CONFIG) rather than the default, which may be
// missing.
func (o *ConnOptions) configPath(getenv func(string) string) (path string, explicit bool) {
	switch {
	case o.given("config", o.ConfigFile != ""):
		return o.ConfigFile, true
	case getenv(EnvConfig) != "":
		return getenv(EnvConfig), true
	}
	return DefaultConfigPath(getenv), false
}

// ProfileNames returns the names of the profiles in the config file that
// Resolve would read, sorted; none when there is no config file.
func (o *ConnOptions) ProfileNames(getenv func(string) string) ([]string, error) {
	path, _ := o.configPath(getenv)
	if path == "" {
		return nil, nil
	}
	file, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(file.Profiles)), nil
}

func (o *ConnOptions) flagLayer() (layer, error) {
	var l layer
	if o.given("brokers", len(o.Brokers) > 0) {
		l.brokers = cleanList(o.Brokers)
	}
	if o.given("tls", o.TLS) {
		l.tls = ptr(o.TLS)
	}
	str := func(name string, v string) *string {
		if o.given(name, v != "") {
			return ptr(v)
		}
		return nil
	}
	l.tlsCA = str("tls-ca", o.TLSCA)
	l.tlsCert = str("tls-cert", o.TLSCert)
	l.tlsKey = str("tls-key", o.TLSKey)
	l.tlsServerName = str("tls-server-name", o.TLSServerName)
	if o.given("tls-insecure-skip-verify", o.TLSInsecureSkipVerify) {
		l.tlsInsecure = ptr(o.TLSInsecureSkipVerify)
	}
	l.mechanism = str("sasl-mechanism", o.SASLMechanism)
	l.user = str("sasl-user", o.SASLUser)
	if o.given("sasl-password-file", o.SASLPasswordFile != "") {
		if o.SASLPasswordFile == "" {
			return layer{}, errors.New("--sasl-password-file: empty path")
		}
		l.password = &secret{what: "--sasl-password-file", file: o.SASLPasswordFile}
	}
	if o.given("dial-timeout", o.DialTimeout != 0) {
		l.dialTimeout = ptr(o.DialTimeout)
	}
	if o.given("request-timeout", o.RequestTimeout != 0) {
		l.requestTimeout = ptr(o.RequestTimeout)
	}
	return l, nil
}

func envLayer(getenv func(string) string) (layer, error) {
	var l layer
	str := func(name string) *string {
		if v := getenv(name); v != "" {
			return ptr(v)
		}
		return nil
	}
	boolean := func(name string) (*bool, error) {
		v := getenv(name)
		if v == "" {
			return nil, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: want true or false", name, v)
		}
		return &b, nil
	}
	duration := func(name string) (*time.Duration, error) {
		v := getenv(name)
		if v == "" {
			return nil, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: want a duration such as 5s", name, v)
		}
		return &d, nil
	}
	var err error
	if v := getenv(EnvBrokers); v != "" {
		l.brokers = cleanList(strings.Split(v, ","))
	}
	if l.tls, err = boolean(EnvTLS); err != nil {
		return layer{}, err
	}
	l.tlsCA = str(EnvTLSCA)
	l.tlsCert = str(EnvTLSCert)
	l.tlsKey = str(EnvTLSKey)
	l.tlsServerName = str(EnvTLSServerName)
	if l.tlsInsecure, err = boolean(EnvTLSInsecureSkipVerify); err != nil {
		return layer{}, err
	}
	l.mechanism = str(EnvSASLMechanism)
	l.user = str(EnvSASLUser)
	pw, pwFile := getenv(EnvSASLPassword), getenv(EnvSASLPasswordFile)
	switch {
	case pw != "" && pwFile != "":
		return layer{}, fmt.Errorf("both %s and %s are set: set only one", EnvSASLPassword, EnvSASLPasswordFile)
	case pw != "":
		l.password = &secret{what: "env " + EnvSASLPassword, value: pw}
	case pwFile != "":
		l.password = &secret{what: "env " + EnvSASLPasswordFile, file: pwFile}
	}
	if l.dialTimeout, err = duration(EnvDialTimeout); err != nil {
		return layer{}, err
	}
	if l.requestTimeout, err = duration(EnvRequestTimeout); err != nil {
		return layer{}, err
	}
	return l, nil
}

// merge takes each setting from the first layer that sets it.
func merge(layers ...layer) layer {
	var m layer
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		if l.brokers != nil {
			m.brokers = l.brokers
		}
		setIf(&m.tls, l.tls)
		setIf(&m.tlsCA, l.tlsCA)
		setIf(&m.tlsCert, l.tlsCert)
		setIf(&m.tlsKey, l.tlsKey)
		setIf(&m.tlsServerName, l.tlsServerName)
		setIf(&m.tlsInsecure, l.tlsInsecure)
		setIf(&m.mechanism, l.mechanism)
		setIf(&m.user, l.user)
		setIf(&m.password, l.password)
		setIf(&m.dialTimeout, l.dialTimeout)
		setIf(&m.requestTimeout, l.requestTimeout)
	}
	return m
}

func setIf[T any](dst **T, src *T) {
	if src != nil {
		*dst = src
	}
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func orNone(s string) string {
	if s == "" {
		return "nothing: neither XDG_CONFIG_HOME nor HOME is set"
	}
	return s
}

func cleanList(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func canonicalMechanism(m string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(m)) {
	case MechanismPlain:
		return MechanismPlain, nil
	case MechanismScramSHA256, "SCRAM-SHA256":
		return MechanismScramSHA256, nil
	case MechanismScramSHA512, "SCRAM-SHA512":
		return MechanismScramSHA512, nil
	}
	return "", fmt.Errorf("SASL mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", m)
}

// read returns the password. A file's trailing line break is dropped; an
// empty password is an error.
func (s *secret) read(getenv func(string) string) (string, error) {
	var pw string
	switch {
	case s.file != "":
		b, err := os.ReadFile(s.file)
		if err != nil {
			return "", fmt.Errorf("SASL password file (from %s): %w", s.what, err)
		}
		b = bytes.TrimSuffix(b, []byte("\n"))
		b = bytes.TrimSuffix(b, []byte("\r"))
		pw = string(b)
	case s.env != "":
		pw = getenv(s.env)
		if pw == "" {
			return "", fmt.Errorf("SASL password (from %s): environment variable %s is unset or empty", s.what, s.env)
		}
	default:
		pw = s.value
	}
	if pw == "" {
		return "", fmt.Errorf("SASL password (from %s) is empty", s.what)
	}
	return pw, nil
}

// fileConfig is the config file: named profiles and an optional default.
type fileConfig struct {
	CurrentProfile string                 `yaml:"current_profile"`
	Profiles       map[string]fileProfile `yaml:"profiles"`
}

type fileProfile struct {
	Brokers        brokerList `yaml:"brokers"`
	TLS            *fileTLS   `yaml:"tls"`
	SASL           *fileSASL  `yaml:"sasl"`
	DialTimeout    string     `yaml:"dial_timeout"`
	RequestTimeout string     `yaml:"request_timeout"`
}

type fileTLS struct {
	Enabled            *bool  `yaml:"enabled"`
	CA                 string `yaml:"ca"`
	Cert               string `yaml:"cert"`
	Key                string `yaml:"key"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify *bool  `yaml:"insecure_skip_verify"`
}

type fileSASL struct {
	Mechanism    string  `yaml:"mechanism"`
	User         string  `yaml:"user"`
	PasswordEnv  string  `yaml:"password_env"`
	PasswordFile string  `yaml:"password_file"`
	Password     *string `yaml:"password"` // refused: see layer
}

// brokerList accepts a YAML sequence or one comma-separated string.
type brokerList []string

func (b *brokerList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var s string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*b = cleanList(strings.Split(s, ","))
		return nil
	}
	var l []string
	if err := n.Decode(&l); err != nil {
		return err
	}
	*b = cleanList(l)
	return nil
}

func readConfigFile(path string) (*fileConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	var fc fileConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	// An empty file is an empty config: the decoder reports it as io.EOF.
	if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return &fc, nil
}

func (fc *fileConfig) profileNames() []string {
	names := make([]string, 0, len(fc.Profiles))
	for n := range fc.Profiles {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}

// layer turns the profile into a settings layer. Relative paths are taken
// relative to the config file's directory, and ~/ is the home directory.
func (p fileProfile) layer(name, dir string, getenv func(string) string) (layer, error) {
	var l layer
	where := "profile " + strconv.Quote(name)
	path := func(s string) *string {
		if s == "" {
			return nil
		}
		if rest, ok := strings.CutPrefix(s, "~/"); ok && getenv("HOME") != "" {
			s = filepath.Join(getenv("HOME"), rest)
		} else if !filepath.IsAbs(s) {
			s = filepath.Join(dir, s)
		}
		return &s
	}
	nonEmpty := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	if len(p.Brokers) > 0 {
		l.brokers = p.Brokers
	}
	if t := p.TLS; t != nil {
		l.tls = t.Enabled
		l.tlsCA = path(t.CA)
		l.tlsCert = path(t.Cert)
		l.tlsKey = path(t.Key)
		l.tlsServerName = nonEmpty(t.ServerName)
		l.tlsInsecure = t.InsecureSkipVerify
		if t.Enabled == nil && (t.CA != "" || t.Cert != "" || t.Key != "" || t.ServerName != "" || deref(t.InsecureSkipVerify)) {
			l.tls = ptr(true)
		}
	}
	if s := p.SASL; s != nil {
		if s.Password != nil {
			return layer{}, fmt.Errorf("%s: sasl.password is not accepted: put the password in an environment variable (password_env) or a file (password_file)", where)
		}
		l.mechanism = nonEmpty(s.Mechanism)
		l.user = nonEmpty(s.User)
		switch {
		case s.PasswordEnv != "" && s.PasswordFile != "":
			return layer{}, fmt.Errorf("%s: set only one of sasl.password_env and sasl.password_file", where)
		case s.PasswordEnv != "":
			l.password = &secret{what: where + " password_env", env: s.PasswordEnv}
		case s.PasswordFile != "":
			l.password = &secret{what: where + " password_file", file: *path(s.PasswordFile)}
		}
	}
	for _, d := range []struct {
		text string
		dst  **time.Duration
		key  string
	}{{p.DialTimeout, &l.dialTimeout, "dial_timeout"}, {p.RequestTimeout, &l.requestTimeout, "request_timeout"}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil {
			return layer{}, fmt.Errorf("%s: %s %q: want a duration such as 5s", where, d.key, d.text)
		}
		*d.dst = &v
	}
	return l, nil
}
