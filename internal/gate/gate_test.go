package gate_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/gate"
	"github.com/mcpdrift/mcpdrift/internal/retirement"
)

func report(rows ...apiv1.AdapterRow) apiv1.ReportBody[apiv1.AdapterRow] {
	zero := int64(0)
	return apiv1.ReportBody[apiv1.AdapterRow]{
		Report: "adapter-retirement",
		From:   time.Date(2099, 3, 2, 12, 0, 0, 0, time.UTC),
		To:     time.Date(2099, 3, 16, 12, 0, 0, 0, time.UTC),
		Rows:   rows,
		Thresholds: &apiv1.Thresholds{
			MaxCalls: &zero, LongSessionS: 86400, TopClients: 5,
		},
	}
}

func TestDecide(t *testing.T) {
	last := time.Date(2099, 3, 15, 8, 0, 0, 0, time.UTC)
	ready := apiv1.AdapterRow{AdapterID: "a/1-2", Tool: "a", Registered: true, Verdict: retirement.VerdictReady, Reason: "no calls in the window", ToolCalls: 10}
	blocked := apiv1.AdapterRow{
		AdapterID: "b|x", Tool: "b_tool", Verdict: retirement.VerdictBlocked, Reason: "3 calls in the window, over the threshold of 0",
		Calls: 3, ToolCalls: 12, Share: 0.25, WouldBeRejected: 3, LastSeen: &last, LastSeenInWindow: true, Sessions: 2, Clients: 2, Services: 1,
		ServiceNames: []string{"svc"}, MaxPrivilege: "write", MaxSessionAgeS: age(7200),
		Callers: []apiv1.ClientUsage{
			{Client: "c`1@1.0", Calls: 2, MaxSessionAgeS: age(7200), MaxPrivilege: "write"},
			{Client: "c2", Calls: 1, MaxSessionAgeS: age(60), MaxPrivilege: "read"},
			// A client of calls to the tool without a client revision
			// only: it does not call through the adapter.
			{Client: "stock", UnknownRevisionCalls: 4},
		},
		UnknownRevisionCalls: 4,
	}
	blocked.BlockingClients = blocked.Callers[:1]
	atRisk := apiv1.AdapterRow{AdapterID: "c", Tool: "c", Verdict: retirement.VerdictAtRisk, Reason: "1 call", Calls: 1, WouldBeRejected: 1}
	r := report(ready, blocked, atRisk)

	d, err := gate.Decide(r, "a/1-2", nil)
	if err != nil || !d.Pass() {
		t.Fatalf("ready: %+v, %v", d, err)
	}
	for _, id := range []string{"b|x", "c"} {
		if d, err := gate.Decide(r, id, nil); err != nil || d.Pass() {
			t.Errorf("%s passes (err %v)", id, err)
		}
	}

	_, err = gate.Decide(r, "nope", nil)
	if !errors.Is(err, gate.ErrUnknownAdapter) || !strings.Contains(err.Error(), "known adapters: a/1-2, b|x, c") {
		t.Errorf("unknown adapter: %v", err)
	}
	_, err = gate.Decide(report(), "nope", nil)
	if !errors.Is(err, gate.ErrUnknownAdapter) || !strings.Contains(err.Error(), "known adapters: none") {
		t.Errorf("unknown adapter of an empty report: %v", err)
	}
	noTh := r
	noTh.Thresholds = nil
	if _, err := gate.Decide(noTh, "a/1-2", nil); err == nil {
		t.Error("a report without thresholds is accepted")
	}

	d, _ = gate.Decide(r, "b|x", []string{"ci"})
	var b strings.Builder
	if err := d.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"### ❌ Adapter b\\|x cannot be retired yet: blocked", // no code span: | would still split a table
		"| Tool | `b_tool`; not declared by any server (seen on calls only) |",
		"| Excluded clients | `ci` |",
		"| Share of the tool's calls | 25.00% (3 of 12) |",
		"| Last seen | 2099-03-15 08:00:00Z (in the window) |",
		"| Sessions, clients, services | 2, 2, 1 (svc) |",
		"| Declared window end | none declared |",
		"| Calls to the tool without a client revision | 4 |",
		"| c\\`1@1.0 | 2 | 0 | 2h | write |",
		"2 clients call it; the table lists the 1 with the most calls.",
		"**3 calls** (25.00% of `b_tool`'s 12 calls) would have been rejected",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the comment lacks %q:\n%s", want, md)
		}
	}

	// At risk for the calls to its tool that did not say their revision
	// alone: their client blocks it, with no figure of its own through
	// the adapter.
	stock := apiv1.ClientUsage{Client: "goose@1.0.0", UnknownRevisionCalls: 5}
	unknown := apiv1.AdapterRow{AdapterID: "d/1-2", Tool: "d", Registered: true, Verdict: retirement.VerdictAtRisk, ToolCalls: 5,
		Reason:               "no calls through it in the window, but 5 calls to d did not say which revision they were planned with (unknown, not assumed safe)",
		UnknownRevisionCalls: 5, Callers: []apiv1.ClientUsage{stock}, BlockingClients: []apiv1.ClientUsage{stock}}
	d, err = gate.Decide(report(unknown), "d/1-2", nil)
	if err != nil || d.Pass() {
		t.Fatalf("at risk for unknown revisions: %+v, %v", d, err)
	}
	b.Reset()
	if err := d.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md = b.String()
	for _, want := range []string{
		"### ⚠️ Adapter `d/1-2` cannot be retired yet: at risk",
		"5 calls to d did not say which revision they were planned with (unknown, not assumed safe).",
		"| Calls through the adapter | 0 |",
		"| Calls to the tool without a client revision | 5 |",
		"| `goose@1.0.0` | 0 | 5 | — | — |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the comment lacks %q:\n%s", want, md)
		}
	}
}

func age(s int64) *int64 { return &s }
