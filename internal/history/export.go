package history

import (
	"encoding/hex"
	"fmt"
	"slices"

	"olympos.io/encoding/edn"

	"github.com/causalctl/causalctl/internal/clock"
)

// Export is a Parsley test export (the parsley-jepsen EDN format, format 1)
// as read: the history it records and Parsley's trace of what each unit
// delivered.
type Export struct {
	// Sabotage is the fault the export's Parsley was built with ("NONE"
	// for an honest one).
	Sabotage string
	Source   string
	Seed     int64
	History  History
	// Trace is what Parsley delivered, by unit in delivery order.
	Trace map[Unit][]Traced
	// Units are every unit the export names, in the order of its tasks.
	Units []Unit
	// Names are the topics' names by ID.
	Names map[clock.TopicID]string
}

// Traced is one delivery of Parsley's trace.
type Traced struct {
	Channel clock.Channel
	Offset  int64
	UID     string
}

type ednChannel [2]any

type ednExport struct {
	Format   int         `edn:"format"`
	Source   edn.Keyword `edn:"source"`
	Seed     int64       `edn:"seed"`
	Sabotage edn.Keyword `edn:"sabotage"`
	Topics   []struct {
		ID       string          `edn:"id"`
		Name     string          `edn:"name"`
		LogStart map[int32]int64 `edn:"log-start"`
	} `edn:"topics"`
	Tasks []struct {
		Process string `edn:"process"`
		Task    int32  `edn:"task"`
	} `edn:"tasks"`
	Records []struct {
		Topic     string  `edn:"topic"`
		Partition int32   `edn:"partition"`
		Offset    int64   `edn:"offset"`
		UID       string  `edn:"uid"`
		Causes    *string `edn:"causes"`
	} `edn:"records"`
	Trace []struct {
		Process string     `edn:"process"`
		Task    int32      `edn:"task"`
		Channel ednChannel `edn:"channel"`
		Offset  int64      `edn:"offset"`
		UID     string     `edn:"uid"`
	} `edn:"trace"`
	Reads []struct {
		Index     int                  `edn:"index"`
		Process   string               `edn:"process"`
		Task      int32                `edn:"task"`
		NextRead  map[ednChannel]int64 `edn:"next-read"`
		ExecStart map[ednChannel]int64 `edn:"exec-start"`
		EndsLo    map[string]int64     `edn:"ends-lo"`
	} `edn:"reads"`
	Statuses []struct {
		Index     int              `edn:"index"`
		Process   string           `edn:"process"`
		Lifecycle edn.Keyword      `edn:"lifecycle"`
		Refusal   *edn.Keyword     `edn:"refusal"`
		TraceEnds map[string]int64 `edn:"trace-ends"`
	} `edn:"statuses"`
	Faults []struct {
		Index   int                 `edn:"index"`
		Kind    edn.Keyword         `edn:"kind"`
		Details map[edn.Keyword]any `edn:"details"`
	} `edn:"faults"`
}

// ParseExport reads a Parsley export. Errors name the part of the export
// (record, read, fault) that is wrong.
func ParseExport(data []byte) (*Export, error) {
	var raw ednExport
	if err := edn.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not a Parsley export: %w", err)
	}
	if raw.Format != 1 {
		return nil, fmt.Errorf("export format %d: only format 1 is read", raw.Format)
	}
	ex := &Export{Sabotage: string(raw.Sabotage), Source: string(raw.Source), Seed: raw.Seed,
		Trace: map[Unit][]Traced{}, Names: map[clock.TopicID]string{},
		History: History{Records: map[clock.Channel][]Record{}, LogStart: map[clock.Channel]int64{}}}
	finalStart := map[clock.Channel]int64{}
	for i, t := range raw.Topics {
		id, err := clock.ParseTopicID(t.ID)
		if err != nil {
			return nil, fmt.Errorf("topic %d: %w", i, err)
		}
		ex.Names[id] = t.Name
		ex.History.Names = ex.Names
		for p, s := range t.LogStart {
			finalStart[clock.Channel{Topic: id, Partition: p}] = s
		}
	}
	for _, t := range raw.Tasks {
		if u := (Unit{t.Process, t.Task}); !slices.Contains(ex.Units, u) {
			ex.Units = append(ex.Units, u)
		}
	}
	for i, r := range raw.Records {
		id, err := clock.ParseTopicID(r.Topic)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		ch := clock.Channel{Topic: id, Partition: r.Partition}
		rec := Record{Offset: r.Offset, UID: r.UID}
		if r.Causes != nil {
			b, err := hex.DecodeString(*r.Causes)
			if err != nil {
				return nil, fmt.Errorf("record %s offset %d: causes are not hex: %w", ch, r.Offset, err)
			}
			rec.Clock, rec.DecodeErr = clock.Decode(b)
			rec.Causes = b
		}
		ex.History.Records[ch] = append(ex.History.Records[ch], rec)
	}
	for ch, rs := range ex.History.Records {
		slices.SortFunc(rs, func(a, b Record) int { return int(a.Offset - b.Offset) })
		for i := 1; i < len(rs); i++ {
			if rs[i].Offset == rs[i-1].Offset {
				return nil, fmt.Errorf("record %s offset %d appears twice", ch, rs[i].Offset)
			}
		}
	}
	for i, t := range raw.Trace {
		ch, err := parseChannel(t.Channel)
		if err != nil {
			return nil, fmt.Errorf("trace entry %d: %w", i, err)
		}
		u := Unit{t.Process, t.Task}
		ex.Trace[u] = append(ex.Trace[u], Traced{Channel: ch, Offset: t.Offset, UID: t.UID})
	}
	for _, r := range raw.Reads {
		st := Step{Index: r.Index, Kind: StepRead, Unit: Unit{r.Process, r.Task}}
		st.TraceEnd, st.TraceKnown = r.EndsLo[r.Process]
		if st.TraceEnd < 0 {
			return nil, fmt.Errorf("read %d: trace end %d of %s is negative", r.Index, st.TraceEnd, r.Process)
		}
		var err error
		if st.ExecStart, err = parsePositions(r.ExecStart); err == nil {
			st.NextRead, err = parsePositions(r.NextRead)
		}
		if err != nil {
			return nil, fmt.Errorf("read %d: %w", r.Index, err)
		}
		if !slices.Contains(ex.Units, st.Unit) {
			ex.Units = append(ex.Units, st.Unit)
		}
		ex.History.Steps = append(ex.History.Steps, st)
	}
	for _, s := range raw.Statuses {
		if s.Process == "" {
			return nil, fmt.Errorf("status %d: no process", s.Index)
		}
		st := Step{Index: s.Index, Kind: StepStatus, Unit: Unit{Process: s.Process}, Running: s.Lifecycle == "RUNNING"}
		st.TraceEnd, st.TraceKnown = s.TraceEnds[s.Process]
		if st.TraceEnd < 0 {
			return nil, fmt.Errorf("status %d: trace end %d of %s is negative", s.Index, st.TraceEnd, s.Process)
		}
		if s.Refusal != nil {
			st.Reason = string(*s.Refusal)
		}
		ex.History.Steps = append(ex.History.Steps, st)
	}
	for _, f := range raw.Faults {
		switch f.Kind {
		case "kill":
			ch, err := parseChannel(f.Details["channel"])
			if err != nil {
				return nil, fmt.Errorf("fault %d (kill): %w", f.Index, err)
			}
			ex.History.Steps = append(ex.History.Steps, Step{Index: f.Index, Kind: StepDelete, Topic: ch.Topic})
		case "recreate":
			old, _ := f.Details["old"].(string)
			id, err := clock.ParseTopicID(old)
			if err != nil {
				return nil, fmt.Errorf("fault %d (recreate): the old topic ID: %w", f.Index, err)
			}
			ex.History.Steps = append(ex.History.Steps, Step{Index: f.Index, Kind: StepDelete, Topic: id})
		case "truncate":
			ch, err := parseChannel(f.Details["channel"])
			if err != nil {
				return nil, fmt.Errorf("fault %d (truncate): %w", f.Index, err)
			}
			// Parsley's exports say where the log now starts with :to; the
			// project's scenarios with :log-start.
			start, ok := f.Details["to"].(int64)
			if !ok {
				start, ok = f.Details["log-start"].(int64)
			}
			if !ok {
				start = finalStart[ch] // the export's own log start when the fault does not say
			}
			ex.History.Steps = append(ex.History.Steps, Step{Index: f.Index, Kind: StepTruncate, Channel: ch, LogStart: start})
		}
		// declared, redeclare-add, redeclare-remove and rewind act through
		// the next read's execution start (its scope and positions).
	}
	slices.SortStableFunc(ex.History.Steps, func(a, b Step) int { return a.Index - b.Index })
	return ex, nil
}

func parseChannel(v any) (clock.Channel, error) {
	var pair []any
	switch x := v.(type) {
	case ednChannel:
		pair = x[:]
	case []any:
		pair = x
	}
	if len(pair) != 2 {
		return clock.Channel{}, fmt.Errorf("channel %v is not [topic-id partition]", v)
	}
	s, ok1 := pair[0].(string)
	p, ok2 := pair[1].(int64)
	if !ok1 || !ok2 {
		return clock.Channel{}, fmt.Errorf("channel %v is not [topic-id partition]", v)
	}
	id, err := clock.ParseTopicID(s)
	if err != nil {
		return clock.Channel{}, fmt.Errorf("channel %v: %w", v, err)
	}
	return clock.Channel{Topic: id, Partition: int32(p)}, nil
}

func parsePositions(m map[ednChannel]int64) (map[clock.Channel]int64, error) {
	out := make(map[clock.Channel]int64, len(m))
	for k, v := range m {
		ch, err := parseChannel(k)
		if err != nil {
			return nil, err
		}
		out[ch] = v
	}
	return out, nil
}
