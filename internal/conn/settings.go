package conn

import (
	"fmt"
	"strings"
	"time"

	"github.com/causalctl/causalctl/internal/kafka"
)

// Environment variables of the settings (see Settings). Each overrides the
// selected profile and is overridden by its flag. An empty value counts as
// unset.
const (
	EnvBrokers               = "CAUSALCTL_BROKERS"
	EnvTLS                   = "CAUSALCTL_TLS"
	EnvTLSCA                 = "CAUSALCTL_TLS_CA"
	EnvTLSCert               = "CAUSALCTL_TLS_CERT"
	EnvTLSKey                = "CAUSALCTL_TLS_KEY"
	EnvTLSServerName         = "CAUSALCTL_TLS_SERVER_NAME"
	EnvTLSInsecureSkipVerify = "CAUSALCTL_TLS_INSECURE_SKIP_VERIFY"
	EnvSASLMechanism         = "CAUSALCTL_SASL_MECHANISM"
	EnvSASLUser              = "CAUSALCTL_SASL_USER"
	EnvSASLPassword          = "CAUSALCTL_SASL_PASSWORD"
	EnvSASLPasswordFile      = "CAUSALCTL_SASL_PASSWORD_FILE"
	EnvProfile               = "CAUSALCTL_PROFILE"
	EnvConfig                = "CAUSALCTL_CONFIG"
	EnvDialTimeout           = "CAUSALCTL_DIAL_TIMEOUT"
	EnvRequestTimeout        = "CAUSALCTL_REQUEST_TIMEOUT"
)

// Kind is how a setting's value is written.
type Kind int

// The kinds of settings.
const (
	KindString   Kind = iota
	KindList          // comma-separated (a YAML sequence in a profile)
	KindBool          // true or false
	KindPath          // a file; in a profile relative to the config file, ~/ is $HOME
	KindDuration      // a Go duration such as 5s
	KindEnvName       // the name of an environment variable that holds the value
)

// Setting is one connection setting and every way to give it. Settings is
// the table; the flags, the environment variables, the profile keys, their
// precedence and the documentation are all derived from it.
type Setting struct {
	// Name identifies the setting; it is the flag's name when there is
	// a flag.
	Name string
	// Flag is true when the setting has a --Name flag (never for a
	// password itself).
	Flag bool
	// Env is its environment variable, "" for none.
	Env string
	// Key is its key in a profile of the config file, dotted ("tls.ca"),
	// "" for none.
	Key  string
	Kind Kind
	// Default is the value when no source sets it, as text ("" for none).
	Default string
	// Help says what it does, in a line.
	Help string
	// Group names settings of which one source may set only one, such as
	// the ways to give the password; "" for none.
	Group string
}

// The setting names Resolve reads the merged values by.
const (
	sBrokers        = "brokers"
	sTLS            = "tls"
	sTLSCA          = "tls-ca"
	sTLSCert        = "tls-cert"
	sTLSKey         = "tls-key"
	sTLSServerName  = "tls-server-name"
	sTLSInsecure    = "tls-insecure-skip-verify"
	sMechanism      = "sasl-mechanism"
	sUser           = "sasl-user"
	sPassword       = "sasl-password"
	sPasswordFile   = "sasl-password-file"
	sPasswordEnv    = "sasl-password-env"
	sProfile        = "profile"
	sConfig         = "config"
	sDialTimeout    = "dial-timeout"
	sRequestTimeout = "request-timeout"

	groupPassword = "password"
)

// settings is the table, in the order of the documentation.
var settings = []Setting{
	{Name: sBrokers, Flag: true, Env: EnvBrokers, Key: "brokers", Kind: KindList, Help: "Kafka brokers, comma-separated host:port"},
	{Name: sTLS, Flag: true, Env: EnvTLS, Key: "tls.enabled", Kind: KindBool, Help: "connect with TLS (implied by any other TLS setting)"},
	{Name: sTLSCA, Flag: true, Env: EnvTLSCA, Key: "tls.ca", Kind: KindPath, Help: "PEM file of CA certificates to trust (default: the system pool)"},
	{Name: sTLSCert, Flag: true, Env: EnvTLSCert, Key: "tls.cert", Kind: KindPath, Help: "PEM client certificate file (with the key)"},
	{Name: sTLSKey, Flag: true, Env: EnvTLSKey, Key: "tls.key", Kind: KindPath, Help: "PEM client key file (with the certificate)"},
	{Name: sTLSServerName, Flag: true, Env: EnvTLSServerName, Key: "tls.server_name", Kind: KindString, Help: "name to verify broker certificates against (default: the broker host)"},
	{Name: sTLSInsecure, Flag: true, Env: EnvTLSInsecureSkipVerify, Key: "tls.insecure_skip_verify", Kind: KindBool, Help: "do not verify broker certificates (unsafe)"},
	{Name: sMechanism, Flag: true, Env: EnvSASLMechanism, Key: "sasl.mechanism", Kind: KindString, Help: "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"},
	{Name: sUser, Flag: true, Env: EnvSASLUser, Key: "sasl.user", Kind: KindString, Help: "SASL user"},
	{Name: sPasswordFile, Flag: true, Env: EnvSASLPasswordFile, Key: "sasl.password_file", Kind: KindPath, Group: groupPassword, Help: "file holding the SASL password"},
	{Name: sPassword, Env: EnvSASLPassword, Kind: KindString, Group: groupPassword, Help: "the SASL password itself (never a flag, never in the config file)"},
	{Name: sPasswordEnv, Key: "sasl.password_env", Kind: KindEnvName, Group: groupPassword, Help: "environment variable holding the SASL password"},
	{Name: sProfile, Flag: true, Env: EnvProfile, Kind: KindString, Help: "profile to use from the config file (default: its current_profile)"},
	{Name: sConfig, Flag: true, Env: EnvConfig, Kind: KindPath, Help: "config file (default $XDG_CONFIG_HOME/causalctl/config.yaml)"},
	{Name: sDialTimeout, Flag: true, Env: EnvDialTimeout, Key: "dial_timeout", Kind: KindDuration, Default: kafka.DefaultDialTimeout.String(), Help: "time to connect to a broker, TLS and SASL included"},
	{Name: sRequestTimeout, Flag: true, Env: EnvRequestTimeout, Key: "request_timeout", Kind: KindDuration, Default: kafka.DefaultRequestTimeout.String(), Help: "time allowed for one broker request, retries included"},
}

// Settings returns the table of connection settings, in a new slice.
func Settings() []Setting { return append([]Setting(nil), settings...) }

func lookup(name string) *Setting {
	for i := range settings {
		if settings[i].Name == name {
			return &settings[i]
		}
	}
	panic("conn: no setting " + name) // a typo in this package
}

// FlagUsage is the help text of the setting's flag: its help, with where
// else it may be given.
func (s Setting) FlagUsage() string {
	var also []string
	if s.Env != "" {
		also = append(also, "env "+s.Env)
	}
	if s.Key != "" {
		also = append(also, "profile "+s.Key)
	}
	if len(also) == 0 {
		return s.Help
	}
	return s.Help + " (" + strings.Join(also, ", ") + ")"
}

// EnvVar describes one environment variable, for help texts.
type EnvVar struct {
	Name string
	Help string
}

// EnvVars lists the environment variables Resolve reads, in the table's
// order, with a one-line description each.
func EnvVars() []EnvVar {
	var out []EnvVar
	for _, s := range settings {
		if s.Env == "" {
			continue
		}
		help := s.Help
		if s.Flag {
			help += " (--" + s.Name + ")"
		}
		out = append(out, EnvVar{Name: s.Env, Help: help})
	}
	return out
}

// Precedence says in which order the sources of a setting are read.
const Precedence = "Each setting is taken from the first of: a flag the user gave, its environment variable, " +
	"the selected profile of the config file, the default. The password is never a flag: it comes from " +
	"--sasl-password-file, " + EnvSASLPassword + ", " + EnvSASLPasswordFile + ", or the profile's " +
	"sasl.password_env or sasl.password_file, in that order."

// Markdown documents the settings as a Markdown table, with their
// precedence: docs/connection-settings.md is this text.
func Markdown() string {
	var b strings.Builder
	b.WriteString("# Connection settings\n\n")
	b.WriteString("<!-- Generated from internal/conn/settings.go by `go generate ./internal/conn`; do not edit. -->\n\n")
	b.WriteString(Precedence + "\n\n")
	b.WriteString("| flag | environment variable | profile key | default | meaning |\n|---|---|---|---|---|\n")
	cell := func(s string) string {
		if s == "" {
			return "—"
		}
		return "`" + s + "`"
	}
	for _, s := range settings {
		flag := ""
		if s.Flag {
			flag = "--" + s.Name
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(flag), cell(s.Env), cell(s.Key), cell(s.Default), s.Help)
	}
	b.WriteString("\nThe config file's other keys: `current_profile` (the profile used when none is selected) and `profiles` (name → the keys above).\n")
	return b.String()
}

func mustDuration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}
