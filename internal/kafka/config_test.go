package kafka

import (
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// TestSASLConfigRedacts: no verb prints the password, whether the
// settings are printed alone, by pointer, inside a Config or inside an
// error's struct.
func TestSASLConfigRedacts(t *testing.T) {
	const pw = "hunter2"
	c := Config{Brokers: []string{"a:1"}, SASL: &SASLConfig{Mechanism: MechanismPlain, User: "u", Password: pw}}
	wrapped := struct {
		Err  error
		SASL SASLConfig
	}{fmt.Errorf("dial: %v", c), *c.SASL}
	for _, v := range []any{c, &c, *c.SASL, c.SASL, wrapped, []SASLConfig{*c.SASL}, map[string]*SASLConfig{"k": c.SASL}} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
			s := fmt.Sprintf(verb, v)
			if strings.Contains(s, pw) || strings.Contains(strings.ToLower(s), hex.EncodeToString([]byte(pw))) {
				t.Errorf("%s of %T prints the password: %s", verb, v, s)
			}
		}
	}
	if s := fmt.Sprint(*c.SASL); s != `{PLAIN user="u" password=<redacted>}` {
		t.Errorf("String() = %s", s)
	}
}

func TestMillis32Saturates(t *testing.T) {
	for d, want := range map[time.Duration]int32{
		0: 0, 1500 * time.Millisecond: 1500, 30 * time.Second: 30000, 1000 * time.Hour: math.MaxInt32,
		math.MaxInt64: math.MaxInt32, -1000 * time.Hour: math.MinInt32, math.MinInt64: math.MinInt32,
	} {
		if got := millis32(d); got != want {
			t.Errorf("millis32(%v) = %d, want %d", d, got, want)
		}
	}
}
