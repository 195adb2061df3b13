package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/engine"
	"github.com/causalctl/causalctl/internal/input"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/kafka/kafkatest"
	"github.com/causalctl/causalctl/internal/live"
	"github.com/causalctl/causalctl/internal/testutil"
	"github.com/causalctl/causalctl/internal/view"
	"github.com/twmb/franz-go/pkg/kfake"
)

// The agreement property: for random Parsley worlds (world_test.go), every
// way into a process — state --app, holds --app, holds --from-group,
// processes --app, the exporter's series (its collector scraped) and
// watch --app's snapshot (the live view model) — says the same of every
// task and of the process: the records held, the held heads and the cause
// of each, the roots, the oldest written age, the task failed closed and
// the next start.
//
// Each way's account is a set of facts, named the same by every way
// ("task 3 heads" = "a.b/3@0 beyond-log-end, …"); a way states the facts
// it knows, the process's totals are derived from the tasks' where a way
// knows every task, and two ways disagree when they state one fact
// differently. A fact only one way states is compared with nothing, so
// every fact is stated by state --app, the reference, or by two ways.
//
// AGREEMENT_SEEDS=N runs N seeds (default 200; 40 with -short or -race),
// AGREEMENT_SEED=S only seed S: the failing seed is printed.

// facts are what one way says of a process: fact name → value.
type facts map[string]string

// taskFact names a task's fact.
func taskFact(task int32, what string) string { return fmt.Sprintf("task %d %s", task, what) }

// The facts a task has, and those of the process.
const (
	factRecords   = "held records"
	factHeads     = "held heads"     // CHANNEL@OFFSET cause, sorted
	factCauses    = "heads by cause" // cause:N, sorted
	factRoots     = "roots"          // CHANNEL@OFFSET cause, sorted
	factOldest    = "oldest held head written ms ago"
	factOldestRec = "oldest held record written ms ago"
	factFailed    = "failed closed" // CHANNEL@OFFSET, "" none
	factRefusals  = "next start refusals"
	// factBehind says whether the task's changelog partition was read
	// behind an open transaction.
	factBehind = "behind a transaction"
	// factFailedTasks lists the tasks failed closed, "1,3".
	factFailedTasks = "tasks failed closed"
	// factHeadObjects are the held heads' JSON objects, whole (but for
	// the task field holds adds), sorted: the one head shape
	// (report.schema.json) state and holds write alike.
	factHeadObjects = "held head objects"
)

// headObject is a head's JSON object as compared by factHeadObjects: keys
// sorted, the task field left out.
func headObject(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("head %s: %v", raw, err)
	}
	delete(m, "task")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// causesOf counts heads ("CH@OFF cause") by cause, as "cause:N,…".
func causesOf(heads []string) string {
	n := map[string]int{}
	for _, h := range heads {
		n[h[strings.LastIndexByte(h, ' ')+1:]]++
	}
	return causeCount(n)
}

func causeCount(n map[string]int) string {
	var out []string
	for _, c := range slices.Sorted(maps.Keys(n)) {
		if n[c] > 0 {
			out = append(out, fmt.Sprintf("%s:%d", c, n[c]))
		}
	}
	return strings.Join(out, ",")
}

func sortedJoin(s []string) string {
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// ageFact is an age in ms, "" when none is known.
func ageFact(ms int64, known bool) string {
	if !known {
		return "none"
	}
	return strconv.FormatInt(ms, 10)
}

// oldestOf is the largest of ages, "none" without one.
func oldestOf(ages []int64) string {
	if len(ages) == 0 {
		return "none"
	}
	return strconv.FormatInt(slices.Max(ages), 10)
}

// derive adds the process's totals to f from its tasks' facts (of tasks
// tasks), where f states the fact for every task.
func (f facts) derive(tasks int32) {
	every := func(what string) ([]string, bool) {
		var vs []string
		for task := range tasks {
			v, ok := f[taskFact(task, what)]
			if !ok {
				return nil, false
			}
			vs = append(vs, v)
		}
		return vs, true
	}
	if vs, ok := every(factRecords); ok {
		sum := 0
		for _, v := range vs {
			n, _ := strconv.Atoi(v)
			sum += n
		}
		f[factRecords] = strconv.Itoa(sum)
	}
	if vs, ok := every(factCauses); ok {
		n := map[string]int{}
		for _, v := range vs {
			for part := range strings.SplitSeq(v, ",") {
				if c, k, ok := strings.Cut(part, ":"); ok {
					m, _ := strconv.Atoi(k)
					n[c] += m
				}
			}
		}
		f[factCauses] = causeCount(n)
	}
	for _, what := range []string{factOldest, factOldestRec} {
		if vs, ok := every(what); ok {
			var ages []int64
			for _, v := range vs {
				if a, err := strconv.ParseInt(v, 10, 64); err == nil {
					ages = append(ages, a)
				}
			}
			f[what] = oldestOf(ages)
		}
	}
	if vs, ok := every(factFailed); ok {
		var failed []string
		for task, v := range vs {
			if v != "" {
				failed = append(failed, fmt.Sprintf("%d:%s", task, v))
			}
		}
		f[factFailed] = strings.Join(failed, ", ")
		var tasks []string
		for task, v := range vs {
			if v != "" {
				tasks = append(tasks, strconv.Itoa(task))
			}
		}
		f[factFailedTasks] = strings.Join(tasks, ",")
	}
}

// disagreements compares every way's facts with every other's: one line
// per fact two ways state differently, and one per fact no two ways
// state (compared with nothing). ways lists the ways in the order they
// are compared.
func disagreements(ways []string, accounts map[string]facts) []string {
	var out []string
	names := map[string]bool{}
	for _, w := range ways {
		for k := range accounts[w] {
			names[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		var first string
		said := 0
		for _, w := range ways {
			v, ok := accounts[w][k]
			if !ok {
				continue
			}
			said++
			if said == 1 {
				first = w
				continue
			}
			if want := accounts[first][k]; v != want {
				out = append(out, fmt.Sprintf("%s: %s says %q, %s says %q", k, w, v, first, want))
			}
		}
		// A task's oldest record is told by the exporter alone; the
		// process's, derived from it, is compared with processes'.
		if said == 1 && !(strings.HasPrefix(k, "task ") && strings.HasSuffix(k, factOldestRec)) {
			out = append(out, fmt.Sprintf("%s: only %s states it", k, first))
		}
	}
	return out
}

// agreementWays are the ways into a process, in the order compared.
var agreementWays = []string{"state --app", "holds --app", "holds --from-group", "processes --app", "exporter", "watch --app"}

// mutation changes one way's raw report before it is read: a broken
// summariser or classifier in that way (TestAgreementCatchesABrokenWay).
type mutation struct {
	way    string
	name   string
	mutate func(raw []byte) []byte
}

// worldTxnWait is how long every way waits for an open transaction in a
// world's changelog (--txn-wait): none ends.
const worldTxnWait = 100 * time.Millisecond

// worldsPerCluster is how many worlds share one kfake cluster, each under
// topic names of its own: every command lists the cluster's topics, so on
// one cluster of hundreds of worlds each read would be slower than the
// last.
const worldsPerCluster = 20

// agreementSeeds is how many seeds the property runs.
func agreementSeeds(t *testing.T) (first, n uint64) {
	if s := os.Getenv("AGREEMENT_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("AGREEMENT_SEED: %v", err)
		}
		return seed, 1
	}
	n = 200
	if testing.Short() || raceDetector {
		n = 40
	}
	if s := os.Getenv("AGREEMENT_SEEDS"); s != "" {
		var err error
		if n, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("AGREEMENT_SEEDS: %v", err)
		}
	}
	return 1, n
}

// TestAgreementProperty: for hundreds of random Parsley worlds on one
// kfake cluster, every way into the process tells the same story of
// every task (see the file's comment). The worlds cover every shape they
// can take; the failing seed is printed.
func TestAgreementProperty(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC) // the controlled clock: every way's ages run to it
	first, n := agreementSeeds(t)
	shapes := map[string]int{}
	held := 0
	schemas := loadSchemas(t)
	var (
		c    *kfake.Cluster
		ww   *worldWriter
		addr string
	)
	closeCluster := func() {
		if ww != nil {
			ww.close()
			c.Close()
		}
	}
	defer closeCluster()
	for seed := first; seed < first+n; seed++ {
		if (seed-first)%worldsPerCluster == 0 {
			closeCluster()
			var err error
			if c, err = kfake.NewCluster(kfake.NumBrokers(1)); err != nil {
				t.Fatal(err)
			}
			addr = c.ListenAddrs()[0]
			ww = newWorldWriter(t, addr, "w", now)
		}
		wd := ww.write(seed)
		for shape, k := range wd.Shapes {
			shapes[shape] += k
		}
		var check *testutil.Schemas
		if seed%8 == 0 {
			check = schemas // every eighth world's JSON against the schemas: they cost
		}
		accounts := accountsOf(t, addr, wd, now, nil, check)
		if r := accounts["state --app"][factRecords]; r != "0" {
			held++
		}
		if d := disagreements(agreementWays, accounts); len(d) > 0 {
			t.Errorf("%s: the ways disagree (AGREEMENT_SEED=%d reproduces it):\n  %s", wd, seed, strings.Join(d, "\n  "))
			if testing.Verbose() {
				for _, w := range agreementWays {
					t.Logf("%s: %v", w, accounts[w])
				}
			}
		}
		if t.Failed() {
			return
		}
	}
	// The worlds are not all empty: the property compared holds of every
	// shape (a run of one seed excepted).
	if n >= 40 {
		for _, s := range []string{"dangling", "catching-up", "ready", "behind-ready", "chain", "cycle", "undecodable", "open-txn", "open-txn-claim", "marker", "marker-claim", "corrupt", "nothing-held", "changelog-open-txn"} {
			if shapes[s] == 0 {
				t.Errorf("no world had %s", s)
			}
		}
		if held < int(n)/2 {
			t.Errorf("only %d of %d worlds held records", held, n)
		}
	}
}

// TestAgreementCatchesABrokenWay: the checker of the property reports a
// way whose summariser or classifier is broken — one way's report
// mutated as a broken one would write it: a head's cause, a count of
// held records, a root dropped, an age, the next start.
func TestAgreementCatchesABrokenWay(t *testing.T) {
	c := kafkatest.Cluster(t)
	addr := c.ListenAddrs()[0]
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	ww := newWorldWriter(t, addr, "b", now)
	defer ww.close()
	// A world holding heads of more than one cause, with roots and ages.
	var wd *world
	for seed := uint64(1); wd == nil && seed < 200; seed++ {
		w := ww.write(seed)
		if w.Shapes["dangling"] > 0 && w.Shapes["chain"] > 0 && w.Shapes["undecodable"] > 0 && w.Shapes["corrupt"] > 0 {
			wd = w
		}
	}
	if wd == nil {
		t.Fatal("no world with dangling, chained, undecodable and corrupt records")
	}
	if d := disagreements(agreementWays, accountsOf(t, addr, wd, now, nil, nil)); len(d) > 0 {
		t.Fatalf("%s: the ways disagree unbroken:\n  %s", wd, strings.Join(d, "\n  "))
	}
	replaceOnce := func(old, new string) func([]byte) []byte {
		return func(b []byte) []byte { return []byte(strings.Replace(string(b), old, new, 1)) }
	}
	for _, m := range []mutation{
		{"holds --app", "a head's cause", replaceOnce(`"cause":"beyond-log-end"`, `"cause":"not-received"`)},
		{"state --app", "the held records", func(b []byte) []byte {
			return jsonEdit(b, func(v map[string]any) { task(v, 0)["held"] = task(v, 0)["held"].(float64) + 1 })
		}},
		{"holds --from-group", "a root", func(b []byte) []byte {
			return jsonEdit(b, func(v map[string]any) { v["roots"] = v["roots"].([]any)[1:] })
		}},
		{"processes --app", "the oldest record's age", func(b []byte) []byte {
			return jsonEdit(b, func(v map[string]any) {
				p := v["processes"].([]any)[0].(map[string]any)
				p["oldest_written_ms_ago"] = p["oldest_written_ms_ago"].(float64) + 1000
			})
		}},
		{"processes --app", "the next start", replaceOnce(`"reason":"UNDECODABLE_METADATA"`, `"reason":"ORDERING_STATE_LOST"`)},
		{"exporter", "a head's cause", replaceOnce(`cause="beyond-log-end"`, `cause="held"`)},
		{"watch --app", "a root", replaceOnce(`root=`, `root=x`)},
		{"holds --app", "a head's size", replaceOnce(`"value_size":`, `"value_size":1`)},
		{"state --app", "a blocker's log facts", replaceOnce(`"log":{"log_start":`, `"log":{"log_start":1`)},
		{"state --app", "a failed closed task", replaceOnce(`"failed_closed":{"channel":"`, `"failed_closed":{"channel":"x`)},
	} {
		t.Run(m.way+" "+m.name, func(t *testing.T) {
			d := disagreements(agreementWays, accountsOf(t, addr, wd, now, &m, nil))
			if len(d) == 0 {
				t.Errorf("%s broken in %s: the checker found no disagreement", m.way, m.name)
			}
			t.Logf("caught: %s", strings.Join(d, "; "))
		})
	}
}

// jsonEdit decodes b, edits it and encodes it again.
func jsonEdit(b []byte, edit func(map[string]any)) []byte {
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		panic(err)
	}
	edit(v)
	out, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return out
}

// task is state's JSON of the first task holding records, as a map.
func task(v map[string]any, _ int) map[string]any {
	for _, t := range v["tasks"].([]any) {
		if t.(map[string]any)["held"].(float64) > 0 {
			return t.(map[string]any)
		}
	}
	return v["tasks"].([]any)[0].(map[string]any)
}

// accountsOf reads wd through every way; broken, when set, mutates one
// way's report. The JSON of the commands that have a schema is checked
// against it when schemas is set.
func accountsOf(t *testing.T, addr string, wd *world, now time.Time, broken *mutation, schemas *testutil.Schemas) map[string]facts {
	t.Helper()
	raw := func(way string, b []byte) []byte {
		if broken != nil && broken.way == way {
			return broken.mutate(b)
		}
		return b
	}
	run := func(way string, args ...string) []byte {
		// A changelog behind an open transaction is read as far as it
		// stands at once: no world's transaction ends.
		code, out, stderr := runAt(t, addr, now, append(args, "-o", "json", "--txn-wait", worldTxnWait.String())...)
		if out == "" {
			t.Fatalf("%s: %v: exit %d, nothing on stdout: %s", wd, args, code, stderr)
		}
		if schema := args[0] + ".schema.json"; schemas != nil && schemas.Has(schema) {
			for _, e := range schemas.Validate(schema, out) {
				t.Errorf("%s: %v against %s: %s", wd, args, schema, e)
			}
		}
		return raw(way, []byte(out))
	}
	out := map[string]facts{
		"state --app":        stateFacts(t, wd, run("state --app", "state", "--app", wd.App)),
		"holds --app":        holdsFacts(t, wd, run("holds --app", "holds", "--app", wd.App)),
		"holds --from-group": holdsFacts(t, wd, run("holds --from-group", "holds", "-t", strings.Join(wd.Topics, ","), "--from-group", wd.App)),
		"processes --app":    processesFacts(t, wd, run("processes --app", "processes", "--app", wd.App)),
		"exporter":           exporterFacts(t, wd, addr, now, func(b []byte) []byte { return raw("exporter", b) }),
		"watch --app":        watchFacts(t, wd, addr, now, func(b []byte) []byte { return raw("watch --app", b) }),
	}
	for _, f := range out {
		f.derive(wd.Tasks)
	}
	return out
}

func stateFacts(t *testing.T, wd *world, raw []byte) facts {
	t.Helper()
	var rep struct {
		HeldRecords int `json:"held_records"`
		Tasks       []struct {
			Task     int32
			Held     int
			Behind   *int64 `json:"behind_transaction_from"`
			Channels []struct {
				Channel     string
				Head        json.RawMessage
				BehindReady json.RawMessage `json:"behind_ready"`
			}
			Roots        []jsonRoot
			FailedClosed *jsonAt `json:"failed_closed"`
		}
		NextStart jsonNextStart `json:"next_start"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("%s: state: %v: %s", wd, err, raw)
	}
	f := facts{}
	for _, task := range rep.Tasks {
		var heads, roots, objects []string
		var ages []int64
		for _, c := range task.Channels {
			for _, raw := range []json.RawMessage{c.Head, c.BehindReady} {
				var h *stateHead
				if len(raw) > 0 {
					if err := json.Unmarshal(raw, &h); err != nil {
						t.Fatalf("%s: state head %s: %v", wd, raw, err)
					}
				}
				if h != nil && h.Cause != "ready" {
					heads = append(heads, fmt.Sprintf("%s@%d %s", c.Channel, h.Offset, h.Cause))
					objects = append(objects, headObject(t, raw))
					if h.Written != nil {
						ages = append(ages, *h.Written)
					}
				}
			}
		}
		f[taskFact(task.Task, factHeadObjects)] = sortedJoin(objects)
		for _, r := range task.Roots {
			roots = append(roots, fmt.Sprintf("%s@%d %s", r.Channel, r.Offset, r.Cause))
		}
		f[taskFact(task.Task, factRecords)] = strconv.Itoa(task.Held)
		f[taskFact(task.Task, factHeads)] = sortedJoin(heads)
		f[taskFact(task.Task, factCauses)] = causesOf(heads)
		f[taskFact(task.Task, factRoots)] = sortedJoin(roots)
		f[taskFact(task.Task, factOldest)] = oldestOf(ages)
		f[taskFact(task.Task, factFailed)] = ""
		if fc := task.FailedClosed; fc != nil {
			f[taskFact(task.Task, factFailed)] = fmt.Sprintf("%s@%d", fc.Channel, fc.Offset)
		}
		f[taskFact(task.Task, factBehind)] = strconv.FormatBool(task.Behind != nil)
	}
	f[factRefusals] = refusalsOf(rep.NextStart.Refusals)
	return f
}

// stateHead is a head of state's JSON.
type stateHead struct {
	Offset  int64
	Cause   string
	Written *int64 `json:"written_ms_ago"`
}

func refusalsOf(rs []struct{ Reason string }) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Reason)
	}
	return sortedJoin(out)
}

func holdsFacts(t *testing.T, wd *world, raw []byte) facts {
	t.Helper()
	var rep struct {
		Roots []struct {
			Channel string
			Offset  int64
			Cause   string
			Task    int32
		}
		Heads []json.RawMessage
		Tasks []struct {
			Task         int32
			HeldHeads    int     `json:"held_heads"`
			HeldRecords  int     `json:"held_records"`
			FailedClosed *jsonAt `json:"failed_closed"`
		}
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("%s: holds: %v: %s", wd, err, raw)
	}
	f := facts{}
	heads := map[int32][]string{}
	roots := map[int32][]string{}
	ages := map[int32][]int64{}
	objects := map[int32][]string{}
	for _, raw := range rep.Heads {
		var h struct {
			Channel string
			Offset  int64
			Cause   string
			Age     *int64 `json:"written_ms_ago"`
			Task    int32
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatalf("%s: holds head %s: %v", wd, raw, err)
		}
		objects[h.Task] = append(objects[h.Task], headObject(t, raw))
		heads[h.Task] = append(heads[h.Task], fmt.Sprintf("%s@%d %s", h.Channel, h.Offset, h.Cause))
		if h.Age != nil {
			ages[h.Task] = append(ages[h.Task], *h.Age)
		}
	}
	for _, r := range rep.Roots {
		roots[r.Task] = append(roots[r.Task], fmt.Sprintf("%s@%d %s", r.Channel, r.Offset, r.Cause))
	}
	for _, task := range rep.Tasks {
		f[taskFact(task.Task, factRecords)] = strconv.Itoa(task.HeldRecords)
		f[taskFact(task.Task, factHeads)] = sortedJoin(heads[task.Task])
		f[taskFact(task.Task, factHeadObjects)] = sortedJoin(objects[task.Task])
		f[taskFact(task.Task, factCauses)] = causesOf(heads[task.Task])
		f[taskFact(task.Task, factRoots)] = sortedJoin(roots[task.Task])
		f[taskFact(task.Task, factOldest)] = oldestOf(ages[task.Task])
		f[taskFact(task.Task, factFailed)] = ""
		if fc := task.FailedClosed; fc != nil {
			f[taskFact(task.Task, factFailed)] = fmt.Sprintf("%s@%d", fc.Channel, fc.Offset)
		}
		if n := len(heads[task.Task]); n != task.HeldHeads {
			f[taskFact(task.Task, "held heads counted")] = fmt.Sprintf("%d heads listed, %d counted", n, task.HeldHeads)
		}
	}
	return f
}

func processesFacts(t *testing.T, wd *world, raw []byte) facts {
	t.Helper()
	var rep struct {
		Processes []struct {
			HeldRecords  int            `json:"held_records"`
			Causes       map[string]int `json:"causes"`
			Oldest       *int64         `json:"oldest_written_ms_ago"`
			Undated      int            `json:"undated_holds"`
			FailedClosed []struct {
				Task    int32
				Channel string
				Offset  int64
			} `json:"failed_closed"`
			NextStart jsonNextStart `json:"next_start"`
		}
	}
	if err := json.Unmarshal(raw, &rep); err != nil || len(rep.Processes) != 1 {
		t.Fatalf("%s: processes: %v: %s", wd, err, raw)
	}
	p := rep.Processes[0]
	f := facts{factRecords: strconv.Itoa(p.HeldRecords), factCauses: causeCount(p.Causes), factRefusals: refusalsOf(p.NextStart.Refusals)}
	f[factOldestRec] = "none"
	if p.Oldest != nil {
		f[factOldestRec] = strconv.FormatInt(*p.Oldest, 10)
	}
	var failed, tasks []string
	for _, fc := range p.FailedClosed {
		failed = append(failed, fmt.Sprintf("%d:%s@%d", fc.Task, fc.Channel, fc.Offset))
		tasks = append(tasks, strconv.Itoa(int(fc.Task)))
	}
	f[factFailed] = strings.Join(failed, ", ")
	f[factFailedTasks] = strings.Join(tasks, ",")
	return f
}

// exporterFacts are the series the exporter's collector exports of wd
// after one refresh of its tracker, scraped as Prometheus text (which
// raw may mutate) and read back.
func exporterFacts(t *testing.T, wd *world, addr string, now time.Time, raw func([]byte) []byte) facts {
	t.Helper()
	lines := exporterSeries(t, addr, wd.App, now)
	text := string(raw([]byte(strings.Join(lines, "\n"))))
	f := facts{}
	records := map[int32]int{}
	causes := map[int32]map[string]int{}
	ages := map[int32][]int64{}
	failed := map[int32]bool{}
	refusals := []string{}
	for line := range strings.SplitSeq(text, "\n") {
		name, rest, _ := strings.Cut(line, "{")
		labelText, v, _ := strings.Cut(rest, "} ")
		labels := map[string]string{}
		for l := range strings.SplitSeq(labelText, ",") {
			if k, val, ok := strings.Cut(l, "="); ok {
				labels[k], _ = strconv.Unquote(val)
			}
		}
		if labels["app"] != wd.App {
			continue
		}
		x, _ := strconv.ParseFloat(v, 64)
		n, _ := strconv.Atoi(labels["task"])
		task := int32(n)
		switch name {
		case "parsley_records_held":
			records[task] += int(x)
		case "parsley_records_held_age_max_seconds":
			if x > 0 {
				ages[task] = append(ages[task], int64(x*1000+0.5))
			}
		case "parsley_held_heads":
			if causes[task] == nil {
				causes[task] = map[string]int{}
			}
			causes[task][labels["cause"]] += int(x)
		case "parsley_task_failed_closed":
			failed[task] = x == 1
		case "parsley_task_behind_transaction":
			f[taskFact(task, factBehind)] = strconv.FormatBool(x == 1)
		case "parsley_process_start_refusals":
			for range int(x) {
				refusals = append(refusals, labels["reason"])
			}
		}
	}
	for task := range wd.Tasks {
		f[taskFact(task, factRecords)] = strconv.Itoa(records[task])
		f[taskFact(task, factCauses)] = causeCount(causes[task])
		f[taskFact(task, factOldestRec)] = oldestOf(ages[task])
	}
	f[factRefusals] = sortedJoin(refusals)
	var fs []string
	for _, task := range slices.Sorted(maps.Keys(failed)) {
		if failed[task] {
			fs = append(fs, strconv.Itoa(int(task)))
		}
	}
	f[factFailedTasks] = strings.Join(fs, ",")
	return f
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	}
	return 0
}

// watchFacts are what watch --app's live view model shows of wd: the
// driver watch builds over the process's attach (cmdutil.FollowAttach,
// live.New), run until it has read every channel to its end, its latest
// snapshot rendered as lines (which raw may mutate) and read back.
func watchFacts(t *testing.T, wd *world, addr string, now time.Time, raw func([]byte) []byte) facts {
	t.Helper()
	snap := watchSnapshot(t, wd, addr, now)
	var lines []string
	for _, h := range snap.Heads {
		written := "none"
		if h.Written.Known {
			written = strconv.FormatInt(h.Written.D.Milliseconds(), 10)
		}
		lines = append(lines, fmt.Sprintf("head task=%d at=%s@%d cause=%s root=%s@%d rootcause=%s written=%s",
			h.Task, h.Channel, h.Offset, h.Cause, h.Root, h.RootOffset, h.RootCause, written))
	}
	text := string(raw([]byte(strings.Join(lines, "\n"))))
	f := facts{}
	heads := map[int32][]string{}
	roots := map[int32]map[string]bool{}
	ages := map[int32][]int64{}
	for line := range strings.SplitSeq(text, "\n") {
		if line == "" {
			continue
		}
		var task int32
		var at, cause, root, rootCause, written string
		if _, err := fmt.Sscanf(line, "head task=%d at=%s cause=%s root=%s rootcause=%s written=%s", &task, &at, &cause, &root, &rootCause, &written); err != nil {
			t.Fatalf("%s: %q: %v", wd, line, err)
		}
		heads[task] = append(heads[task], at+" "+cause)
		if roots[task] == nil {
			roots[task] = map[string]bool{}
		}
		roots[task][root+" "+rootCause] = true
		if a, err := strconv.ParseInt(written, 10, 64); err == nil {
			ages[task] = append(ages[task], a)
		}
	}
	for task := range wd.Tasks {
		f[taskFact(task, factHeads)] = sortedJoin(heads[task])
		f[taskFact(task, factCauses)] = causesOf(heads[task])
		f[taskFact(task, factRoots)] = sortedJoin(slices.Collect(maps.Keys(roots[task])))
		f[taskFact(task, factOldest)] = oldestOf(ages[task])
	}
	return f
}

// watchSnapshot runs watch --app's live driver over wd until every task
// has read what the log holds (or failed closed) and returns its last
// snapshot, taken at now.
func watchSnapshot(t *testing.T, wd *world, addr string, now time.Time) view.Snapshot {
	t.Helper()
	return watchSnapshotOf(t, wd.String(), wd.App, addr, now)
}

// watchSnapshotOf is watchSnapshot of process app (what names the world
// in failures).
func watchSnapshotOf(t *testing.T, what, app, addr string, now time.Time) view.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dial := func(ctx context.Context) (*kafka.Client, error) {
		return kafka.Dial(ctx, kafka.Config{Brokers: []string{addr}})
	}
	var warn strings.Builder
	names := &clock.Names{}
	att, fol, err := input.FollowAttach(ctx, dial, input.Tasks{App: app, TxnWait: worldTxnWait}, names, &warn, kafka.WithLogFacts())
	if err != nil {
		t.Fatalf("%s: watch --app: %v", what, err)
	}
	defer fol.Close()
	drv, err := live.New(fol.Follower, live.Config{Title: "causalctl watch --app " + app, Now: func() time.Time { return now },
		Seeds: att.Tasks, SeedWritten: att.SeedWritten, SeedDeleted: att.Process.TopicDeleted, Replay: engine.Config{Names: names}, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	dctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- drv.Run(dctx) }()
	defer func() { stop(); <-done }()
	for {
		select {
		case <-ctx.Done():
			s, _ := drv.Latest()
			t.Fatalf("%s: watch --app never read to the log's end: %+v", what, s.Channels)
		case <-time.After(5 * time.Millisecond):
		}
		s, ok := drv.Latest()
		if ok && caughtUp(&s) {
			return s
		}
	}
}

// caughtUp says whether a snapshot's feed has read every channel to its
// end, or stopped.
func caughtUp(s *view.Snapshot) bool {
	if s.State != engine.StateRunning {
		return true
	}
	for _, row := range s.Channels {
		if row.LogEnd < 0 || row.ReceivedUpTo+1 < row.LogEnd {
			return false
		}
	}
	return true
}
