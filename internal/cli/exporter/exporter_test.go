package exporter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/testutil"
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
	if o.MetricsAddr != ":9464" || o.Refresh != 15*time.Second || o.Discover != time.Minute || o.UnhealthyAfter != 2*time.Minute || o.AppPrefix != "" || o.MetricsMaxChannels != 5000 || o.MaxSeries != 100000 || o.ReadOnMaxRecords != inspect.DefaultReadOnMaxRecords {
		t.Errorf("defaults %+v", o)
	}
	if o, err = parse(t, "--app-prefix", "shop-", "--refresh-interval", "2s", "--metrics-max-channels", "0", "--max-series", "10", "--read-on-max-records", "0"); err != nil || o.AppPrefix != "shop-" || o.Refresh != 2*time.Second || o.MetricsMaxChannels != 0 || o.MaxSeries != 10 || o.ReadOnMaxRecords != 0 {
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
		{"--max-series", "-1"},
		{"--read-on-max-records", "-1"},
	} {
		_, err := parse(t, args...)
		var usage *cmdutil.UsageError
		if !errors.As(err, &usage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestFoldedWarning: the first scrape that folds tasks is said on stderr,
// with the bound, the count and what is dropped; later ones are not.
func TestFoldedWarning(t *testing.T) {
	var b strings.Builder
	warn := foldedWarning(&b, 5)
	warn(3, 1)
	warn(4, 2)
	want := "causalctl: exporter: --max-series 5 reached: 3 tasks are exported folded, their holds as one topic=\"_other\" series pair of totals each, without per-topic or lag series (causalctl_exporter_tasks_folded); 1 process has its start refusals exported only by the reasons met, with a total (causalctl_exporter_refusals_folded); raise --max-series or narrow with --app-prefix\n"
	if b.String() != want {
		t.Errorf("stderr %q, want %q", b.String(), want)
	}
}

// TestErrorLinesEscaped: a failed read's error names application ids and
// topics a broker serves, and carries the broker's message: each is one
// line on stderr with no raw control byte.
func TestErrorLinesEscaped(t *testing.T) {
	var b strings.Builder
	say := errorLines(&b)
	for _, s := range testutil.Hostile {
		say(fmt.Errorf("%s: reading %s-__parsley.ordering-changelog: %w", s, s, errors.Join(errors.New("first"), errors.New(s))))
	}
	testutil.NoRawHostile(t, "exporter stderr", b.String())
	if n := strings.Count(b.String(), "\n"); n != len(testutil.Hostile) {
		t.Errorf("%d lines for %d errors:\n%s", n, len(testutil.Hostile), b.String())
	}
}
