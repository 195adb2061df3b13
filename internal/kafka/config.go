package kafka

import (
	"fmt"
	"io"
	"math"
	"time"
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

// Config is a resolved connection configuration: everything Dial needs.
// internal/conn builds it from flags, the environment and the config file;
// this package knows no command line.
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

// Format prints String whatever the verb, so that no verb (%d, %x, %+v)
// prints the password either.
func (s SASLConfig) Format(f fmt.State, _ rune) { io.WriteString(f, s.String()) }

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

// millis32 is d in the int32 milliseconds of Kafka's request fields,
// saturating: a --request-timeout of 1000h (3.6e9 ms) would wrap negative.
func millis32(d time.Duration) int32 {
	return int32(min(max(d.Milliseconds(), math.MinInt32), math.MaxInt32))
}
