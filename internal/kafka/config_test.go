package kafka

import (
	"fmt"
	"strings"
	"testing"
)

func TestSASLConfigRedacts(t *testing.T) {
	c := Config{Brokers: []string{"a:1"}, SASL: &SASLConfig{Mechanism: MechanismPlain, User: "u", Password: "hunter2"}}
	for _, s := range []string{fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprint(*c.SASL)} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("password printed: %s", s)
		}
	}
}
