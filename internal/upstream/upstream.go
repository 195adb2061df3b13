// Package upstream is the fleet's causal graph: which Parsley process
// writes which topic, and, over the processes' reports, which stuck
// process upstream a downstream process's held heads wait on — its root,
// followed through processes that only hold because of their own
// upstream, with the root's reason; processes waiting on each other are
// a cycle. Pure: no I/O and no clock. The writers are learned elsewhere
// (kafka.Client.Writers, a fleet file read by ParseFleet).
package upstream

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/causalctl/causalctl/internal/inspect"
)

// Writers say which applications write each topic: topic → application
// ids, sorted, each once.
type Writers map[string][]string

// Add records that app writes topic.
func (w Writers) Add(topic, app string) {
	apps := w[topic]
	if i, found := slices.BinarySearch(apps, app); !found {
		w[topic] = slices.Insert(apps, i, app)
	}
}

// Merge adds every writer of o to w.
func (w Writers) Merge(o Writers) {
	for topic, apps := range o {
		for _, app := range apps {
			w.Add(topic, app)
		}
	}
}

// Kind is why a process is stuck, from its own report. The order of the
// constants is their rank: the first is the most telling root.
type Kind string

const (
	// Refusing: stopped, and its next start would be refused.
	Refusing Kind = "refusing"
	// FailedClosed: a task fails closed on a record it reads.
	FailedClosed Kind = "failed-closed"
	// Stopped: its group has no member; it sends nothing.
	Stopped Kind = "stopped"
	// Holding: it runs, and holds heads.
	Holding Kind = "holding"
	// Cycle: processes holding on each other's output.
	Cycle Kind = "cycle"
)

func (k Kind) rank() int {
	return slices.Index([]Kind{Refusing, FailedClosed, Stopped, Holding, Cycle}, k)
}

// Node is one process as the graph sees it.
type Node struct {
	App string
	// Stuck is why it sends nothing further, "" when it is not stuck;
	// Code the refusal's reason or the failed-closed record's code.
	Stuck Kind
	Code  string
	// WaitsOn are the topics its held heads' blockers are on (blockers
	// held in the process itself left out), sorted.
	WaitsOn []string
}

// NodeOf is the node of a summarised process. One that could not be read
// is not stuck as far as anyone can tell, and waits on nothing.
func NodeOf(r *inspect.ProcessSummary) Node {
	if r.Err != nil {
		return Node{App: r.App}
	}
	f := Facts{Stopped: r.Group == nil || len(r.Group.Members) == 0, Holding: r.HeldHeads > 0}
	if len(r.Refusals) > 0 {
		f.Refusal = string(r.Refusals[0].Reason)
	}
	if len(r.FailedClosed) > 0 {
		f.FailedClosed = string(r.FailedClosed[0].Code)
	}
	return f.Node(r.App, r.WaitsOn)
}

// Facts are what a process's own stall is judged from.
type Facts struct {
	// Stopped: its group has no member.
	Stopped bool
	// Refusal is its next start's first refusal's reason, "" when none;
	// FailedClosed the code of the record a task fails closed on.
	Refusal, FailedClosed string
	// Holding: it holds heads.
	Holding bool
}

// Node is the node of process app whose heads wait on waitsOn (sorted):
// stuck, in this order, when stopped with a refusal, failing closed,
// stopped, or holding. A refusal of a running process is a prediction of
// its next start, not a stall.
func (f Facts) Node(app string, waitsOn []string) Node {
	n := Node{App: app, WaitsOn: waitsOn}
	switch {
	case f.Stopped && f.Refusal != "":
		n.Stuck, n.Code = Refusing, f.Refusal
	case f.FailedClosed != "":
		n.Stuck, n.Code = FailedClosed, f.FailedClosed
	case f.Stopped:
		n.Stuck = Stopped
	case f.Holding:
		n.Stuck = Holding
	}
	return n
}

// Root is the stuck process a downstream process's holds wait on.
type Root struct {
	// App is the root process; for a cycle, "" (Cycle names them).
	App string
	// Kind and Code are the root's reason (Node.Stuck, Node.Code).
	Kind Kind
	Code string
	// Topic is the topic the downstream process waits on, the first step.
	Topic string
	// Via are the processes from the first upstream one to the root, the
	// root last (for a cycle, to where it repeats).
	Via []string
	// Cycle are the processes waiting on each other, starting from the
	// least application id; nil unless Kind is Cycle.
	Cycle []string
}

// Reason is the root's reason in one word or two: "stopped",
// "refusing ORDERING_STATE_LOST", "cycle".
func (r Root) Reason() string {
	if r.Code != "" {
		return string(r.Kind) + " " + r.Code
	}
	return string(r.Kind)
}

// Text is the root as a table cell without blanks: "billing(refusing:ORDERING_STATE_LOST)",
// "cycle(a>b)"; "-" for none.
func (r *Root) Text() string {
	switch {
	case r == nil:
		return "-"
	case r.Kind == Cycle:
		return "cycle(" + strings.Join(r.Cycle, ">") + ")"
	case r.Code != "":
		return r.App + "(" + string(r.Kind) + ":" + r.Code + ")"
	}
	return r.App + "(" + string(r.Kind) + ")"
}

// Graph is the fleet: its processes and who writes what.
type Graph struct {
	nodes   map[string]Node
	writers Writers
}

// New builds the graph of nodes, whose writers are w.
func New(nodes []Node, w Writers) *Graph {
	g := &Graph{nodes: map[string]Node{}, writers: w}
	for _, n := range nodes {
		g.nodes[n.App] = n
	}
	return g
}

// Resolve gives the root of every process whose held heads wait on a
// topic a stuck process writes: the most telling (Kind's order, then the
// shortest way, then the least application id). A holding process
// upstream is followed to its own root; one whose holds wait on no stuck
// writer is the root itself. Processes waiting on each other are a Cycle.
func (g *Graph) Resolve() map[string]Root {
	out := map[string]Root{}
	for _, app := range slices.Sorted(maps.Keys(g.nodes)) {
		if r, ok := g.rootOf(app, []string{app}); ok {
			out[app] = r
		}
	}
	return out
}

// rootOf is the best root among the stuck writers of the topics app
// waits on; path is the way here, app last.
func (g *Graph) rootOf(app string, path []string) (Root, bool) {
	return g.rootFrom(app, g.nodes[app].WaitsOn, path)
}

// RootOf is the root of a part of app — one task — whose held heads wait
// on waitsOn: the same resolution as Resolve's, from those topics alone.
func (g *Graph) RootOf(app string, waitsOn []string) (Root, bool) {
	return g.rootFrom(app, waitsOn, []string{app})
}

func (g *Graph) rootFrom(app string, waitsOn, path []string) (Root, bool) {
	var best Root
	found := false
	for _, topic := range waitsOn {
		for _, w := range g.writers[topic] {
			up, ok := g.nodes[w]
			if !ok || w == app || up.Stuck == "" {
				continue
			}
			r := g.follow(up, slices.Concat(path, []string{w}))
			r.Topic = topic
			if !found || better(r, best) {
				best, found = r, true
			}
		}
	}
	return best, found
}

// follow is the root reached through up, the last of path.
func (g *Graph) follow(up Node, path []string) Root {
	if i := slices.Index(path[:len(path)-1], up.App); i >= 0 {
		cycle := path[i : len(path)-1]
		least := slices.Index(cycle, slices.Min(cycle))
		return Root{Kind: Cycle, Via: path[1:], Cycle: slices.Concat(cycle[least:], cycle[:least])}
	}
	if up.Stuck == Holding {
		if r, ok := g.rootOf(up.App, path); ok {
			return r
		}
	}
	return Root{App: up.App, Kind: up.Stuck, Code: up.Code, Via: path[1:]}
}

func better(a, b Root) bool {
	return cmp.Or(cmp.Compare(a.Kind.rank(), b.Kind.rank()), cmp.Compare(len(a.Via), len(b.Via)),
		strings.Compare(a.App, b.App), strings.Compare(a.Topic, b.Topic)) < 0
}

// Roots are the processes that are some other process's root, for
// putting them first.
func Roots(roots map[string]Root) map[string]bool {
	out := map[string]bool{}
	for _, r := range roots {
		if r.Kind == Cycle {
			for _, app := range r.Cycle {
				out[app] = true
			}
			continue
		}
		out[r.App] = true
	}
	return out
}
