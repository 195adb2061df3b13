package acceptance

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/cmdutil/cmdutiltest"
	"github.com/causalctl/causalctl/internal/cli/root"
	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/parsley"
	"github.com/causalctl/causalctl/internal/replay"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// complete asks causalctl for the completions of args, the way the shell
// scripts do (the last argument is the word being completed), and returns
// the candidates (descriptions cut off) and the directive line.
func complete(t *testing.T, env map[string]string, args ...string) (cands []string, directive string, stderr string) {
	t.Helper()
	code, out, errOut := runEnv(t, env, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d, stderr %q", args, code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	directive = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		v, _, _ := strings.Cut(l, "\t")
		cands = append(cands, v)
	}
	return cands, directive, errOut
}

func wantAll(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: no %q among %q", what, w, got)
		}
	}
}

// TestCompletionFromCluster: topic names and NAME/PARTITION for --topic,
// --scope and --start, and groups for --from-group, come from the cluster
// on the command line (or in the environment), read-only.
func TestCompletionFromCluster(t *testing.T) {
	p := newPipeline(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	var off kadm.Offsets
	off.AddOffset("orders", 0, 1, -1)
	if err := kadm.NewClient(cl).CommitAllOffsets(t.Context(), "notifier", off); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	p.mu.Lock()
	p.keys = map[int16]int{} // the commit above was the test's, not causalctl's
	p.mu.Unlock()
	b := []string{"--brokers", p.addr}

	got, dir, stderr := complete(t, nil, append(b, "replay", "-t", "")...)
	wantAll(t, "replay -t", got, "orders", "orders/0", "orders/1", "payments", "payments/0")
	if len(got) != 5 || dir != ":4" || stderr != "" {
		t.Errorf("replay -t: %q %s %q, want 5 candidates, no file completion, nothing on stderr", got, dir, stderr)
	}
	got, _, _ = complete(t, nil, append(b, "capture", "--topic", "orders,pay")...)
	wantAll(t, "a list element", got, "orders,payments", "orders,payments/0")
	got, _, _ = complete(t, map[string]string{"CAUSALCTL_BROKERS": p.addr}, "watch", "--scope", "")
	wantAll(t, "watch --scope with the brokers from the environment", got, "orders", "orders/1", "payments/0")
	got, dir, _ = complete(t, nil, append(b, "replay", "--start", "")...)
	if !slices.Equal(got, []string{"orders/0=", "orders/1=", "payments/0="}) || dir != ":6" {
		t.Errorf("--start: %q %s, want the channels with = and no space (:6)", got, dir)
	}
	got, _, _ = complete(t, nil, append(b, "replay", "--start", "orders/0=")...)
	if len(got) != 0 {
		t.Errorf("--start while typing the position: %q, want nothing", got)
	}
	got, _, _ = complete(t, nil, append(b, "watch", "--from-group", "")...)
	if !slices.Equal(got, []string{"notifier"}) {
		t.Errorf("--from-group: %q, want [notifier]", got)
	}
	got, _, _ = complete(t, nil, append(b, "topics", "payments", "")...)
	if !slices.Equal(got, []string{"orders"}) {
		t.Errorf("topics ARGS: %q, want the topics not given yet [orders]", got)
	}
	p.checkReadOnly(t)
}

// TestCompletionDeadCluster: a broker that accepts and never answers, or
// a closed port, completes nothing, prints nothing, and returns within the
// timeout (plus slack for a loaded machine) instead of the 5 s dial and 30 s
// request timeouts.
func TestCompletionDeadCluster(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	for _, addr := range []string{silent.Addr().String(), closedAddr} {
		for _, args := range [][]string{{"replay", "-t", ""}, {"watch", "--from-group", ""}, {"replay", "--start", ""}} {
			start := time.Now()
			code, out, errOut := runEnv(t, nil, append([]string{"__complete", "--brokers", addr}, args...)...)
			took := time.Since(start)
			if code != 0 || out != ":4\n" || errOut != "" {
				t.Errorf("%s %q: exit %d, stdout %q, stderr %q; want only the directive :4", addr, args, code, out, errOut)
			}
			if took > cmdutil.CompletionTimeout+3*time.Second {
				t.Errorf("%s %q: took %v, the completion timeout is %v", addr, args, took, cmdutil.CompletionTimeout)
			}
		}
	}
	// Without any brokers configured there is nothing to ask.
	if code, out, errOut := runEnv(t, nil, "__complete", "replay", "-t", ""); out != ":4\n" || errOut != "" || code != 0 {
		t.Errorf("no brokers: exit %d %q %q", code, out, errOut)
	}
}

// TestCompletionOfProfiles: --profile offers the profiles of the config
// file the command would read.
func TestCompletionOfProfiles(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "causalctl", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := "current_profile: prod\nprofiles:\n  prod:\n    brokers: [a:9092]\n  staging:\n    brokers: [b:9092]\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	got, dir2, _ := complete(t, map[string]string{"XDG_CONFIG_HOME": dir}, "topics", "--profile", "")
	if !slices.Equal(got, []string{"prod", "staging"}) || dir2 != ":4" {
		t.Errorf("--profile from the default path: %q %s", got, dir2)
	}
	got, _, _ = complete(t, nil, "replay", "--config", cfg, "--profile", "")
	if !slices.Equal(got, []string{"prod", "staging"}) {
		t.Errorf("--profile with --config: %q", got)
	}
	got, _, stderr := complete(t, nil, "replay", "--config", filepath.Join(dir, "missing.yaml"), "--profile", "")
	if len(got) != 0 || stderr != "" {
		t.Errorf("--profile, missing config: %q %q", got, stderr)
	}
}

// TestCompletionOfFixedValues: --output offers each command's own
// formats, and the enumerations offer exactly what their parsers accept.
func TestCompletionOfFixedValues(t *testing.T) {
	for cmd, want := range map[string][]string{
		"replay": {"text", "json", "ndjson"},
		"decode": {"text", "json"},
		"encode": {"hex", "base64", "raw"},
		"topics": {"text", "json"},
		"demo":   {"text", "json"},
	} {
		got, _, _ := complete(t, nil, cmd, "-o", "")
		if !slices.Equal(got, want) {
			t.Errorf("%s -o: %q, want %q", cmd, got, want)
		}
		// They are the formats the command accepts: a bad one is a usage
		// error naming the same list ("{}" is encode's argument).
		args := []string{cmd, "-o", "nope"}
		if cmd == "encode" {
			args = append(args, "{}")
		}
		_, _, stderr := runEnv(t, nil, args...)
		if !strings.Contains(stderr, strings.Join(want, ", ")) {
			t.Errorf("%s -o nope: %q does not name the formats %q", cmd, stderr, want)
		}
	}
	interleaves, _, _ := complete(t, nil, "replay", "--interleave", "")
	wantAll(t, "--interleave", interleaves, "file", "timestamp", "channel", "round-robin", "random")
	for _, v := range interleaves {
		if _, err := replay.ParseInterleave(v); err != nil {
			t.Errorf("--interleave offers %q: %v", v, err)
		}
	}
	faults, _, _ := complete(t, nil, "demo", "--fault", "")
	if len(faults) != len(demo.Faults)+1 {
		t.Errorf("--fault: %q, want none and every fault of %v", faults, demo.Faults)
	}
	for _, v := range faults {
		if _, err := demo.ParseFault(v); err != nil {
			t.Errorf("--fault offers %q: %v", v, err)
		}
	}
	for _, cmd := range []string{"decode", "encode"} {
		got, _, _ := complete(t, nil, cmd, "--header-format", "")
		if !slices.Equal(got, []string{"causes", "clock"}) {
			t.Errorf("%s --header-format: %q", cmd, got)
		}
	}
}

// TestCompletionEscapesHostileGroups: a group name with control bytes, a
// newline or a bidi override completes escaped, one candidate a line: it
// neither reaches the terminal raw nor forges a candidate.
func TestCompletionEscapesHostileGroups(t *testing.T) {
	c := kafkatest.Cluster(t, kfake.SeedTopics(1, "orders"))
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()[0]), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var off kadm.Offsets
	off.AddOffset("orders", 0, 0, -1)
	for _, g := range testutil.Hostile {
		if err := kadm.NewClient(cl).CommitAllOffsets(t.Context(), g, off); err != nil {
			t.Fatal(err)
		}
	}
	code, out, _ := runEnv(t, nil, "__complete", "--brokers", c.ListenAddrs()[0], "watch", "--from-group", "")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	testutil.NoRawHostile(t, "--from-group completion", out)
	if n := strings.Count(out, "\n"); n != len(testutil.Hostile)+1 {
		t.Errorf("%d lines, want one a group and the directive:\n%q", n, out)
	}
	if !strings.Contains(out, `EVIL\x1b[2J\x1b]0;pwned\a`) || !strings.Contains(out, `EVIL\u202egnp.exe`) {
		t.Errorf("the groups are not there, escaped:\n%q", out)
	}
}

// TestCompletionOfProcesses: --app completes the application ids of the
// cluster's Parsley processes (its ordering changelogs), on every command
// that has it, and state's --task the tasks of the process --app names.
func TestCompletionOfProcesses(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"),
		kfake.SeedTopics(3, "shop"+parsley.ChangelogSuffix), kfake.SeedTopics(1, "billing"+parsley.ChangelogSuffix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b := []string{"--brokers", c.ListenAddrs()[0]}
	ios, _, _, _ := iostreams.Test()
	tree := root.NewCmdRoot(cmdutiltest.Factory(ios, ""))
	var withApp [][]string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.LocalNonPersistentFlags().Lookup("app") != nil {
			withApp = append(withApp, strings.Fields(c.CommandPath())[1:])
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(tree)
	if len(withApp) < 4 {
		t.Fatalf("commands with --app: %q, want state, processes and the record commands", withApp)
	}
	for _, path := range withApp {
		args := append(append(slices.Clone(b), path...), "--app", "")
		got, dir, _ := complete(t, nil, args...)
		if !slices.Equal(got, []string{"billing", "shop"}) || dir != ":4" {
			t.Errorf("%s --app: %q %s, want [billing shop], no file completion", strings.Join(path, " "), got, dir)
		}
	}
	got, _, _ := complete(t, nil, append(b, "state", "--app", "shop", "--task", "")...)
	if !slices.Equal(got, []string{"0", "1", "2"}) {
		t.Errorf("state --app shop --task: %q, want its tasks [0 1 2]", got)
	}
	got, dir, _ := complete(t, nil, append(b, "state", "--task", "")...)
	if len(got) != 0 || dir != ":4" {
		t.Errorf("state --task without --app: %q %s, want nothing and no file completion", got, dir)
	}
}
