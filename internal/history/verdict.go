package history

import (
	"fmt"
	"slices"

	"github.com/causalctl/causalctl/internal/clock"
)

// Verdict is one unit's replay against Parsley's trace.
type Verdict struct {
	Unit Unit
	// Parsley and Shadow count the deliveries of each.
	Parsley, Shadow int
	// Divergence is the first place they differ; nil when the shadow
	// delivered the same records in the same order.
	Divergence *Divergence
	// Refusal is the shadow's last refusal, if it stopped.
	Refusal *Refusal
}

// Divergence names where the shadow and Parsley first differ.
type Divergence struct {
	// Position is the 0-based place in the delivery sequence.
	Position int
	// Channel and Offset are the record concerned: Parsley's delivery
	// there, or the shadow's when Parsley delivered nothing more.
	Channel clock.Channel
	Offset  int64
	// Parsley and Shadow say what each did at Position.
	Parsley, Shadow string
	// Rule is the rule that decided the shadow's side.
	Rule Rule
}

// Judge replays ex's history and compares every unit with the trace.
func Judge(ex *Export, opts Options) ([]Verdict, error) {
	outs, err := Replay(&ex.History, opts)
	if err != nil {
		return nil, err
	}
	byUnit := map[Unit]*Outcome{}
	for _, o := range outs {
		byUnit[o.Unit] = o
	}
	var vs []Verdict
	for _, u := range ex.Units {
		o := byUnit[u]
		if o == nil {
			o = &Outcome{Unit: u}
		}
		vs = append(vs, compare(u, ex.Trace[u], o, ex.Names))
	}
	return vs, nil
}

func compare(u Unit, trace []Traced, o *Outcome, names map[clock.TopicID]string) Verdict {
	v := Verdict{Unit: u, Parsley: len(trace), Shadow: len(o.Deliveries)}
	if o.Stopped {
		r := o.Refusals[len(o.Refusals)-1]
		v.Refusal = &r
	}
	name := func(ch clock.Channel) string { return ChannelName(names, ch) }
	for i := 0; i < max(len(trace), len(o.Deliveries)); i++ {
		switch {
		case i < len(trace) && i < len(o.Deliveries):
			t, d := trace[i], o.Deliveries[i]
			if t.Channel == d.Channel && t.Offset == d.Offset {
				continue
			}
			shadow := fmt.Sprintf("delivered %s@%d", name(d.Channel), d.Offset)
			// Where the shadow put Parsley's record, if it delivered it later.
			if j := slices.IndexFunc(o.Deliveries[i+1:], func(e Delivery) bool { return e.Channel == t.Channel && e.Offset == t.Offset }); j >= 0 {
				shadow += fmt.Sprintf(", and %s@%d only at delivery %d", name(t.Channel), t.Offset, i+1+j)
			}
			v.Divergence = &Divergence{Position: i, Channel: t.Channel, Offset: t.Offset,
				Parsley: fmt.Sprintf("delivered %s@%d", name(t.Channel), t.Offset), Shadow: shadow, Rule: d.Rule}
		case i < len(trace):
			t := trace[i]
			dv := &Divergence{Position: i, Channel: t.Channel, Offset: t.Offset,
				Parsley: fmt.Sprintf("delivered %s@%d", name(t.Channel), t.Offset), Shadow: "delivered nothing more", Rule: RuleCausal}
			if v.Refusal != nil {
				dv.Shadow = fmt.Sprintf("stopped: %s (%s)", v.Refusal.Reason, v.Refusal.Detail)
				dv.Rule = v.Refusal.Rule
			} else if held := o.Held[t.Channel]; len(held) > 0 {
				dv.Shadow = fmt.Sprintf("holds %s@%d", name(t.Channel), held[0])
			}
			v.Divergence = dv
		default:
			d := o.Deliveries[i]
			v.Divergence = &Divergence{Position: i, Channel: d.Channel, Offset: d.Offset,
				Parsley: "delivered nothing more", Shadow: fmt.Sprintf("delivered %s@%d", name(d.Channel), d.Offset), Rule: d.Rule}
		}
		break
	}
	return v
}

// ChannelName names a channel by its topic's name, NAME/P, or by its
// topic ID when the name is unknown or shared by several IDs (a topic
// deleted and recreated): NAME(ID)/P.
func ChannelName(names map[clock.TopicID]string, ch clock.Channel) string {
	name, ok := names[ch.Topic]
	if !ok {
		return ch.String()
	}
	for id, n := range names {
		if n == name && id != ch.Topic {
			return fmt.Sprintf("%s(%s)/%d", name, ch.Topic, ch.Partition)
		}
	}
	return fmt.Sprintf("%s/%d", name, ch.Partition)
}
