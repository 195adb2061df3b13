package acceptance

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The deploy question (state --receives) answered by the history rules,
// against a stopped Parsley process holding shipments/0@4: a declaration
// dropping shipments names the stranded record and the refusal; one
// adding invoices says where it is read from, and that the hold stays.
func TestStateDeployQuestion(t *testing.T) {
	w := newStartWorld(t, true)
	type deploy struct {
		Task     int32    `json:"task"`
		Refusals []string `json:"refusals"`
		Stranded []struct {
			Channel string  `json:"channel"`
			Offsets []int64 `json:"offsets"`
		} `json:"stranded"`
		Joins []struct {
			Channel string `json:"channel"`
			At      int64  `json:"at"`
		} `json:"joins"`
		StillHeld []struct {
			Channel string `json:"channel"`
			Offset  int64  `json:"offset"`
		} `json:"still_held"`
	}
	run := func(receives string) ([]deploy, string) {
		_, out, stderr := runEnv(t, nil, "state", "--brokers", w.addr, "--app", startApp, "--receives", receives, "-o", "json")
		var rep struct {
			Deploy []deploy `json:"deploy"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Deploy == nil {
			t.Fatalf("--receives %s: %v: %s%s", receives, err, out, stderr)
		}
		_, text, _ := runEnv(t, nil, "state", "--brokers", w.addr, "--app", startApp, "--receives", receives)
		return rep.Deploy, text
	}

	ds, text := run("orders,payments")
	d := ds[0]
	if len(d.Stranded) != 1 || d.Stranded[0].Channel != "shipments/0" || !slices.Equal(d.Stranded[0].Offsets, []int64{4}) {
		t.Errorf("dropping shipments: stranded %+v", d.Stranded)
	}
	if len(d.Refusals) != 1 || !strings.HasPrefix(d.Refusals[0], "CHANNEL_REMOVED_WITH_HELD_MESSAGES") {
		t.Errorf("dropping shipments: refusals %q", d.Refusals)
	}
	if !strings.Contains(text, "stranded: shipments/0 holds offset 4") || !strings.Contains(text, "task 0: refused") {
		t.Errorf("text:\n%s", text)
	}

	ds, text = run("orders,payments,shipments,invoices")
	d = ds[0]
	if len(d.Refusals) != 0 || len(d.Stranded) != 0 {
		t.Errorf("adding invoices: refused %q, stranded %+v", d.Refusals, d.Stranded)
	}
	if len(d.Joins) != 1 || d.Joins[0].Channel != "invoices/0" || d.Joins[0].At != 0 {
		t.Errorf("adding invoices: joins %+v", d.Joins)
	}
	if len(d.StillHeld) != 1 || d.StillHeld[0].Channel != "shipments/0" || d.StillHeld[0].Offset != 4 {
		t.Errorf("adding invoices: still held %+v", d.StillHeld)
	}
	if !strings.Contains(text, "joins: invoices/0, read from offset 0") {
		t.Errorf("text:\n%s", text)
	}
}
