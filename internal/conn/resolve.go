package conn

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/causalctl/causalctl/internal/kafka"
)

// Options are the connection flags of every command that talks to a
// broker. Register them with AddFlags, then call Resolve after parsing to
// merge them with the environment and the config file. The zero Options
// has no flags: only the environment and the config file count.
type Options struct {
	fs     *pflag.FlagSet
	warned map[string]bool // files warned about in this run
}

// AddFlags registers a flag for every setting of the table that has one.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.fs = fs
	for _, s := range settings {
		if !s.Flag {
			continue
		}
		switch s.Kind {
		case KindList:
			fs.StringSlice(s.Name, nil, s.FlagUsage())
		case KindBool:
			fs.Bool(s.Name, false, s.FlagUsage())
		case KindDuration:
			fs.Duration(s.Name, mustDuration(s.Default), s.FlagUsage())
		default:
			fs.String(s.Name, s.Default, s.FlagUsage())
		}
	}
}

// value is one source's value of a setting: []string, bool, string or
// time.Duration by the setting's kind, and where it came from, for
// messages ("--tls-ca", "env CAUSALCTL_TLS_CA", `profile "prod" tls.ca`).
type value struct {
	v    any
	from string
}

// layer is what one source sets, by setting name.
type layer map[string]value

func (l layer) str(name string) string {
	s, _ := l[name].v.(string)
	return s
}

func (l layer) boolean(name string) bool {
	b, _ := l[name].v.(bool)
	return b
}

// flagLayer holds the flags the user gave.
func (o *Options) flagLayer() (layer, error) {
	l := layer{}
	if o.fs == nil {
		return l, nil
	}
	for _, s := range settings {
		if !s.Flag {
			continue
		}
		f := o.fs.Lookup(s.Name)
		if f == nil || !f.Changed {
			continue
		}
		from := "--" + s.Name
		var v any
		var err error
		switch s.Kind {
		case KindList:
			var list []string
			list, err = o.fs.GetStringSlice(s.Name)
			v = cleanList(list)
		case KindBool:
			v, err = o.fs.GetBool(s.Name)
		case KindDuration:
			v, err = o.fs.GetDuration(s.Name)
		default:
			var str string
			str, err = o.fs.GetString(s.Name)
			if err == nil && str == "" && s.Kind == KindPath {
				err = errors.New("empty path")
			}
			v = str
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		l[s.Name] = value{v, from}
	}
	return l, checkGroups(l)
}

// envLayer holds the environment variables that are set.
func envLayer(getenv func(string) string) (layer, error) {
	l := layer{}
	for _, s := range settings {
		text := ""
		if s.Env != "" {
			text = getenv(s.Env)
		}
		if text == "" {
			continue
		}
		v, err := parseText(s, text)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", s.Env, text, err)
		}
		l[s.Name] = value{v, "env " + s.Env}
	}
	return l, checkGroups(l)
}

// parseText reads a setting written as text (an environment variable).
func parseText(s Setting, text string) (any, error) {
	switch s.Kind {
	case KindList:
		return cleanList(strings.Split(text, ",")), nil
	case KindBool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil, errors.New("want true or false")
		}
		return b, nil
	case KindDuration:
		d, err := time.ParseDuration(text)
		if err != nil {
			return nil, errors.New("want a duration such as 5s")
		}
		return d, nil
	}
	return text, nil
}

// checkGroups refuses a layer that sets two settings of one group.
func checkGroups(l layer) error {
	first := map[string]string{}
	for _, s := range settings {
		v, ok := l[s.Name]
		if !ok || s.Group == "" {
			continue
		}
		if other, dup := first[s.Group]; dup {
			return fmt.Errorf("set only one of %s and %s", other, v.from)
		}
		first[s.Group] = v.from
	}
	return nil
}

// merge takes each setting from the first layer that sets it; a group's
// setting comes from the first layer that sets any of the group (a layer
// sets at most one: checkGroups).
func merge(layers ...layer) layer {
	m := layer{}
	groupFrom := map[string]int{} // group → the layer it is taken from
	for i, l := range layers {
		for _, s := range settings {
			v, ok := l[s.Name]
			if _, done := m[s.Name]; !ok || done {
				continue
			}
			if s.Group != "" {
				if j, taken := groupFrom[s.Group]; taken && j != i {
					continue
				}
				groupFrom[s.Group] = i
			}
			m[s.Name] = v
		}
	}
	return m
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
// os.Getenv) and the selected profile of the config file into a
// kafka.Config, in the order Precedence says.
//
// The config file is --config, else CAUSALCTL_CONFIG, else
// DefaultConfigPath (a missing default file is not an error). The profile
// is --profile, else CAUSALCTL_PROFILE, else the file's current_profile;
// without any, no profile applies.
func (o *Options) Resolve(getenv func(string) string) (kafka.Config, error) {
	return o.ResolveWarn(getenv, nil)
}

// ResolveWarn is Resolve, calling warn (when not nil) with a line for each
// file of secrets it read — the config file, the password file, the TLS
// key — that users other than its owner may read or write, as ssh does.
// Each file is warned about once per Options, however often it is read.
func (o *Options) ResolveWarn(getenv func(string) string, warn func(string)) (kafka.Config, error) {
	check := func(what, path string) {
		if warn == nil {
			return
		}
		line := looseFile(what, path)
		if line == "" || o.warned[path] {
			return
		}
		if o.warned == nil {
			o.warned = map[string]bool{}
		}
		o.warned[path] = true
		warn(line)
	}
	flags, err := o.flagLayer()
	if err != nil {
		return kafka.Config{}, err
	}
	env, err := envLayer(getenv)
	if err != nil {
		return kafka.Config{}, err
	}
	top := merge(flags, env) // where the file and the profile are named

	var cfg kafka.Config
	path, explicit := configPath(top, getenv)
	var file *configFile
	if path != "" {
		file, err = readConfigFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !explicit:
			file, err = nil, nil
		case err != nil:
			return kafka.Config{}, err
		default:
			cfg.ConfigFile = path
			check("config file", path)
		}
	}
	profileName, profileWhy := top.str(sProfile), top[sProfile].from
	if profileName == "" && file != nil && file.current != "" {
		profileName, profileWhy = file.current, "current_profile in "+path
	}
	profile := layer{}
	if profileName != "" {
		if file == nil {
			return kafka.Config{}, fmt.Errorf("profile %q (from %s): no config file found (looked for %s)", profileName, profileWhy, orNone(path))
		}
		p, ok := file.profiles[profileName]
		if !ok {
			return kafka.Config{}, fmt.Errorf("profile %q (from %s) is not in %s (profiles: %s)", profileName, profileWhy, path, strings.Join(file.names(), ", "))
		}
		if profile, err = p.layer(profileName, filepath.Dir(path), getenv); err != nil {
			return kafka.Config{}, fmt.Errorf("%s: %w", path, err)
		}
		cfg.Profile = profileName
	}
	return build(merge(flags, env, profile), cfg, getenv, check)
}

// looseFile returns the warning line for a file that users other than its
// owner may read or write ("" when none may, when it cannot be read, and
// on Windows, whose permissions are not mode bits).
func looseFile(what, path string) string {
	if runtime.GOOS == "windows" {
		return ""
	}
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	perm := fi.Mode().Perm()
	how := ""
	switch {
	case perm&0o044 != 0:
		how = "readable"
	case perm&0o022 != 0:
		how = "writable"
	default:
		return ""
	}
	return fmt.Sprintf("warning: %s %s is %s by others (mode %04o); chmod 600 it", what, path, how, perm)
}

// configPath returns the config file to read and whether it was named
// (--config or CAUSALCTL_CONFIG) rather than the default, which may be
// missing.
func configPath(top layer, getenv func(string) string) (path string, explicit bool) {
	if p := top.str(sConfig); p != "" {
		return p, true
	}
	return DefaultConfigPath(getenv), false
}

// build turns the merged settings into the Config, checking that they
// go together.
func build(m layer, cfg kafka.Config, getenv func(string) string, check func(what, path string)) (kafka.Config, error) {
	cfg.Brokers, _ = m[sBrokers].v.([]string)
	if len(cfg.Brokers) == 0 {
		return kafka.Config{}, fmt.Errorf("no brokers: set --brokers, %s or a profile's brokers", EnvBrokers)
	}
	for _, b := range cfg.Brokers {
		if b == "" || strings.ContainsAny(b, " \t/") {
			return kafka.Config{}, fmt.Errorf("broker %q: want host:port", b)
		}
	}

	tlsOn := m.str(sTLSCA) != "" || m.str(sTLSCert) != "" || m.str(sTLSKey) != "" || m.str(sTLSServerName) != "" || m.boolean(sTLSInsecure)
	if _, ok := m[sTLS]; ok {
		tlsOn = m.boolean(sTLS)
	}
	if tlsOn {
		cfg.TLS = &kafka.TLSConfig{
			CAFile:             m.str(sTLSCA),
			CertFile:           m.str(sTLSCert),
			KeyFile:            m.str(sTLSKey),
			ServerName:         m.str(sTLSServerName),
			InsecureSkipVerify: m.boolean(sTLSInsecure),
		}
		if (cfg.TLS.CertFile == "") != (cfg.TLS.KeyFile == "") {
			return kafka.Config{}, errors.New("TLS client certificate and key go together: set both --tls-cert and --tls-key, or neither")
		}
		if cfg.TLS.KeyFile != "" {
			check("TLS key file", cfg.TLS.KeyFile)
		}
	}

	mech, user := m.str(sMechanism), m.str(sUser)
	switch {
	case mech != "":
		canon, err := canonicalMechanism(mech)
		if err != nil {
			return kafka.Config{}, err
		}
		if user == "" {
			return kafka.Config{}, fmt.Errorf("SASL %s needs a user: set --sasl-user, %s or the profile's sasl.user", canon, EnvSASLUser)
		}
		pw, err := password(m, getenv, check)
		if err != nil {
			return kafka.Config{}, fmt.Errorf("SASL %s %w", canon, err)
		}
		cfg.SASL = &kafka.SASLConfig{Mechanism: canon, User: user, Password: pw}
	case user != "":
		return kafka.Config{}, fmt.Errorf("SASL user %q given without a mechanism: set --sasl-mechanism or %s", user, EnvSASLMechanism)
	}

	cfg.DialTimeout, cfg.RequestTimeout = kafka.DefaultDialTimeout, kafka.DefaultRequestTimeout
	if d, ok := m[sDialTimeout].v.(time.Duration); ok {
		cfg.DialTimeout = d
	}
	if d, ok := m[sRequestTimeout].v.(time.Duration); ok {
		cfg.RequestTimeout = d
	}
	if cfg.DialTimeout <= 0 || cfg.RequestTimeout <= 0 {
		return kafka.Config{}, errors.New("dial and request timeouts must be positive")
	}
	return cfg, nil
}

// password reads the SASL password from the one way it was given. A
// file's trailing line break is dropped; an empty password is an error.
func password(m layer, getenv func(string) string, check func(what, path string)) (string, error) {
	var pw, from string
	switch {
	case m[sPasswordFile].from != "":
		from = m[sPasswordFile].from
		b, err := kafka.ReadFileLimit("password file", m.str(sPasswordFile), kafka.MaxPasswordFile)
		if err != nil {
			return "", fmt.Errorf("password file (from %s): %w", from, err)
		}
		check("password file", m.str(sPasswordFile))
		b = bytes.TrimSuffix(b, []byte("\n"))
		b = bytes.TrimSuffix(b, []byte("\r"))
		pw = string(b)
	case m[sPasswordEnv].from != "":
		from = m[sPasswordEnv].from
		name := m.str(sPasswordEnv)
		if !isEnvName(name) {
			// Not echoed: a value that is no variable name may well be the
			// password itself, written where its variable's name goes.
			return "", fmt.Errorf("password (from %s): not the name of an environment variable (A-Z, a-z, 0-9 and _, not starting with a digit); it names the variable that holds the password, never the password", from)
		}
		if pw = getenv(name); pw == "" {
			return "", fmt.Errorf("password (from %s): environment variable %s is unset or empty", from, name)
		}
	case m[sPassword].from != "":
		from, pw = m[sPassword].from, m.str(sPassword)
	default:
		return "", fmt.Errorf("needs a password: set %s, --sasl-password-file, %s, or the profile's sasl.password_env or sasl.password_file",
			EnvSASLPassword, EnvSASLPasswordFile)
	}
	if pw == "" {
		return "", fmt.Errorf("password (from %s) is empty", from)
	}
	return pw, nil
}

// isEnvName reports whether s can name an environment variable the way
// shells write them.
func isEnvName(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// ProfileNames returns the names of the profiles in the config file that
// Resolve would read, sorted; none when there is no config file.
func (o *Options) ProfileNames(getenv func(string) string) ([]string, error) {
	flags, err := o.flagLayer()
	if err != nil {
		return nil, err
	}
	env, err := envLayer(getenv)
	if err != nil {
		return nil, err
	}
	path, _ := configPath(merge(flags, env), getenv)
	if path == "" {
		return nil, nil
	}
	file, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(file.profiles)), nil
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
	case kafka.MechanismPlain:
		return kafka.MechanismPlain, nil
	case kafka.MechanismScramSHA256, "SCRAM-SHA256":
		return kafka.MechanismScramSHA256, nil
	case kafka.MechanismScramSHA512, "SCRAM-SHA512":
		return kafka.MechanismScramSHA512, nil
	}
	return "", fmt.Errorf("SASL mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", m)
}
