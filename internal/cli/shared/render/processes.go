package render

import (
	"encoding/base64"
	"time"
	"unicode/utf8"

	"github.com/causalctl/causalctl/internal/clock"
	"github.com/causalctl/causalctl/internal/escape"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/upstream"
	"github.com/causalctl/causalctl/internal/view"
)

// ProcessesSchema names the JSON document `processes -o json` and the
// web API's /api/v1/processes write, and its version.
const ProcessesSchema = "causalctl.processes/v3"

// The JSON schema (docs/processes.md, docs/schemas/processes.schema.json).
// Field names are stable; a field is null when unknown, never left out.
type ProcessesJSON struct {
	// Schema names the document's schema and its version (docs/json-output.md).
	Schema string `json:"schema"`
	Now    string `json:"now"`
	// OlderThanMs is --older-than in milliseconds; null when not given.
	OlderThanMs *int64        `json:"older_than_ms"`
	Processes   []ProcessJSON `json:"processes"`
	Unread      int           `json:"unread"`
}

type ProcessJSON struct {
	// App and Changelog are the names with each byte that is not UTF-8
	// written \xNN (escape.Text), so JSON never rewrites one silently to
	// U+FFFD; AppBase64 and ChangelogBase64 hold the exact bytes of such
	// a name, null for a name in UTF-8 (docs/json-output.md).
	App             string     `json:"app"`
	AppBase64       *string    `json:"app_base64"`
	Changelog       string     `json:"changelog"`
	ChangelogBase64 *string    `json:"changelog_base64"`
	Tasks           int32      `json:"tasks"`
	Error           *string    `json:"error"`
	Group           *GroupJSON `json:"group"`
	Receives        []string   `json:"receives"`
	ReceivesFrom    *string    `json:"receives_from"`
	HeldRecords     int        `json:"held_records"`
	HeldHeads       int        `json:"held_heads"`
	// OldestWrittenMsAgo is now − the oldest held record's timestamp, as
	// a head's written_ms_ago (holds, state).
	OldestWrittenMsAgo *int64         `json:"oldest_written_ms_ago"`
	UndatedHolds       int            `json:"undated_holds"`
	Causes             map[string]int `json:"causes"`
	MaxLag             *int64         `json:"max_lag"`
	MaxLagOn           *string        `json:"max_lag_channel"`
	// NextStart is state's next_start object; null when not read.
	NextStart *NextStart `json:"next_start"`
	Corrupt   int        `json:"corrupt"`
	// FailedClosed are the records its tasks fail closed on when read on.
	FailedClosed []ProcessFailedClosed `json:"failed_closed"`
	// CatchingUp counts the store's heads reading on delivers, Ready
	// those nothing blocks any more (delivered as soon as a task runs).
	CatchingUp int `json:"catching_up"`
	Ready      int `json:"ready"`
	// OlderThan says whether the process matched --older-than; null
	// when it was not given or the process was not read.
	OlderThan *bool `json:"older_than"`
	// Upstream is the stuck process upstream its holds wait on; null
	// when none (docs/fleet.md).
	Upstream *Upstream `json:"upstream"`
	// RetentionClock is state's retention_clock; [] for an unread row.
	RetentionClock []RetentionClock `json:"retention_clock"`
	// ReadOnPartial says the read on from the committed offsets stopped
	// at --read-on-max-records before the log end: the counts are of
	// what was read (PARTIAL).
	ReadOnPartial bool `json:"read_on_partial"`
}

// ProcessFailedClosed is a task failed closed, as holds and state write
// it (TaskFailedClosed), with its task.
type ProcessFailedClosed struct {
	Task int32 `json:"task"`
	TaskFailedClosed
}

type GroupJSON struct {
	State   string   `json:"state"`
	Members []string `json:"members"` // member IDs
}

// ProcessesReport is what `processes` found: the rows in application id
// order, read at Now, each process's upstream root; OlderThan applies
// when CheckOlder (--older-than).
type ProcessesReport struct {
	Now        time.Time
	Rows       []inspect.ProcessSummary
	Roots      map[string]upstream.Root // each process's upstream root
	CheckOlder bool
	OlderThan  time.Duration
}

// jsonName is a broker's name as JSON carries it: as it is when in UTF-8;
// otherwise escaped (escape.Text: each invalid byte \xNN, visibly
// rewritten) with its exact bytes in base64 beside it.
func jsonName(name string) (string, *string) {
	if utf8.ValidString(name) {
		return name, nil
	}
	return escape.Text(name), ptr(base64.StdEncoding.EncodeToString([]byte(name)))
}

// JSON is the report as the one processes document: what `processes -o
// json` writes and the web pages render, so the two cannot disagree.
func (rep ProcessesReport) JSON() ProcessesJSON {
	out := ProcessesJSON{Schema: ProcessesSchema, Now: rep.Now.UTC().Format("2006-01-02T15:04:05.000Z07:00"), Processes: []ProcessJSON{}}
	if rep.CheckOlder {
		out.OlderThanMs = ptr(rep.OlderThan.Milliseconds())
	}
	for _, r := range rep.Rows {
		jp := ProcessJSON{Tasks: r.Tasks, Receives: []string{}, Causes: map[string]int{}, FailedClosed: []ProcessFailedClosed{}, RetentionClock: []RetentionClock{}}
		jp.App, jp.AppBase64 = jsonName(r.App)
		jp.Changelog, jp.ChangelogBase64 = jsonName(r.Changelog)
		if r.Err != nil {
			jp.Error = ptr(r.Err.Error())
			out.Unread++
			out.Processes = append(out.Processes, jp)
			continue
		}
		if g := r.Group; g != nil {
			jg := &GroupJSON{State: g.State, Members: []string{}}
			for _, m := range g.Members {
				jg.Members = append(jg.Members, m.MemberID)
			}
			jp.Group = jg
		}
		jp.Receives = append(jp.Receives, r.Receives...)
		jp.ReceivesFrom = ptr(r.ReceivesFrom)
		jp.HeldRecords, jp.HeldHeads, jp.UndatedHolds, jp.Corrupt = r.HeldRecords, r.HeldHeads, r.Undated, r.Corrupt
		if r.Dated {
			jp.OldestWrittenMsAgo = ptr(r.Oldest.Milliseconds())
		}
		for c, n := range r.Causes {
			jp.Causes[string(c)] = n
		}
		jp.CatchingUp, jp.Ready, jp.ReadOnPartial = r.CatchingUp, r.Ready, r.ReadOnPartial
		for _, f := range r.FailedClosed {
			jp.FailedClosed = append(jp.FailedClosed, ProcessFailedClosed{Task: f.Channel.Partition, TaskFailedClosed: failedClosed(&f, r.ChannelNames[f.Channel])})
		}
		if r.LagKnown {
			jp.MaxLag, jp.MaxLagOn = ptr(r.MaxLag), ptr(r.LagChannel)
		}
		jp.NextStart = NextStartFrom(r.Refusals, func(ch clock.Channel) string { return r.ChannelNames[ch] })
		jp.NextStart.Warnings = WarningsOf(r.Warnings)
		jp.RetentionClock = RetentionClocks(r.Retention, func(ch clock.Channel) string { return r.ChannelNames[ch] })
		if rep.CheckOlder {
			jp.OlderThan = ptr(r.OlderThan(rep.OlderThan))
		}
		jp.Upstream = UpstreamOf(view.UpstreamOf(rep.Roots, r.App))
		out.Processes = append(out.Processes, jp)
	}
	return out
}
