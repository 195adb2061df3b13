package cmdutil

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/causalctl/causalctl/internal/conn"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
)

// TestReadProcessInput: the one way to read one process reads a capture
// when given one (no cluster is asked) and the cluster otherwise.
func TestReadProcessInput(t *testing.T) {
	c := kafkatest.Cluster(t, kfake.SeedTopics(2, parsley.ChangelogTopic("shop")))
	env := map[string]string{conn.EnvBrokers: c.ListenAddrs()[0]}
	ios, in, _, _ := iostreams.Test()
	f := NewFactory(ios, func(k string) string { return env[k] })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	p, err := f.ReadProcessInput(ctx, input.ProcessInput{App: "shop", TxnWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if p.App != "shop" || p.Changelog.Topic != parsley.ChangelogTopic("shop") || len(p.Changelog.Partitions()) != 2 || p.Group == nil {
		t.Errorf("from the cluster: app %q, changelog %q (%d partitions), group %v", p.App, p.Changelog.Topic, len(p.Changelog.Partitions()), p.Group)
	}

	in.WriteString(twoTopics) // a capture without a changelog: its own error
	_, err = f.ReadProcessInput(ctx, input.ProcessInput{App: "shop", Input: "-", MaxLineSize: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "stdin holds no records of the changelog "+parsley.ChangelogTopic("shop")) {
		t.Errorf("from a capture: %v", err)
	}
}
