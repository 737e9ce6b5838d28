package queries_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/testing/fixture"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
)

// TestSameContractCounts checks that the counts SQL makes of stale calls
// leave out the calls planned with a revision that is the executing one's
// contract under another name, as the stale-usage rows do: a call planned
// with D, the mcpdrift v1 digest of deploy's definition, that ran under T,
// the SEP-2636 tool digest of the same definition, is not stale; one
// planned with revision 1, an older definition, still is. Service svc
// advertised 1, D and T in prod; base is the notifications' time:
//
//	s1  notice deploy at 0, refresh at 3m; D→T at 1m, 2m, 6m; 1→T at 4m, 5m
//	s2  notice deploy at 0; D→T at 1m, 2m; T→T at 3m
//	s3  notice naming no tool at 0; D→T at 1m; 1→T at 2m
//
// Hand-computed, over the window [base-1h, base+1h):
//
//	stale-usage and audit series: 10 calls, 3 stale (the 1→T ones);
//	  by client revision D 6 calls 0 stale, 1 3 calls 3 stale, T 1 call 0
//	propagation, tool deploy: 2 notified, 1 refreshed (lag 180000 ms),
//	  2 stale calls after the notice, 2 after the refresh, 1 session with
//	  stale calls (s1; s2's calls are all D→T)
//	propagation, tool "": 1 notified, 1 stale call after the notice, 1
//	  session with stale calls
//
// Counting by name instead (before one contract under two names was left
// out) gives 9 stale calls, D 6 stale, and for deploy 7, 3 and 2, for ""
// 2: the test fails then.
func TestSameContractCounts(t *testing.T) {
	st := openStore(t)
	r := runner(t)
	c := ctx(t)
	tenant := fmt.Sprintf("samecontract-%d", time.Now().UnixNano())
	base := fixture.Now.Add(-5 * time.Hour)
	at := func(d time.Duration) int64 { return base.Add(d).UnixNano() }

	const def = `{"name":"deploy","description":"Deploy a branch.","inputSchema":{"type":"object","properties":{"branch":{"type":"string"}}}}`
	const old = `{"name":"deploy","description":"Deploy a ref.","inputSchema":{"type":"object","properties":{"ref":{"type":"string"}},"required":["ref"]}}`
	var tool mcp.Tool
	if err := json.Unmarshal([]byte(def), &tool); err != nil {
		t.Fatal(err)
	}
	d, err := mcpgo.Digest(&tool)
	if err != nil {
		t.Fatal(err)
	}
	td, err := mcpgo.ToolDigest(&tool)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := mcpgo.ToolRevision(td)
	if err != nil {
		t.Fatal(err)
	}
	short := map[string]string{d: "D", tr: "T", "1": "1", "": ""}

	id := uint64(0)
	event := func(e otelschema.Event) otelschema.Event {
		id++
		e.ID, e.Service, e.Environment, e.ClientName, e.ClientVersion = id, "svc", "prod", "agent", "1.0"
		return e
	}
	ad := func(m time.Duration, rev, definition string) otelschema.Event {
		return event(otelschema.Event{Name: otelschema.EventAdvertised, Time: at(m), ServiceInstance: "svc-0",
			Tool: "deploy", RevisionServer: rev, Definition: definition})
	}
	notice := func(session, tool string) otelschema.Event {
		return event(otelschema.Event{Name: otelschema.EventListChanged, Time: at(0), SessionID: session, Tool: tool})
	}
	refresh := func(session string, m time.Duration) otelschema.Event {
		return event(otelschema.Event{Name: otelschema.EventRefresh, Time: at(m), SessionID: session, RefreshResult: otelschema.RefreshResultOK})
	}
	call := func(session string, m time.Duration, client string) otelschema.Event {
		return event(otelschema.Event{Name: otelschema.EventCall, Time: at(m), SessionID: session, Tool: "deploy",
			RevisionClient: client, RevisionServer: tr, Outcome: otelschema.OutcomeCurrent})
	}
	events := []otelschema.Event{
		ad(-50*time.Minute, "1", old), ad(-40*time.Minute, d, def), ad(-30*time.Minute, tr, def),
		notice("s1", "deploy"), refresh("s1", 3*time.Minute),
		call("s1", time.Minute, d), call("s1", 2*time.Minute, d), call("s1", 6*time.Minute, d),
		call("s1", 4*time.Minute, "1"), call("s1", 5*time.Minute, "1"),
		notice("s2", "deploy"), call("s2", time.Minute, d), call("s2", 2*time.Minute, d), call("s2", 3*time.Minute, tr),
		notice("s3", ""), call("s3", time.Minute, d), call("s3", 2*time.Minute, "1"),
	}
	half := len(events) / 2
	for _, b := range [][]otelschema.Event{events[:half], events[half:]} {
		if err := st.Write(c, store.Batch{Tenant: tenant, Events: b}); err != nil {
			t.Fatal(err)
		}
	}
	f := queries.Filter{Tenant: tenant, From: base.Add(-time.Hour), To: base.Add(time.Hour)}

	// The stale-usage rows say which pairs are stale: the counts below
	// must agree with them.
	rows, err := r.StaleUsage(c, f)
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, row := range rows {
		s := fmt.Sprintf("%s→%s %d", short[row.RevisionClient], short[row.RevisionServer], row.Calls)
		if row.Stale != nil {
			s += fmt.Sprintf(" stale=%t", *row.Stale)
		}
		stale = append(stale, s)
	}
	slices.Sort(stale)
	if want := []string{"1→T 3 stale=true", "D→T 6 stale=false", "T→T 1 stale=false"}; fmt.Sprint(stale) != fmt.Sprint(want) {
		t.Errorf("stale usage %v, want %v", stale, want)
	}

	// The series, summed over their buckets, by client revision.
	opts := queries.SeriesOptions{Step: 10 * time.Minute, GroupBy: []string{"revision_client"}}
	usage, err := r.StaleUsageSeries(c, f, opts)
	if err != nil {
		t.Fatal(err)
	}
	audit, err := r.AuditSeries(c, queries.AuditFilter{Filter: f}, opts)
	if err != nil {
		t.Fatal(err)
	}
	wantSeries := map[string][2]uint64{"D": {6, 0}, "1": {3, 3}, "T": {1, 0}}
	sums := map[string][2]uint64{}
	for _, p := range usage.Points {
		s := sums[short[p.RevisionClient]]
		sums[short[p.RevisionClient]] = [2]uint64{s[0] + p.Calls, s[1] + p.StaleCalls}
	}
	if !reflect.DeepEqual(sums, wantSeries) {
		t.Errorf("stale-usage series, [calls, stale calls] by client revision: %v, want %v", sums, wantSeries)
	}
	// Grouped by client too, the series reads the call rollups.
	fine, err := r.StaleUsageSeries(c, f, queries.SeriesOptions{Step: opts.Step, GroupBy: []string{"revision_client", "client"}})
	if err != nil {
		t.Fatal(err)
	}
	sums = map[string][2]uint64{}
	for _, p := range fine.Points {
		s := sums[short[p.RevisionClient]]
		sums[short[p.RevisionClient]] = [2]uint64{s[0] + p.Calls, s[1] + p.StaleCalls}
	}
	if !reflect.DeepEqual(sums, wantSeries) {
		t.Errorf("stale-usage series by client, [calls, stale calls] by client revision: %v, want %v", sums, wantSeries)
	}
	sums = map[string][2]uint64{}
	for _, p := range audit.Points {
		s := sums[short[p.RevisionClient]]
		sums[short[p.RevisionClient]] = [2]uint64{s[0] + p.Calls, s[1] + p.StaleCalls}
	}
	if !reflect.DeepEqual(sums, wantSeries) {
		t.Errorf("audit series, [calls, stale calls] by client revision: %v, want %v", sums, wantSeries)
	}

	// The propagation report from the narrow table and from the raw
	// events, and its series summed, by tool.
	type counts struct {
		Notified, Refreshed, AfterNotice, AfterRefresh, Sessions uint64
	}
	want := map[string]counts{"": {1, 0, 1, 0, 1}, "deploy": {2, 1, 2, 2, 1}}
	for name, get := range map[string]func(queries.Filter) ([]apiv1.PropagationRow, error){
		"narrow table": func(f queries.Filter) ([]apiv1.PropagationRow, error) { return r.Propagation(c, f) },
		"raw events":   func(f queries.Filter) ([]apiv1.PropagationRow, error) { return r.RawPropagation(c, f) },
	} {
		rows, err := get(f)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]counts{}
		for _, row := range rows {
			got[row.Tool] = counts{row.NotifiedSessions, row.RefreshedSessions, row.StaleCallsAfterNotice, row.StaleCallsAfterRefresh, row.SessionsWithStaleCalls}
			if row.Tool == "deploy" && (row.LagMaxMs == nil || *row.LagMaxMs != 180000) {
				t.Errorf("propagation from the %s: deploy's lag %v, want 180000 ms", name, row.LagMaxMs)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("propagation from the %s: %+v, want %+v", name, got, want)
		}
	}
	series, err := r.PropagationSeries(c, f, queries.SeriesOptions{Step: 10 * time.Minute, GroupBy: []string{"tool"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]counts{}
	for _, p := range series.Points {
		s := got[p.Tool]
		got[p.Tool] = counts{s.Notified + p.NotifiedSessions, s.Refreshed + p.RefreshedSessions, s.AfterNotice + p.StaleCallsAfterNotice,
			s.AfterRefresh + p.StaleCallsAfterRefresh, s.Sessions + p.SessionsWithStaleCalls}
	}
	for tool, c := range got {
		if c == (counts{}) {
			delete(got, tool)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("propagation series summed by tool: %+v, want %+v", got, want)
	}
}
