package queries_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/testing/fixture"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
)

// TestNarrowEqualsRaw checks that the propagation and violations reports
// served from their narrow tables equal the same reports computed from the
// raw events, over windows that cut through the fixture's notifications
// and violations and with every filter, for both tenants; the violations
// are compared page by page, cursors included.
func TestNarrowEqualsRaw(t *testing.T) {
	r := runner(t)
	c := ctx(t)
	now := fixture.Now
	t0 := now.Add(-2*24*time.Hour + 6*time.Hour) // the propagation of create_issue
	windows := []struct {
		name     string
		from, to time.Time
	}{
		{"week", now.Add(-7 * 24 * time.Hour), now},
		{"everything", now.Add(-30 * 24 * time.Hour), now.Add(24 * time.Hour)},
		{"ragged recent", now.Add(-36*time.Hour + 17*time.Minute + 23*time.Second), now.Add(-5*time.Minute + 30*time.Second)},
		{"ragged old", now.Add(-6*24*time.Hour + 13*time.Minute), now.Add(-3*24*time.Hour + 47*time.Minute)},
		// Around the notification: refreshes and stale calls cut at the
		// window's end, and a window that starts after the notification.
		{"propagation", t0.Add(-time.Minute), t0.Add(10 * time.Second)},
		{"after the notice", t0.Add(time.Second), t0.Add(time.Hour)},
		{"notice to 70s", t0, t0.Add(70 * time.Second)},
	}
	filters := []struct {
		name string
		edit func(*queries.Filter)
	}{
		{"all", func(*queries.Filter) {}},
		{"tool", func(f *queries.Filter) { f.Tool = "create_issue" }},
		{"client name", func(f *queries.Filter) { f.Client = "claude-desktop" }},
		{"client version", func(f *queries.Filter) { f.Client = "claude-desktop@1.2.0" }},
		{"excluded", func(f *queries.Filter) { f.ExcludeClients = []string{"cursor", "claude-desktop@0.9.1"} }},
		{"service and environment", func(f *queries.Filter) { f.Service, f.Environment = "tracker", "prod" }},
	}
	var compared int
	for _, tenant := range []string{fixture.TenantA, fixture.TenantB} {
		for _, w := range windows {
			for _, fl := range filters {
				f := queries.Filter{Tenant: tenant, From: w.from, To: w.to}
				fl.edit(&f)
				t.Run(fmt.Sprintf("%s/%s/%s", tenant, w.name, fl.name), func(t *testing.T) {
					got, err := r.Propagation(c, f)
					if err != nil {
						t.Fatal(err)
					}
					want, err := r.RawPropagation(c, f)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("propagation from propagation_events differs from raw:\nnarrow %s\n   raw %s", js(got), js(want))
					}
					compared += len(want)
					for _, limit := range []int{2, queries.MaxPageLimit} {
						narrow := walkViolations(t, func(p queries.Page) (queries.ViolationPage, error) { return r.Violations(c, f, p) }, limit)
						raw := walkViolations(t, func(p queries.Page) (queries.ViolationPage, error) { return r.RawViolations(c, f, p) }, limit)
						if !reflect.DeepEqual(narrow, raw) {
							t.Errorf("violations by pages of %d from violation_candidates differ from raw:\nnarrow %s\n   raw %s", limit, js(narrow), js(raw))
						}
						compared += len(raw)
					}
				})
			}
		}
	}
	if compared == 0 {
		t.Error("the comparison compared nothing")
	}
}

// walkViolations reads every page of limit rows and returns the pages.
func walkViolations(t *testing.T, read func(queries.Page) (queries.ViolationPage, error), limit int) []queries.ViolationPage {
	t.Helper()
	var pages []queries.ViolationPage
	page := queries.Page{Limit: limit}
	for {
		p, err := read(page)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
		if p.Next == "" {
			return pages
		}
		if len(pages) > 100 {
			t.Fatal("pagination does not end")
		}
		page.After = p.Next
	}
}

// TestViolationsLaterRemovalDeclaration checks that a successful call
// through an adapter becomes a removed_tool_success violation when the
// adapter is declared a removal after the call: adapter_call_candidates
// keeps the call, and the registry is read at query time.
func TestViolationsLaterRemovalDeclaration(t *testing.T) {
	st := openStore(t)
	r := runner(t)
	c := ctx(t)
	tenant := fmt.Sprintf("later-%d", time.Now().UnixNano())
	base := fixture.Now.Add(-24 * time.Hour)
	declare := func(id uint64, at time.Time, class otelschema.ChangeClass) {
		t.Helper()
		e := otelschema.Event{ID: id, Name: otelschema.EventAdapter, Time: at.UnixNano(), Service: "billing",
			Tool: "refund", AdapterID: "refund/v1-v2", ChangeClass: class, AdapterRevisionFrom: "1", AdapterRevisionTo: "2"}
		if err := st.Write(c, store.Batch{Tenant: tenant, Events: []otelschema.Event{e}}); err != nil {
			t.Fatal(err)
		}
	}
	declare(1, base, otelschema.ChangeClassBoundedMigration)
	call := otelschema.Event{ID: 2, Name: otelschema.EventCall, Time: base.Add(time.Minute).UnixNano(), Service: "billing",
		Tool: "refund", SessionID: "s1", ClientName: "cursor", ClientVersion: "0.48.0", RevisionClient: "1", RevisionServer: "2",
		Outcome: otelschema.OutcomeNormalized, AdapterID: "refund/v1-v2"}
	if err := st.Write(c, store.Batch{Tenant: tenant, Events: []otelschema.Event{call}}); err != nil {
		t.Fatal(err)
	}
	f := queries.Filter{Tenant: tenant, From: base.Add(-time.Hour), To: base.Add(time.Hour)}
	check := func(want int) {
		t.Helper()
		got, err := r.Violations(c, f, queries.Page{})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := r.RawViolations(c, f, queries.Page{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Rows) != want || !reflect.DeepEqual(got, raw) {
			t.Fatalf("violations %s, raw %s, want %d rows", js(got), js(raw), want)
		}
	}
	check(0)
	// The removal is declared after the call.
	declare(3, base.Add(2*time.Minute), otelschema.ChangeClassRemoval)
	check(1)
	// A later declaration that is no removal wins again.
	declare(4, base.Add(3*time.Minute), otelschema.ChangeClassBoundedMigration)
	check(0)
	// A call whose own change class is removal is a violation whatever the
	// adapter's latest declaration, and is listed once when that is a
	// removal too.
	removed := call
	removed.ID, removed.Time, removed.ChangeClass = 5, base.Add(4*time.Minute).UnixNano(), otelschema.ChangeClassRemoval
	if err := st.Write(c, store.Batch{Tenant: tenant, Events: []otelschema.Event{removed}}); err != nil {
		t.Fatal(err)
	}
	check(1)
	declare(6, base.Add(5*time.Minute), otelschema.ChangeClassRemoval)
	check(2)
}

// TestViolationsPagesWithoutRemovals walks the pages of a tenant whose
// registry declares no adapter removed, when the query is the narrow
// table's branch alone (violations.sql): every cursor must resume after the
// last row of its page, under a tool filter too, as the raw twin does.
func TestViolationsPagesWithoutRemovals(t *testing.T) {
	st := openStore(t)
	r := runner(t)
	c := ctx(t)
	tenant := fmt.Sprintf("pages-%d", time.Now().UnixNano())
	base := fixture.Now.Add(-24 * time.Hour)
	var events []otelschema.Event
	for i := range 7 {
		tool := "refund"
		if i%3 == 2 {
			tool = "charge"
		}
		e := otelschema.Event{ID: uint64(100 + i), Name: otelschema.EventCall, Time: base.Add(time.Duration(i) * time.Minute).UnixNano(),
			Service: "billing", Tool: tool, SessionID: fmt.Sprint("s", i), ClientName: "cursor", ClientVersion: "0.48.0",
			RevisionClient: "1", RevisionServer: "2"}
		switch i % 2 {
		case 0: // rejected after its side effect started
			e.Outcome, e.SideEffectStarted, e.ErrorCode = otelschema.OutcomeRejectedStale, true, "STALE_TOOL_SCHEMA"
		default: // validated under one revision, executed under another
			e.Outcome, e.RevisionValidated = otelschema.OutcomeCurrent, "1"
		}
		events = append(events, e)
	}
	// Two violations at the same instant: the cursor's event id breaks the tie.
	events[4].Time = events[3].Time
	if err := st.Write(c, store.Batch{Tenant: tenant, Events: events}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"", "refund"} {
		f := queries.Filter{Tenant: tenant, From: base.Add(-time.Hour), To: base.Add(time.Hour), Tool: tool}
		all, err := r.Violations(c, f, queries.Page{Limit: queries.MaxPageLimit})
		if err != nil {
			t.Fatal(err)
		}
		want := 7
		if tool != "" {
			want = 5
		}
		if len(all.Rows) != want || all.Next != "" {
			t.Fatalf("tool %q: one page of %d rows (next %q), want %d rows", tool, len(all.Rows), all.Next, want)
		}
		for _, limit := range []int{1, 2, 3} {
			narrow := walkViolations(t, func(p queries.Page) (queries.ViolationPage, error) { return r.Violations(c, f, p) }, limit)
			raw := walkViolations(t, func(p queries.Page) (queries.ViolationPage, error) { return r.RawViolations(c, f, p) }, limit)
			if !reflect.DeepEqual(narrow, raw) {
				t.Errorf("tool %q: violations by pages of %d differ from raw:\nnarrow %s\n   raw %s", tool, limit, js(narrow), js(raw))
			}
			var rows []apiv1.ViolationRow
			for _, p := range narrow {
				rows = append(rows, p.Rows...)
			}
			if !reflect.DeepEqual(rows, all.Rows) {
				t.Errorf("tool %q: pages of %d hold %s, want the rows of one page %s", tool, limit, js(rows), js(all.Rows))
			}
		}
	}
}

// TestNarrowBackfill checks migrations 0004 and 0006 on a store that
// already holds events: with their tables and views gone and their records
// deleted, as in a store of version 3, migrating again fills the narrow
// tables from the events table (0004 writes every adapter call into
// violation_candidates, as it did, and 0006 moves them out), to the rows
// the views wrote and the same answers as raw.
func TestNarrowBackfill(t *testing.T) {
	st := openStore(t)
	r := runner(t)
	c := ctx(t)
	counts := func() map[string]int64 {
		t.Helper()
		var rows []struct {
			Table string `json:"table"`
			N     int64  `json:"n"`
		}
		q := store.Query{Name: "narrow_counts", SQL: "SELECT 'violation_candidates' AS table, count() AS n FROM " + database + ".violation_candidates" +
			" UNION ALL SELECT 'propagation_events' AS table, count() AS n FROM " + database + ".propagation_events" +
			" UNION ALL SELECT 'adapter_call_candidates' AS table, count() AS n FROM " + database + ".adapter_call_candidates"}
		if err := st.Query(c, q, nil, &rows); err != nil {
			t.Fatal(err)
		}
		m := map[string]int64{}
		for _, row := range rows {
			m[row.Table] = row.N
		}
		return m
	}
	before := counts()
	if before["violation_candidates"] == 0 || before["propagation_events"] == 0 || before["adapter_call_candidates"] == 0 {
		t.Fatalf("the views wrote nothing: %v", before)
	}
	for _, sql := range []string{
		"DROP VIEW " + database + ".violations_mv",
		"DROP VIEW " + database + ".propagation_events_mv",
		"DROP VIEW " + database + ".adapter_call_candidates_mv",
		"DROP TABLE " + database + ".violation_candidates",
		"DROP TABLE " + database + ".propagation_events",
		"DROP TABLE " + database + ".adapter_call_candidates",
		// Version 14 replaces the violation views of versions 4 and 6
		// with one: replayed after them, it leaves one view again.
		"ALTER TABLE " + database + ".schema_migrations DELETE WHERE version IN (4, 6, 14) SETTINGS mutations_sync = 2",
	} {
		if err := st.Exec(c, sql, nil); err != nil {
			t.Fatal(err)
		}
	}
	versions, err := st.Migrate(c)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(versions, []int{4, 6, 14}) {
		t.Fatalf("migrate applied versions %v, want [4 6 14]", versions)
	}
	if after := counts(); !reflect.DeepEqual(after, before) {
		t.Errorf("backfilled rows %v, the views wrote %v", after, before)
	}
	for _, tenant := range []string{fixture.TenantA, fixture.TenantB} {
		f := week(tenant)
		got, err := r.Propagation(c, f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := r.RawPropagation(c, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: propagation after the backfill %s, raw %s", tenant, js(got), js(want))
		}
		v, err := r.Violations(c, f, queries.Page{})
		if err != nil {
			t.Fatal(err)
		}
		rawV, err := r.RawViolations(c, f, queries.Page{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rawV.Rows) == 0 || !reflect.DeepEqual(v, rawV) {
			t.Errorf("%s: violations after the backfill %s, raw %s", tenant, js(v), js(rawV))
		}
	}
}

// TestPropagationToolessNotice covers a notification that names no tool:
// it counts the session's stale calls to every tool after it, and one that
// names a tool only that tool's, from the narrow table as from the events.
func TestPropagationToolessNotice(t *testing.T) {
	st := openStore(t)
	r := runner(t)
	c := ctx(t)
	tenant := fmt.Sprintf("toolless-%d", time.Now().UnixNano())
	base := fixture.Now.Add(-5 * time.Hour)
	at := func(m int) int64 { return base.Add(time.Duration(m) * time.Minute).UnixNano() }
	call := func(id uint64, m int, tool string) otelschema.Event {
		return otelschema.Event{ID: id, Name: otelschema.EventCall, Time: at(m), SessionID: "s1", Service: "billing",
			Tool: tool, RevisionClient: "1", RevisionServer: "2", Outcome: otelschema.OutcomeRejectedStale,
			ClientName: "cursor", ClientVersion: "0.48.0"}
	}
	events := []otelschema.Event{
		call(1, 0, "refund"), // before any notice: counted by neither
		{ID: 2, Name: otelschema.EventListChanged, Time: at(1), SessionID: "s1", Service: "billing"},
		{ID: 3, Name: otelschema.EventListChanged, Time: at(2), SessionID: "s1", Service: "billing", Tool: "refund"},
		call(4, 3, "refund"),
		call(5, 4, "charge"),
		call(6, 5, "charge"),
	}
	if err := st.Write(c, store.Batch{Tenant: tenant, Events: events}); err != nil {
		t.Fatal(err)
	}
	f := queries.Filter{Tenant: tenant, From: base.Add(-time.Hour), To: base.Add(time.Hour)}
	got, err := r.Propagation(c, f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.RawPropagation(c, f)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("propagation %s, raw %s", js(got), js(want))
	}
	after := map[string]uint64{}
	for _, row := range got {
		after[row.Tool] = row.StaleCallsAfterNotice
	}
	if w := map[string]uint64{"": 3, "refund": 1}; !reflect.DeepEqual(after, w) {
		t.Errorf("stale calls after notice by notified tool %v, want %v", after, w)
	}
}
