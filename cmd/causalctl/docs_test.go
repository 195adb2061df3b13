package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/cli/cmdutil"
	"github.com/causalctl/causalctl/internal/cli/root"
	"github.com/causalctl/causalctl/internal/iostreams"
	"github.com/spf13/cobra"
)

// The docs test runs every causalctl command line the documentation shows —
// README.md, docs/*.md and the Example of every command (the man pages'
// EXAMPLES) — through bash against one embedded demo, and checks that each
// exits as documented. DEVELOPERS.md ("The docs test") gives the rules.

// example is one command line of the documentation.
type example struct {
	sources []string // where it is written: "docs/holds.md:12", "causalctl holds (Example)"
	line    string   // as written, continuation lines joined
}

// skipRules are the lines that are not runnable here, each with why. Keep
// the list short: a doc line that can run as written should.
var skipRules = []struct {
	why   string
	match func(line string) bool
}{
	{"an elided or placeholder line", func(l string) bool {
		return strings.Contains(l, "…") || strings.Contains(l, "VERSION")
	}},
	{"another shell's syntax (zsh's $fpath, PowerShell)", func(l string) bool {
		return strings.Contains(l, "$fpath") || strings.Contains(l, "${fpath") || strings.Contains(l, "Invoke-Expression")
	}},
	{"--tui needs a terminal (the tmux and pty tests drive it)", func(l string) bool {
		return regexp.MustCompile(`(^|\s)--tui(\s|$)`).MatchString(l)
	}},
}

// isCommandLine: the line runs causalctl itself, after any environment
// assignments (`CAUSALCTL_BROKERS=… causalctl …`).
var isCommandLine = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_]*=(?:\$\([^)]*\)|\S*)\s+)*causalctl(?:\s|$)`)

// commandLines picks the causalctl lines out of text's lines (a fenced
// block's, or an Example's), joining continuations.
func commandLines(source string, firstLine int, lines []string) []example {
	var out []example
	for i := 0; i < len(lines); i++ {
		at := firstLine + i
		line := strings.TrimSpace(lines[i])
		line = strings.TrimPrefix(line, "$ ")
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		if isCommandLine.MatchString(line) {
			src := source
			if firstLine > 0 {
				src = fmt.Sprintf("%s:%d", source, at)
			}
			out = append(out, example{sources: []string{src}, line: line})
		}
	}
	return out
}

// markdownExamples: the causalctl lines of a Markdown file's sh (bash,
// shell, console) code blocks.
func markdownExamples(name, text string) []example {
	var out []example
	for _, b := range markdownBlocks(name, text) {
		switch b.lang() {
		case "sh", "bash", "shell", "console":
			out = append(out, commandLines(name, b.first, strings.Split(strings.TrimSuffix(b.text, "\n"), "\n"))...)
		}
	}
	return out
}

func docsTree() *cobra.Command {
	ios, _, _, _ := iostreams.Test()
	return root.NewCmdRoot(&cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }, Version: "test"})
}

// treeExamples: the causalctl lines of every visible command's Example,
// which are its man page's EXAMPLES and its --help.
func treeExamples(tree *cobra.Command) []example {
	var out []example
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		out = append(out, commandLines(c.CommandPath()+" (Example)", 0, strings.Split(c.Example, "\n"))...)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(tree)
	return out
}

// allExamples reads the checkout's docs and the tree; the same line written
// in several places is run once.
func allExamples(t *testing.T, tree *cobra.Command) []example {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../../README.md"}, files...)
	var all []example
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, markdownExamples(strings.TrimPrefix(f, "../../"), string(b))...)
	}
	all = append(all, treeExamples(tree)...)
	var out []example
	seen := map[string]int{}
	for _, ex := range all {
		if i, ok := seen[ex.line]; ok {
			out[i].sources = append(out[i].sources, ex.sources...)
			continue
		}
		seen[ex.line] = len(out)
		out = append(out, ex)
	}
	return out
}

// commandPath: the subcommand words of a causalctl line ("state",
// "completion"), found by walking the tree; flags and their values are
// passed over.
func commandPath(tree *cobra.Command, line string) []string {
	words := strings.Fields(line[strings.Index(line, "causalctl")+len("causalctl"):])
	var path []string
	c := tree
	for _, w := range words {
		if w == "|" || w == ">" || w == "<" || w == "#" || w == "&" {
			break
		}
		for _, sub := range c.Commands() {
			if sub.Name() == w || slices.Contains(sub.Aliases, w) {
				path = append(path, sub.Name())
				c = sub
				break
			}
		}
	}
	return path
}

// longRunning: commands that run until stopped — watch, demo, an exporter,
// anything listening on an address (--metrics-addr, --listen), a line put
// in the background.
func longRunning(path []string, line string) bool {
	for _, p := range path {
		if p == "watch" || p == "demo" || p == "exporter" {
			return true
		}
	}
	return listenFlag.MatchString(line) || strings.HasSuffix(strings.TrimSpace(stripComment(line)), "&")
}

// stripComment drops a trailing shell comment (" # …").
func stripComment(line string) string {
	if i := strings.Index(line, " # "); i >= 0 {
		return line[:i]
	}
	return line
}

// exitMarker: an example documented to fail ends its comment in
// "exit N" (`causalctl decode --hex zz   # not hex, a usage error: exit 2`).
var exitMarker = regexp.MustCompile(`#.*\bexit (\d+)\)?\s*$`)

// findingsCommands: the commands docs/exit-codes.md names in its row for
// exit 4 (they exit 4 when they find something).
func findingsCommands(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, row := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(row, "| 4 |") {
			for _, m := range regexp.MustCompile("`causalctl ([a-z-]+)`").FindAllStringSubmatch(row, -1) {
				out[m[1]] = true
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("docs/exit-codes.md names no command in its row for exit 4")
	}
	return out
}

// expectedCodes: what the example may exit with.
func expectedCodes(path []string, line string, findings map[string]bool) []int {
	if m := exitMarker.FindStringSubmatch(line); m != nil {
		n, _ := strconv.Atoi(m[1])
		return []int{n}
	}
	codes := []int{0}
	if len(path) > 0 && findings[path[0]] {
		codes = append(codes, 4)
	}
	if strings.Contains(line, "--fail-on-held") {
		codes = append(codes, 3)
	}
	return codes
}

var (
	// A flag naming an address to listen on: --listen, --metrics-addr,
	// any --…listen… or --…addr… flag.
	listenFlag = regexp.MustCompile(`(--[a-z-]*(?:listen|addr)[a-z-]*[ =])\S+`)
	brokerAddr = regexp.MustCompile(`[A-Za-z0-9_.-]+:909[0-9]\b`)
)

// defaultListeners are the commands that listen on an address without a
// flag saying so, and the flag that says where.
var defaultListeners = map[string]string{"exporter": "--metrics-addr", "demo": "--listen"}

// substitute points an example at the demo: every broker address
// (HOST:9092, kafka:9092, localhost:9092, …) becomes the demo's, and every
// address the example listens on (--listen, --metrics-addr) a free port.
func substitute(line, addr string) string {
	if !listenFlag.MatchString(line) {
		// A command that listens by default (the exporter on :9464, every
		// interface) listens on a free port of 127.0.0.1 in the test.
		for cmd, flag := range defaultListeners {
			line = strings.Replace(line, "causalctl "+cmd+" ", "causalctl "+cmd+" "+flag+" 127.0.0.1:0 ", 1)
		}
	}
	line = listenFlag.ReplaceAllString(line, "${1}127.0.0.1:0")
	line = brokerAddr.ReplaceAllString(line, addr)
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(stripComment(line)), "&"))
}

// fixtures is what every example finds in its directory and home.
type fixtures struct {
	capture []byte // a capture of the demo: every topic and the notifier's changelog
	addr    string
}

// prepare makes dir an example's working directory: the capture under
// every *.ndjson name the line reads, a scopes file for --scopes, and a
// home with a config file whose profiles (the current one, and "prod")
// point at the demo.
func (fx *fixtures) prepare(t *testing.T, dir string, path []string, line string) (home string) {
	t.Helper()
	home = filepath.Join(dir, "home")
	for _, d := range []string{".config/causalctl", ".config/fish/completions", ".cache"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf("current_profile: local\nprofiles:\n  local:\n    brokers: [%s]\n  prod:\n    brokers: [%s]\n", fx.addr, fx.addr)
	write := func(name string, b []byte) {
		if err := os.WriteFile(name, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".config/causalctl/config.yaml"), []byte(config))
	words := strings.Fields(line)
	for i, w := range words {
		// A web configuration (exporter-toolkit's format): basic auth for
		// one user, so the example serves as written.
		if w == "--web.config.file" && i+1 < len(words) {
			write(filepath.Join(dir, words[i+1]), []byte("basic_auth_users:\n  oncall: $2y$10$Yk2OlbHqKNgzcK0xbL2Mn.bScd9UMSjdfoIkd9mN/Zt5k4qyHLyDC\n"))
		}
		if w == "--scopes" && i+1 < len(words) {
			write(filepath.Join(dir, words[i+1]), []byte("notifier: orders,payments,shipments\nshipper: orders,shipments\n"))
		}
		// A Parsley export the line replays: the public one testdata keeps
		// under that name.
		if name := strings.Trim(w, `"'`); strings.HasSuffix(name, ".edn") && !filepath.IsAbs(name) {
			b, err := os.ReadFile(filepath.Join("../../testdata/parsley-exports", filepath.Base(name)))
			if err != nil {
				t.Fatalf("an example replays %s, which testdata/parsley-exports does not hold: %v", name, err)
			}
			write(filepath.Join(dir, name), b)
		}
		// capture writes its -f file rather than reading it.
		if name := strings.Trim(w, `"'`); strings.HasSuffix(name, ".ndjson") && !filepath.IsAbs(name) &&
			!(len(path) > 0 && path[0] == "capture") {
			write(filepath.Join(dir, name), fx.capture)
		}
	}
	return home
}

// result is how one example ended.
type result struct {
	codes  []int // causalctl's exit code, then the pipeline's other stages'
	output string
	err    string // what went wrong running it, if anything
}

// lineWriter collects output and signals the first complete line.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first chan string // receives the first line causalctl wrote, once
	sent  bool
	seen  int // bytes of buf looked at for it
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	// bash's own complaints (a tool of the line missing) are not the
	// command speaking.
	for !w.sent {
		line, _, ok := strings.Cut(w.buf.String()[w.seen:], "\n")
		if !ok {
			break
		}
		w.seen += len(line) + 1
		if !strings.HasPrefix(line, "bash: ") {
			w.sent = true
			w.first <- line
		}
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// runExample runs line through bash in dir. A long-running one is stopped
// with SIGINT after its first line of output (or after quiet, if it says
// nothing); bash and the other stages of its pipeline ignore the SIGINT, so
// only causalctl acts on it and the pipeline drains.
func runExample(dir, home, binDir, line string, long bool, quiet time.Duration) result {
	status := filepath.Join(dir, ".status")
	script := line + "\n" + `echo "${PIPESTATUS[*]}" >"$DOCSTEST_STATUS"` + "\n"
	if long {
		script = "trap '' INT\n" + script
	}
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "CAUSALCTL_") && !strings.HasPrefix(e, "HOME=") && !strings.HasPrefix(e, "XDG_") && !strings.HasPrefix(e, "PATH=") {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, "HOME="+home, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "DOCSTEST_STATUS="+status, "NO_COLOR=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	first := make(chan string, 2)
	out := &lineWriter{first: first}
	errOut := &lineWriter{first: first}
	cmd.Stdout, cmd.Stderr = out, errOut
	combined := func() string { return out.String() + errOut.String() }
	if err := cmd.Start(); err != nil {
		return result{err: err.Error()}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// wait gives the line within to end, then kills it.
	wait := func(within time.Duration, what string) result {
		select {
		case <-done:
			return finish(status, combined(), "")
		case <-time.After(within):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			return result{output: combined(), err: fmt.Sprintf("%s after %v", what, within)}
		}
	}
	const bound = 30 * time.Second
	if !long {
		return wait(bound, "still running")
	}
	select {
	case <-done:
		return finish(status, combined(), "it ended by itself instead of running until stopped")
	case l := <-first:
		if strings.HasPrefix(l, "causalctl: ") { // an error: let it end
			return wait(bound, "it printed an error and did not end")
		}
	case <-time.After(quiet):
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	// A second Ctrl-C ends any command at once (cli.InterruptGrace); it
	// is sent only if the first came before causalctl listened.
	select {
	case <-done:
		return finish(status, combined(), "")
	case <-time.After(10 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	}
	return wait(bound, "still running after Ctrl-C")
}

// finish reads the pipeline's exit codes the script wrote.
func finish(status, output, note string) result {
	b, err := os.ReadFile(status)
	if err != nil {
		return result{output: output, err: "bash ended before the line did (no exit status): " + err.Error()}
	}
	var codes []int
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(f)
		codes = append(codes, n)
	}
	if len(codes) == 0 {
		return result{output: output, err: "no exit status"}
	}
	return result{codes: codes, output: output, err: note}
}

// startDocsDemo runs the demo the examples are pointed at and returns its
// address once its fault is injected (so holds exist to be found).
func startDocsDemo(t *testing.T) string {
	t.Helper()
	return startDemoUntil(t, "fault injected", "--fault", "dangling", "--listen", "127.0.0.1:0")
}

// needBash: CI has bash; elsewhere the test is skipped without it.
func needBash(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		needTool(t, "bash")
	}
}

// pipelineTools: the programs of a line's pipeline stages after the first.
func pipelineTools(line string) []string {
	var tools []string
	for _, stage := range pipelineStages(stripComment(line))[1:] {
		if f := strings.Fields(stage); len(f) > 0 {
			tools = append(tools, f[0])
		}
	}
	return tools
}

// pipelineStages splits a shell line at its pipes, leaving alone a | inside
// quotes (a jq program's).
func pipelineStages(line string) []string {
	var stages []string
	var quote rune
	start := 0
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '|' && (i+1 >= len(line) || line[i+1] != '|') && (i == 0 || line[i-1] != '|'):
			stages = append(stages, line[start:i])
			start = i + 1
		}
	}
	return append(stages, line[start:])
}

// TestDocsExamplesRun: every causalctl line of README.md, docs/*.md and the
// commands' Examples runs as written against the demo and exits as
// documented.
func TestDocsExamplesRun(t *testing.T) {
	needBash(t)
	tree := docsTree()
	examples := allExamples(t, tree)
	if len(examples) < 30 {
		t.Fatalf("found only %d examples: is the extraction broken?", len(examples))
	}
	findings := findingsCommands(t)
	addr := startDocsDemo(t)
	binDir := filepath.Dir(binary)

	capDir := t.TempDir()
	capFile := filepath.Join(capDir, "demo.ndjson")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, binary, "capture", "--brokers", addr, "-t", "orders", "-t", "payments", "-t", "shipments",
		"-t", "notifier-__parsley.ordering-changelog", "-f", capFile).CombinedOutput(); err != nil {
		t.Fatalf("capturing the demo: %v: %s", err, out)
	}
	capture, err := os.ReadFile(capFile)
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixtures{capture: capture, addr: addr}

	type job struct {
		ex    example
		path  []string
		run   string
		long  bool
		codes []int
		skip  string
		res   result
	}
	jobs := make([]*job, len(examples))
	for i, ex := range examples {
		j := &job{ex: ex, path: commandPath(tree, ex.line), run: substitute(ex.line, addr)}
		j.long = longRunning(j.path, ex.line)
		j.codes = expectedCodes(j.path, ex.line, findings)
		for _, r := range skipRules {
			if r.match(ex.line) {
				j.skip = r.why
				break
			}
		}
		for _, tool := range pipelineTools(ex.line) {
			if _, err := exec.LookPath(tool); err != nil && j.skip == "" {
				if os.Getenv("CI") != "" {
					t.Errorf("%s: %s is not installed: .ci/run must install it", ex.sources[0], tool)
				}
				j.skip = tool + " is not installed"
			}
		}
		jobs[i] = j
	}

	// Run them a few at a time: most wait on the demo, not a core.
	// Every directory is prepared before anything runs, so that a failing
	// preparation leaves no example running.
	dirs := make([][2]string, len(jobs))
	for i, j := range jobs {
		if j.skip == "" {
			dirs[i][0] = t.TempDir()
			dirs[i][1] = fx.prepare(t, dirs[i][0], j.path, j.ex.line)
		}
	}
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, j := range jobs {
		if j.skip != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			j.res = runExample(dirs[i][0], dirs[i][1], binDir, j.run, j.long, 3*time.Second)
		}()
	}
	wg.Wait()

	for _, j := range jobs {
		t.Run(strings.TrimSpace(stripComment(j.ex.line)), func(t *testing.T) {
			where := strings.Join(j.ex.sources, ", ")
			if j.skip != "" {
				t.Skipf("%s: %s", where, j.skip)
			}
			r := j.res
			fail := func(format string, args ...any) {
				t.Errorf("%s\n  %s\n  ran: %s\n  %s\n  output:\n%s", where, j.ex.line, j.run, fmt.Sprintf(format, args...), indent(r.output))
			}
			if r.err != "" && len(r.codes) == 0 {
				fail("%s", r.err)
				return
			}
			code := r.codes[0]
			first, _, _ := strings.Cut(r.output, "\n")
			t.Logf("%s: exit %v; output begins %q", where, r.codes, first)
			want := j.codes
			if j.long {
				// Stopped with Ctrl-C: 130 (or 0 if it was done anyway).
				want = append(slices.Clone(want), 130)
			}
			if !slices.Contains(want, code) {
				fail("exit %d, want %v%s", code, want, note(r.err))
				return
			}
			if j.long && r.err != "" && code != 0 {
				fail("%s (exit %d)", r.err, code)
			}
			for i, c := range r.codes[1:] {
				if c != 0 {
					fail("pipeline stage %d (%s) exited %d", i+2, pipelineTools(j.ex.line)[i], c)
				}
			}
		})
	}
}

func note(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > 3000 {
		s = s[:3000] + "\n…"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// TestDocsExtraction: what the docs test takes from a page and how it
// judges a line — the rules DEVELOPERS.md states.
func TestDocsExtraction(t *testing.T) {
	page := "text `causalctl not-in-a-block`\n" +
		"```sh\n" +
		"$ causalctl topics --brokers HOST:9092\n" +
		"causalctl watch -t orders \\\n    --no-tui --metrics-addr :9464   # a sidecar\n" +
		"CAUSALCTL_BROKERS=kafka:9092 causalctl replay -t orders --offsets -10\n" +
		"P=$(pass a/b) causalctl holds -t orders\n" +
		"curl -s localhost:9464/metrics | grep '^causalctl_'\n" +
		"go run ./cmd/causalctl demo\n" +
		"```\n" +
		"```yaml\ncausalctl: not a command\n```\n" +
		"```\ncausalctl decode --hex 00   # an unmarked block is output, not a command\n```\n"
	var got []string
	for _, ex := range markdownExamples("p.md", page) {
		got = append(got, ex.sources[0]+" "+ex.line)
	}
	want := []string{
		"p.md:3 causalctl topics --brokers HOST:9092",
		"p.md:4 causalctl watch -t orders  --no-tui --metrics-addr :9464   # a sidecar",
		"p.md:6 CAUSALCTL_BROKERS=kafka:9092 causalctl replay -t orders --offsets -10",
		"p.md:7 P=$(pass a/b) causalctl holds -t orders",
	}
	if !slices.Equal(got, want) {
		t.Errorf("extracted\n%q\nwant\n%q", got, want)
	}

	tree := docsTree()
	findings := map[string]bool{"holds": true}
	for _, c := range []struct {
		line  string
		run   string
		long  bool
		codes []int
	}{
		{"causalctl --profile prod holds -t orders   # cron", "causalctl --profile prod holds -t orders", false, []int{0, 4}},
		{"causalctl replay -f c.ndjson --fail-on-held", "causalctl replay -f c.ndjson --fail-on-held", false, []int{0, 3}},
		{"causalctl decode --hex zz   # not hex, a usage error: exit 2", "causalctl decode --hex zz", false, []int{2}},
		{"causalctl topics --brokers a:9092,kafka-1.example.com:9093", "causalctl topics --brokers 127.0.0.1:1,127.0.0.1:1", false, []int{0}},
		{"causalctl demo --listen 127.0.0.1:9092 &", "causalctl demo --listen 127.0.0.1:0", true, []int{0}},
		{"causalctl replay -f c.ndjson --metrics-addr=:9464", "causalctl replay -f c.ndjson --metrics-addr=127.0.0.1:0", true, []int{0}},
		{"causalctl watch -t orders | tee w.log", "causalctl watch -t orders | tee w.log", true, []int{0}},
		{"causalctl somecmd --listen-addr=0.0.0.0:9465", "causalctl somecmd --listen-addr=127.0.0.1:0", true, []int{0}},
		{"causalctl exporter --brokers kafka:9092 --web.config.file web.yml", "causalctl exporter --metrics-addr 127.0.0.1:0 --brokers 127.0.0.1:1 --web.config.file web.yml", true, []int{0}},
	} {
		path := commandPath(tree, c.line)
		if run := substitute(c.line, "127.0.0.1:1"); run != c.run {
			t.Errorf("%s: runs as %q, want %q", c.line, run, c.run)
		}
		if long := longRunning(path, c.line); long != c.long {
			t.Errorf("%s: long-running %v, want %v", c.line, long, c.long)
		}
		if codes := expectedCodes(path, c.line, findings); !slices.Equal(codes, c.codes) {
			t.Errorf("%s: may exit %v, want %v", c.line, codes, c.codes)
		}
	}
	if got := pipelineTools("causalctl version -o json | jq -r .version | tee v   # x | y"); !slices.Equal(got, []string{"jq", "tee"}) {
		t.Errorf("pipeline tools %q", got)
	}
	if got := pipelineTools(`causalctl ps -o json | jq '.p[] | select(.h > 0)' | grep "a|b" || true`); !slices.Equal(got, []string{"jq", "grep"}) {
		t.Errorf("a | inside quotes split a stage: %q", got)
	}
}
