package state

import (
	"fmt"
	"strings"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/history"
	"github.com/causalctl/causalctl/internal/inspect"
)

// jsonDeploy is one task's answer to the deploy question (--receives):
// what it does when it restarts with the declaration, by the history
// rules (docs/histories.md).
type jsonDeploy struct {
	Task      int32            `json:"task"`
	Refusals  []string         `json:"refusals"`
	Stranded  []jsonDeployRecs `json:"stranded"`
	Joins     []jsonDeployJoin `json:"joins"`
	Delivers  []jsonDeployRec  `json:"delivers_at_once"`
	StillHeld []jsonDeployRec  `json:"still_held"`
}

type jsonDeployRecs struct {
	Channel string  `json:"channel"`
	Offsets []int64 `json:"offsets"`
}

type jsonDeployJoin struct {
	Channel string `json:"channel"`
	At      int64  `json:"at"`
}

type jsonDeployRec struct {
	Channel string `json:"channel"`
	Offset  int64  `json:"offset"`
}

// deployPlans answers the deploy question for every task of w against the
// declaration receives: each task's state from its store, each channel of
// the declaration read from the group's committed offset, else where the
// store left it, else its log start.
func deployPlans(w *inspect.Process, parts []int32, receives []string) ([]jsonDeploy, error) {
	names := map[clock.TopicID]string{}
	for name, id := range w.IDs {
		names[id] = name
	}
	out := []jsonDeploy{}
	for _, p := range parts {
		seed, err := inspect.SeedTask(w, p)
		if err != nil {
			return nil, err
		}
		in := history.DeployInput{Unit: history.Unit{Process: w.App, Task: p}, State: seed.Channels,
			Starts: map[clock.Channel]int64{}, LogStart: map[clock.Channel]int64{}, Deleted: map[clock.TopicID]bool{}, Names: names}
		fed := map[clock.Channel]int64{} // absent: −1 below
		for _, cs := range seed.Channels {
			fed[cs.Channel] = cs.Fed
		}
		for name, id := range seed.State.Names {
			if cur, ok := w.IDs[name]; (!ok && !w.Captured) || (ok && cur != id) {
				in.Deleted[id] = true // deleted, or recreated under its name
			}
			if _, ok := names[id]; !ok {
				names[id] = name
			}
		}
		for _, name := range receives {
			id, ok := w.IDs[name]
			if !ok || p >= w.Counts[name] {
				continue // unknown topic, or no partition for this task
			}
			ch := clock.Channel{Topic: id, Partition: p}
			if _, ok := fed[ch]; !ok {
				fed[ch] = -1
			}
			f := w.Facts[ch]
			if f != nil {
				in.LogStart[ch] = f.LogStart
			}
			switch c, committed := w.Committed[ch]; {
			case committed:
				in.Starts[ch] = c
			case fed[ch] >= 0:
				in.Starts[ch] = fed[ch] + 1
			case f != nil:
				in.Starts[ch] = f.LogStart
			default:
				in.Starts[ch] = 0
			}
		}
		plan, err := history.Deploy(in)
		if err != nil {
			return nil, err
		}
		name := func(ch clock.Channel) string { return history.ChannelName(names, ch) }
		d := jsonDeploy{Task: p, Refusals: []string{}, Stranded: []jsonDeployRecs{}, Joins: []jsonDeployJoin{}, Delivers: []jsonDeployRec{}, StillHeld: []jsonDeployRec{}}
		for _, r := range plan.Refusals {
			d.Refusals = append(d.Refusals, fmt.Sprintf("%s: %s", r.Reason, r.Detail))
		}
		for _, s := range plan.Stranded {
			d.Stranded = append(d.Stranded, jsonDeployRecs{Channel: name(s.Channel), Offsets: s.Held})
		}
		for _, j := range plan.Joins {
			d.Joins = append(d.Joins, jsonDeployJoin{Channel: name(j.Channel), At: j.At})
		}
		for _, r := range plan.Delivers {
			d.Delivers = append(d.Delivers, jsonDeployRec{Channel: name(r.Channel), Offset: r.Offset})
		}
		for _, r := range plan.StillHeld {
			d.StillHeld = append(d.StillHeld, jsonDeployRec{Channel: name(r.Channel), Offset: r.Offset})
		}
		out = append(out, d)
	}
	return out, nil
}

// deployText is the deploy section of the text output.
func deployText(ds []jsonDeploy) string {
	var b strings.Builder
	b.WriteString("With the declaration (--receives), by the history rules (docs/histories.md):\n")
	for _, d := range ds {
		fmt.Fprintf(&b, "  task %d:", d.Task)
		if len(d.Refusals) == 0 {
			b.WriteString(" starts")
		} else {
			b.WriteString(" refused")
		}
		b.WriteString("\n")
		for _, r := range d.Refusals {
			fmt.Fprintf(&b, "    refusal: %s\n", escape.Text(r))
		}
		for _, s := range d.Stranded {
			fmt.Fprintf(&b, "    stranded: %s holds %s, dropped by the declaration\n", escape.Text(s.Channel), offsets(s.Offsets))
		}
		for _, j := range d.Joins {
			fmt.Fprintf(&b, "    joins: %s, read from offset %d\n", escape.Text(j.Channel), j.At)
		}
		for _, r := range d.Delivers {
			fmt.Fprintf(&b, "    delivers at once: %s@%d\n", escape.Text(r.Channel), r.Offset)
		}
		for _, r := range d.StillHeld {
			fmt.Fprintf(&b, "    stays held: %s@%d\n", escape.Text(r.Channel), r.Offset)
		}
	}
	return b.String()
}

func offsets(os []int64) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = fmt.Sprint(o)
	}
	return "offset " + strings.Join(s, ", ")
}
