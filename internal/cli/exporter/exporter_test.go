package exporter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/iostreams"
)

// parse runs the command's flag parsing with args and returns the options
// Run would get, or the error.
func parse(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	var got *Options
	cmd := NewCmdExporter(&cmdutil.Factory{IOStreams: ios}, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(ios.ErrOut)
	cmd.SetErr(ios.ErrOut)
	err := cmd.Execute()
	return got, err
}

// TestFlags: the defaults, a given flag, and every bad value a usage
// error naming its flag.
func TestFlags(t *testing.T) {
	o, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if o.MetricsAddr != ":9464" || o.Refresh != 15*time.Second || o.Discover != time.Minute || o.UnhealthyAfter != 2*time.Minute || o.AppPrefix != "" || o.MetricsMaxChannels != 5000 {
		t.Errorf("defaults %+v", o)
	}
	if o, err = parse(t, "--app-prefix", "shop-", "--refresh-interval", "2s", "--metrics-max-channels", "0"); err != nil || o.AppPrefix != "shop-" || o.Refresh != 2*time.Second || o.MetricsMaxChannels != 0 {
		t.Errorf("given flags: %+v, %v", o, err)
	}
	for _, args := range [][]string{
		{"--metrics-addr", ""},
		{"--metrics-addr", "9464"},
		{"--refresh-interval", "0s"},
		{"--discover-interval", "-1s"},
		{"--unhealthy-after", "0s"},
		{"--txn-wait", "0s"},
		{"--metrics-max-channels", "-1"},
	} {
		_, err := parse(t, args...)
		var usage *cmdutil.UsageError
		if !errors.As(err, &usage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
