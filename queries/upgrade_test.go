package queries_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/testing/fixture"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// upgradedFrom is the release whose store TestUpgradeBackfills upgrades:
// version 6, before recent_calls (7), the session sketches (8) and the
// retries by what they followed (10), whose migrations rebuild tables from
// the events, and before the revision sources (11, 12).
const upgradedFrom = 6

// rollupSummaries are, per table that a migration since upgradedFrom
// rebuilds from the events, a query of one row: its row count after
// merging rows of the same key, and a hash of every merged row, sketches
// finalised, over the fixture's tenants (other tests write others). {db} is
// the database, {tenants} the tenants' list.
var rollupSummaries = map[string]string{
	"recent_calls": `SELECT count() AS n, sum(cityHash64(tenant, time, tool, revision_client, revision_server, toString(outcome), adapter_id,
		service, environment, client_name, client_version, toString(privilege), error_code,
		side_effect_started, retry, session, run_id, session_age_s)) AS h
		FROM {db}.recent_calls
		WHERE tenant IN ({tenants})`,
	"calls_1h": callsSummary("calls_1h", "hour"),
	"calls_1d": callsSummary("calls_1d", "day"),
	"usage_1h": usageSummary("usage_1h", "hour"),
	"usage_1d": usageSummary("usage_1d", "day"),
	"rejected_1h": `SELECT count() AS n, sum(cityHash64(*)) AS h FROM (
		SELECT tenant, hour, tool, revision_client, revision_server, outcome, error_code, service, environment,
		       client_name, client_version, sum(calls), sum(side_effects), uniqHLL12Merge(sessions),
		       min(first_seen), max(last_seen)
		FROM {db}.rejected_1h
		WHERE tenant IN ({tenants})
		GROUP BY ALL)`,
	// Events stored before version 10 do not say what a retry followed:
	// compared without retry_after.
	"retries_1h": `SELECT count() AS n, sum(cityHash64(*)) AS h FROM (
		SELECT tenant, hour, tool, service, environment, client_name, client_version, sum(retries)
		FROM {db}.retries_1h
		WHERE tenant IN ({tenants})
		GROUP BY ALL)`,
	"adapted_1h": `SELECT count() AS n, sum(cityHash64(*)) AS h FROM (
		SELECT tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege,
		       sum(calls), sum(normalized), sum(calls_unknown_age), uniqHLL12Merge(sessions),
		       min(first_seen), max(last_seen), max(max_session_age_s)
		FROM {db}.adapted_1h
		WHERE tenant IN ({tenants})
		GROUP BY ALL)`,
}

func callsSummary(table, bucket string) string {
	return `SELECT count() AS n, sum(cityHash64(*)) AS h FROM (
		SELECT tenant, ` + bucket + `, tool, revision_client, revision_server, outcome, adapter_id, service, environment,
		       client_name, client_version, privilege, error_code, sum(calls), sum(side_effects), sum(retries),
		       uniqHLL12Merge(sessions), uniqHLL12Merge(runs),
		       min(first_seen), max(last_seen), max(max_session_age_s)
		FROM {db}.` + table + `
		WHERE tenant IN ({tenants})
		GROUP BY ALL)`
}

func usageSummary(table, bucket string) string {
	return `SELECT count() AS n, sum(cityHash64(*)) AS h FROM (
		SELECT tenant, ` + bucket + `, tool, revision_client, revision_server, service, environment,
		       sum(calls), sum(calls_current), sum(calls_normalized), sum(calls_rejected),
		       sum(calls_rejected_stale), sum(calls_removed), sum(calls_failed), sum(retries),
		       uniqHLL12Merge(sessions), uniqHLL12Merge(runs), uniqExactMerge(clients),
		       min(first_seen), max(last_seen)
		FROM {db}.` + table + `
		WHERE tenant IN ({tenants})
		GROUP BY ALL)`
}

// TestUpgradeBackfills builds, next to the shared store, a database as
// release upgradedFrom left it, loads it with the shared store's events
// through that release's views, and upgrades it. The tables the later
// migrations rebuild from the events must then hold what the views of the
// latest release wrote into the shared store, and every report must answer
// as it does there. The fixture lies in 2099, inside recent_calls' last two
// days.
func TestUpgradeBackfills(t *testing.T) {
	st := openStore(t)
	c := ctx(t)
	old := database + "_v" + fmt.Sprint(upgradedFrom)
	opts := schema.DefaultOptions()
	opts.Database = old
	t.Cleanup(func() { _ = st.Exec(ctx(t), "DROP DATABASE IF EXISTS "+old+" SYNC", nil) })

	versions, err := schema.ApplyThrough(c, st, opts, upgradedFrom)
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != upgradedFrom {
		t.Fatalf("applied %v, want versions 1..%d", versions, upgradedFrom)
	}
	// The events as the ingester would have written them: two inserts per
	// tenant, so that the old views leave partial states to merge.
	for _, tenant := range []string{fixture.TenantA, fixture.TenantB} {
		for half := range 2 {
			sql := "INSERT INTO " + old + ".events_in (* EXCEPT (args_raw, args_normalized)) SELECT * EXCEPT (retry_after, revision_client_source, definition, list_ttl_ms, list_cache_scope, args_raw, args_normalized, client_view, audited) FROM " + database + ".events" +
				" WHERE tenant = {tenant:String} AND cityHash64(event_id) % 2 = {half:UInt8}"
			if err := st.Exec(c, sql, store.Params{}.String("tenant", tenant).Int("half", int64(half))); err != nil {
				t.Fatal(err)
			}
		}
	}
	versions, err = schema.Apply(c, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := versionsFrom(t, opts, 7); !reflect.DeepEqual(versions, want) {
		t.Fatalf("the upgrade applied %v, want %v", versions, want)
	}

	tenants := "'" + fixture.TenantA + "', '" + fixture.TenantB + "'"
	for table, sql := range rollupSummaries {
		summary := func(db string) [2]uint64 {
			t.Helper()
			var rows []struct {
				N uint64 `json:"n"`
				H uint64 `json:"h"`
			}
			q := store.Query{Name: "summary_" + table, SQL: strings.NewReplacer("{db}", db, "{tenants}", tenants).Replace(sql)}
			if err := st.Query(c, q, nil, &rows); err != nil {
				t.Fatal(err)
			}
			return [2]uint64{rows[0].N, rows[0].H}
		}
		want := summary(database)
		if want[0] == 0 {
			t.Errorf("%s: the views of the shared store wrote nothing; the comparison proves nothing", table)
		}
		if got := summary(old); got != want {
			t.Errorf("%s after the upgrade: (rows, hash) %v, the views wrote %v", table, got, want)
		}
	}

	// Neither runner reads the registry: the copied events carry no
	// definition (the old schema has none), so the upgraded store's
	// registry is empty, and the comparison is of the rollups.
	latest, err := queries.New(openStore(t), database, queries.WithClock(func() time.Time { return fixture.Now }))
	if err != nil {
		t.Fatal(err)
	}
	upgraded, err := queries.New(st, old, queries.WithClock(func() time.Time { return fixture.Now }))
	if err != nil {
		t.Fatal(err)
	}
	type report func(*queries.Runner, queries.Filter) (any, error)
	reports := map[string]report{
		"stale usage": func(r *queries.Runner, f queries.Filter) (any, error) { return r.StaleUsage(c, f) },
		"rejections":  func(r *queries.Runner, f queries.Filter) (any, error) { return r.Rejections(c, f) },
		"repairs": func(r *queries.Runner, f queries.Filter) (any, error) {
			rows, err := r.Repairs(c, f)
			if r == latest {
				unstated(rows)
			}
			return rows, err
		},
		"adapter retirement": func(r *queries.Runner, f queries.Filter) (any, error) {
			return r.AdapterRetirement(c, f, retire)
		},
		// The events of a release before 11 state no source: every call
		// with a client revision is declared, from the rollups (whose
		// rows of before 12 hold no listed or inferred call) and from the
		// events alike.
		"revision sources": func(r *queries.Runner, f queries.Filter) (any, error) {
			rows, err := r.RevisionSources(c, f)
			if r == latest {
				declaredBefore12(rows)
			}
			return rows, err
		},
		"revision sources raw": func(r *queries.Runner, f queries.Filter) (any, error) {
			rows, err := r.RawRevisionSources(c, f)
			if r == latest {
				declaredBefore12(rows)
			}
			return rows, err
		},
		"contract errors": func(r *queries.Runner, f queries.Filter) (any, error) { return r.ContractErrors(c, f) },
	}
	answered := 0
	for _, tenant := range []string{fixture.TenantA, fixture.TenantB} {
		// A week, and windows whose edges fall inside hours, so that the
		// plan reads minutes from recent_calls.
		for _, w := range []struct {
			from, to time.Duration
			minutes  bool // the plan must read minutes
		}{
			{-7 * 24 * time.Hour, 0, false},
			{-3*time.Hour - 17*time.Minute, -23 * time.Minute, true},
			{-26*time.Hour - 41*time.Minute, 0, true},
		} {
			f := queries.Filter{Tenant: tenant, From: fixture.Now.Add(w.from), To: fixture.Now.Add(w.to)}
			if p := latest.Plan(f.From, f.To); w.minutes && len(p.Spans[queries.TierMinute]) == 0 {
				t.Fatalf("window %v..%v reads no minutes", f.From, f.To)
			}
			for name, run := range reports {
				want, err := run(latest, f)
				if err != nil {
					t.Fatal(err)
				}
				got, err := run(upgraded, f)
				if err != nil {
					t.Fatal(err)
				}
				if js(want) != "null" && js(want) != "[]" {
					answered++
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s %v..%v: after the upgrade %s, latest store %s", name, tenant, f.From, f.To, js(got), js(want))
				}
			}
		}
	}
	if answered == 0 {
		t.Error("no report had rows: the comparison proves nothing")
	}
}

// declaredBefore12 makes revision-sources rows what a store answers for
// calls stored before migration 12, whose rollup rows hold no listed or
// inferred call: those calls count as declared.
func declaredBefore12(rows []apiv1.RevisionSourceRow) {
	for i := range rows {
		rows[i].Declared += rows[i].Listed + rows[i].Inferred
		rows[i].Listed, rows[i].Inferred = 0, 0
	}
}

// TestUpgradeRevisionSources upgrades a store as version 11 left it, whose
// events state their revision sources while its rollups, before migration
// 12, keep none: the rollup-served report counts those calls as declared
// (migration 12 says why), the raw one reads the sources from the events,
// and the calls stored after the upgrade count by their source.
func TestUpgradeRevisionSources(t *testing.T) {
	st := openStore(t)
	c := ctx(t)
	old := database + "_v11"
	opts := schema.DefaultOptions()
	opts.Database = old
	t.Cleanup(func() { _ = st.Exec(ctx(t), "DROP DATABASE IF EXISTS "+old+" SYNC", nil) })
	if _, err := schema.ApplyThrough(c, st, opts, 11); err != nil {
		t.Fatal(err)
	}
	// Tenant A's events, stored as tenant as (the events' own tenant
	// column qualified: the replaced one is an alias WHERE would see).
	// except are the columns of events_in that the copy leaves out: the
	// arguments (the source's events hold them from version 15; the
	// reports compared here do not read them), and from version 13 the
	// advertised definition, which the copy never reads (events holds it
	// empty), and from version 16 the list's cache hint likewise, and from
	// version 19 the client view (none in the fixture).
	except := "args_raw, args_normalized"
	copyTenant := func(as string) {
		t.Helper()
		sql := "INSERT INTO " + old + ".events_in (* EXCEPT (" + except + ")) SELECT * EXCEPT (definition, list_ttl_ms, list_cache_scope, args_raw, args_normalized, client_view, audited) REPLACE ({as:String} AS tenant) FROM " + database + ".events AS e WHERE e.tenant = {tenant:String}"
		if err := st.Exec(c, sql, store.Params{}.String("tenant", fixture.TenantA).String("as", as)); err != nil {
			t.Fatal(err)
		}
	}
	copyTenant(fixture.TenantA)
	want := versionsFrom(t, opts, 12)
	if versions, err := schema.Apply(c, st, opts); err != nil || !reflect.DeepEqual(versions, want) {
		t.Fatalf("the upgrade applied %v (%v), want %v", versions, err, want)
	}
	// The same events after the upgrade, through the new views.
	after := fixture.TenantA + "-upgraded"
	except += ", definition, list_ttl_ms, list_cache_scope, client_view"
	copyTenant(after)

	latest := runner(t)
	upgraded, err := queries.New(st, old, queries.WithClock(func() time.Time { return fixture.Now }))
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []string{fixture.TenantA, after} {
		// A week, and a window whose edges the minutely tier serves.
		for _, f := range []queries.Filter{week(tenant), {Tenant: tenant, From: fixture.Now.Add(-26*time.Hour - 41*time.Minute), To: fixture.Now}} {
			a := f
			a.Tenant = fixture.TenantA
			want, err := latest.RevisionSources(c, a)
			if err != nil {
				t.Fatal(err)
			}
			wantRaw, err := latest.RawRevisionSources(c, a)
			if err != nil {
				t.Fatal(err)
			}
			if tenant == fixture.TenantA {
				declaredBefore12(want)
			}
			got, err := upgraded.RevisionSources(c, f)
			if err != nil {
				t.Fatal(err)
			}
			gotRaw, err := upgraded.RawRevisionSources(c, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("%s %v..%v from the rollups: after the upgrade %s, want %s", tenant, f.From, f.To, js(got), js(want))
			}
			if !reflect.DeepEqual(gotRaw, wantRaw) {
				t.Errorf("%s %v..%v from the events: after the upgrade %s, want %s", tenant, f.From, f.To, js(gotRaw), js(wantRaw))
			}
		}
	}
}

// unstated makes repairs rows what a store holds when the retries did not
// say what they followed, as the events of releases before version 10: every
// retry call is one after "other", and each kind's amplification is 0 where
// there are rejections of the kind.
func unstated(rows []apiv1.RepairRow) {
	zero := func(rejections uint64) *float64 {
		if rejections == 0 {
			return nil
		}
		return new(float64)
	}
	for i := range rows {
		r := &rows[i]
		r.RetriesAfterStale, r.RetriesAfterIncompatible, r.RetriesAfterInvalid, r.RetriesAfterRemoved = 0, 0, 0, 0
		r.RetriesAfterOther = r.RetryCalls
		r.AmplificationStale, r.AmplificationIncompatible = zero(r.StaleRejections), zero(r.IncompatibleRejections)
		r.AmplificationInvalid, r.AmplificationRemoved = zero(r.InvalidRejections), zero(r.RemovedCalls)
	}
}

// versionsFrom returns the versions of the embedded migrations from first
// to the last, the ones an upgrade from version first-1 applies.
func versionsFrom(t *testing.T, opts schema.Options, first int) []int {
	t.Helper()
	ms, err := schema.Migrations(opts)
	if err != nil {
		t.Fatal(err)
	}
	var vs []int
	for _, m := range ms {
		if m.Version >= first {
			vs = append(vs, m.Version)
		}
	}
	return vs
}

// upgradeHalfway builds, beside the shared store, a database at version
// before; stores in it half of tenant A's events (by event id), through
// that version's views; upgrades it to the latest version and stores the
// other half through the new views. cols names the columns copied from the
// shared store's events: those the version before knows. It returns the
// database's name; the database is dropped when the test ends.
// columnsBefore19 are the columns of an insert into events_in before
// version 19 added client_view.
func columnsBefore19() string {
	return strings.Replace(strings.Trim(store.InsertColumns, "()"), ", client_view", "", 1)
}

func upgradeHalfway(t *testing.T, before int, cols string) string {
	t.Helper()
	st := openStore(t)
	c := ctx(t)
	old := fmt.Sprintf("%s_v%d", database, before)
	opts := schema.DefaultOptions()
	opts.Database = old
	t.Cleanup(func() { _ = st.Exec(ctx(t), "DROP DATABASE IF EXISTS "+old+" SYNC", nil) })
	if _, err := schema.ApplyThrough(c, st, opts, before); err != nil {
		t.Fatal(err)
	}
	copyHalf := func(half int) {
		t.Helper()
		sql := "INSERT INTO " + old + ".events_in (" + cols + ") SELECT " + cols + " FROM " + database + ".events" +
			" WHERE tenant = {tenant:String} AND cityHash64(event_id) % 2 = {half:UInt8}"
		if err := st.Exec(c, sql, store.Params{}.String("tenant", fixture.TenantA).Int("half", int64(half))); err != nil {
			t.Fatal(err)
		}
	}
	copyHalf(0)
	if versions, err := schema.Apply(c, st, opts); err != nil || !reflect.DeepEqual(versions, versionsFrom(t, opts, before+1)) {
		t.Fatalf("the upgrade applied %v (%v), want %v", versions, err, versionsFrom(t, opts, before+1))
	}
	copyHalf(1)
	return old
}

// TestUpgradeAudit upgrades a store as version 14 left it, with half of a
// tenant's events stored before migration 15 (their calls audited in
// audit_calls) and half after it (audited in events): the audit, its pages
// and its series read both, each call once, as a store that was always at
// the latest version does.
func TestUpgradeAudit(t *testing.T) {
	st := openStore(t)
	c := ctx(t)
	// The events as the ingester writes them, named column by column: the
	// events table orders its columns otherwise than events_in.
	// Less the cache hint's columns, which version 16 adds.
	cols := strings.Replace(columnsBefore19(), ", list_ttl_ms, list_cache_scope", "", 1)
	if strings.Contains(cols, "list_ttl_ms") {
		t.Fatalf("the insert's columns %s still name list_ttl_ms", cols)
	}
	old := upgradeHalfway(t, 14, cols)

	count := func(sql string) int {
		t.Helper()
		var rows []struct {
			N int `json:"n"`
		}
		if err := st.Query(c, store.Query{Name: "upgrade_audit_count", SQL: fmt.Sprintf(sql, old)}, store.Params{}.String("tenant", fixture.TenantA), &rows); err != nil {
			t.Fatal(err)
		}
		return rows[0].N
	}
	before := count("SELECT toInt32(count()) AS n FROM %s.audit_calls WHERE tenant = {tenant:String}")
	after := count("SELECT toInt32(count()) AS n FROM %s.events WHERE tenant = {tenant:String} AND audited")
	unaudited := count("SELECT toInt32(count()) AS n FROM %s.events WHERE tenant = {tenant:String} AND event_name = 'mcp.drift.call' AND NOT audited")
	if before == 0 || after == 0 || unaudited != before {
		t.Fatalf("audit_calls holds %d calls, events %d audited and %d not: want both halves non-empty, the first half's calls unaudited in events", before, after, unaudited)
	}

	latest := runner(t)
	upgraded, err := queries.New(st, old, queries.WithClock(func() time.Time { return fixture.Now }))
	if err != nil {
		t.Fatal(err)
	}
	a := queries.AuditFilter{Filter: week(fixture.TenantA)}
	want, err := latest.Audit(c, a, queries.Page{Limit: queries.MaxPageLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Rows) == 0 || want.Next == "" {
		t.Fatalf("the audit of the latest store has %d rows and next %q: the test needs more than a page", len(want.Rows), want.Next)
	}
	got, err := upgraded.Audit(c, a, queries.Page{Limit: queries.MaxPageLimit})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the first page after the upgrade differs: %d rows, next %q; want %d rows, next %q", len(got.Rows), got.Next, len(want.Rows), want.Next)
	}
	// Every page, across the two sources: each call once, in order.
	walk := func(r *queries.Runner) []apiv1.AuditRow {
		t.Helper()
		var walked []apiv1.AuditRow
		page := queries.Page{Limit: 333}
		for n := 0; ; n++ {
			if n > 1000 {
				t.Fatal("pagination does not end")
			}
			p, err := r.Audit(c, a, page)
			if err != nil {
				t.Fatal(err)
			}
			walked = append(walked, p.Rows...)
			if p.Next == "" {
				return walked
			}
			page.After = p.Next
		}
	}
	walked, wantWalked := walk(upgraded), walk(latest)
	if len(walked) <= queries.MaxPageLimit || !reflect.DeepEqual(walked, wantWalked) {
		t.Errorf("the audit's pages after the upgrade hold %d calls, want the %d of the latest store's, in the same order (%d calls in audit_calls, %d audited in events, in all windows)", len(walked), len(wantWalked), before, after)
	}
	for _, f := range []queries.AuditFilter{{Filter: a.Filter, RunID: "legacy-run-1"}, {Filter: a.Filter, SessionID: "cd09-st-4"}} {
		want, err := latest.Audit(c, f, queries.Page{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := upgraded.Audit(c, f, queries.Page{})
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Rows) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("audit %+v after the upgrade: %s\nwant %s", f, js(got), js(want))
		}
	}
	wantSeries, err := latest.AuditSeries(c, a, byDay("client", "outcome"))
	if err != nil {
		t.Fatal(err)
	}
	gotSeries, err := upgraded.AuditSeries(c, a, byDay("client", "outcome"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotSeries, wantSeries) {
		t.Errorf("the audit series after the upgrade: %s\nwant %s", js(gotSeries), js(wantSeries))
	}
}

// TestUpgradeListCache upgrades a store as version 15 left it, holding
// tenant A's events (their advertisements without a cache hint): the
// registry and the propagation report read the same as the latest store's
// (no hint anywhere). A revision advertised again after the upgrade with a
// hint merges with its rows from before: one row, its advertisements
// counted once more, the hint its only one.
func TestUpgradeListCache(t *testing.T) {
	st := openStore(t)
	c := ctx(t)
	old := database + "_v15"
	opts := schema.DefaultOptions()
	opts.Database = old
	t.Cleanup(func() { _ = st.Exec(ctx(t), "DROP DATABASE IF EXISTS "+old+" SYNC", nil) })
	if _, err := schema.ApplyThrough(c, st, opts, 15); err != nil {
		t.Fatal(err)
	}
	cols := strings.Replace(columnsBefore19(), ", list_ttl_ms, list_cache_scope", "", 1)
	sql := "INSERT INTO " + old + ".events_in (" + cols + ") SELECT " + cols + " FROM " + database + ".events WHERE tenant = {tenant:String}"
	if err := st.Exec(c, sql, store.Params{}.String("tenant", fixture.TenantA)); err != nil {
		t.Fatal(err)
	}
	if versions, err := schema.Apply(c, st, opts); err != nil || !reflect.DeepEqual(versions, versionsFrom(t, opts, 16)) {
		t.Fatalf("the upgrade applied %v (%v), want %v", versions, err, versionsFrom(t, opts, 16))
	}

	latest := runner(t)
	upgraded, err := queries.New(st, old, queries.WithClock(func() time.Time { return fixture.Now }))
	if err != nil {
		t.Fatal(err)
	}
	reg := queries.RegistryFilter{Tenant: fixture.TenantA}
	wantRevs, err := latest.ToolRevisions(c, reg)
	if err != nil {
		t.Fatal(err)
	}
	gotRevs, err := upgraded.ToolRevisions(c, reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(wantRevs) == 0 || !reflect.DeepEqual(gotRevs, wantRevs) {
		t.Fatalf("registry after the upgrade %s\nwant %s", js(gotRevs), js(wantRevs))
	}
	for _, row := range gotRevs {
		if row.ListTTLMs != 0 || row.ListCacheScope != "" {
			t.Errorf("%s %s: hint %d %q from rows stored without one", row.Tool, row.Revision, row.ListTTLMs, row.ListCacheScope)
		}
	}
	wantProp, err := latest.Propagation(c, week(fixture.TenantA))
	if err != nil {
		t.Fatal(err)
	}
	gotProp, err := upgraded.Propagation(c, week(fixture.TenantA))
	if err != nil {
		t.Fatal(err)
	}
	if len(wantProp) == 0 || !reflect.DeepEqual(gotProp, wantProp) {
		t.Errorf("propagation after the upgrade %s\nwant %s", js(gotProp), js(wantProp))
	}

	// The first revision advertised again, with a hint, after the upgrade.
	first := gotRevs[0]
	ad := "INSERT INTO " + old + ".events_in (tenant, event_id, event_name, time, tool, service, environment, revision_server, definition, list_ttl_ms, list_cache_scope)" +
		" VALUES ({tenant:String}, 1, 'mcp.drift.advertised', {at:DateTime64(9, 'UTC')}, {tool:String}, {service:String}, {environment:String}, {rev:String}, {def:String}, 86400000, 'public')"
	p := store.Params{}.String("tenant", fixture.TenantA).Time("at", fixture.Now.Add(-time.Minute)).String("tool", first.Tool).
		String("service", first.Service).String("environment", first.Environment).String("rev", first.Revision).String("def", first.Definition)
	if err := st.Exec(c, ad, p); err != nil {
		t.Fatal(err)
	}
	after, err := upgraded.ToolRevisions(c, reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(gotRevs) {
		t.Fatalf("%d registry rows after a new advertisement of %s %s, want %d", len(after), first.Tool, first.Revision, len(gotRevs))
	}
	for i, row := range after {
		want := gotRevs[i]
		if i == 0 {
			want.ListTTLMs, want.ListCacheScope = 86400000, "public"
			want.Advertisements++
			if at := fixture.Now.Add(-time.Minute); at.After(want.LastAdvertised) {
				if !row.LastAdvertised.Equal(at) {
					t.Errorf("last advertised %s, want %s", row.LastAdvertised, at)
				}
				want.LastAdvertised = row.LastAdvertised
			}
		}
		if !reflect.DeepEqual(row, want) {
			t.Errorf("registry row %d after the hinted advertisement %s\nwant %s", i, js(row), js(want))
		}
	}
}

// TestUpgradeViolationFacts upgrades a store as version 16 left it, with
// half of tenant A's events stored before migration 17 (their violations
// with the detail the views wrote) and half after it (with the facts, the
// detail written in Go): every page of the violations report, and its raw
// twin, read the same as a store that was always at the latest version.
func TestUpgradeViolationFacts(t *testing.T) {
	st := openStore(t)
	c := ctx(t)
	old := upgradeHalfway(t, 16, columnsBefore19())

	// Both halves hold violations: with a stored detail, and without.
	for _, table := range []string{"violation_candidates", "adapter_call_candidates"} {
		var rows []struct {
			Stored  int `json:"stored"`
			Written int `json:"written"`
		}
		q := store.Query{Name: "upgrade_violation_details", SQL: "SELECT toInt32(countIf(detail != '')) AS stored, toInt32(countIf(detail = '')) AS written FROM " +
			old + "." + table + " WHERE tenant = {tenant:String}"}
		if err := st.Query(c, q, store.Params{}.String("tenant", fixture.TenantA), &rows); err != nil {
			t.Fatal(err)
		}
		if rows[0].Stored == 0 || rows[0].Written == 0 {
			t.Fatalf("%s holds %d rows with a stored detail and %d without: want both halves", table, rows[0].Stored, rows[0].Written)
		}
	}

	latest := runner(t)
	upgraded, err := queries.New(st, old, queries.WithClock(func() time.Time { return fixture.Now }))
	if err != nil {
		t.Fatal(err)
	}
	f := queries.Filter{Tenant: fixture.TenantA, From: fixture.Now.Add(-30 * 24 * time.Hour), To: fixture.Now.Add(24 * time.Hour)}
	for _, limit := range []int{2, queries.MaxPageLimit} {
		want := walkViolations(t, func(p queries.Page) (queries.ViolationPage, error) { return latest.Violations(c, f, p) }, limit)
		got := walkViolations(t, func(p queries.Page) (queries.ViolationPage, error) { return upgraded.Violations(c, f, p) }, limit)
		raw := walkViolations(t, func(p queries.Page) (queries.ViolationPage, error) { return upgraded.RawViolations(c, f, p) }, limit)
		kinds := map[string]bool{}
		for _, p := range want {
			for _, v := range p.Rows {
				if v.Detail == "" {
					t.Errorf("violation %s of event %d has no detail", v.Kind, v.EventID)
				}
				kinds[v.Kind] = true
			}
		}
		if len(kinds) != 4 {
			t.Errorf("the latest store's violations are of kinds %v: the test needs all four", kinds)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("violations by pages of %d after the upgrade:\n%s\nwant %s", limit, js(got), js(want))
		}
		if !reflect.DeepEqual(raw, want) {
			t.Errorf("raw violations by pages of %d after the upgrade:\n%s\nwant %s", limit, js(raw), js(want))
		}
	}
}

// TestUpgradeAdaptedCascade upgrades a store as version 17 left it, with
// half of tenant A's events stored before migration 18 (adapted_1h written
// by its view on the events) and half after it (written through calls_1h):
// adapted_1h, merged, holds what the latest store's does, and the adapter
// retirement report, its series and its raw twin read the same as there.
func TestUpgradeAdaptedCascade(t *testing.T) {
	st := openStore(t)
	c := ctx(t)
	old := upgradeHalfway(t, 17, columnsBefore19())

	// The unknown ages reach adapted_1h by both paths: calls_1h counts
	// them for the half stored after the upgrade only.
	type counts struct {
		Calls   uint64 `json:"calls"`
		Unknown uint64 `json:"unknown"`
	}
	count := func(db, table string) counts {
		t.Helper()
		var rows []counts
		q := store.Query{Name: "upgrade_unknown_age", SQL: "SELECT sum(calls) AS calls, sum(calls_unknown_age) AS unknown FROM " +
			db + "." + table + " WHERE tenant = {tenant:String} AND adapter_id != ''"}
		if err := st.Query(c, q, store.Params{}.String("tenant", fixture.TenantA), &rows); err != nil {
			t.Fatal(err)
		}
		return rows[0]
	}
	want, got, viaCalls := count(database, "adapted_1h"), count(old, "adapted_1h"), count(old, "calls_1h")
	if want.Calls == 0 || want.Unknown == 0 {
		t.Fatalf("the latest store's adapted_1h holds %d calls, %d of unknown age: the test needs both", want.Calls, want.Unknown)
	}
	if got != want {
		t.Errorf("adapted_1h after the upgrade holds %+v, want %+v", got, want)
	}
	if viaCalls.Unknown == 0 || viaCalls.Unknown >= want.Unknown {
		t.Errorf("calls_1h counts %d adapted calls of unknown age, want some of the %d: the half stored after the upgrade", viaCalls.Unknown, want.Unknown)
	}
	tenants := "'" + fixture.TenantA + "'"
	summary := func(db string) [2]uint64 {
		t.Helper()
		var rows []struct {
			N uint64 `json:"n"`
			H uint64 `json:"h"`
		}
		sql := strings.NewReplacer("{db}", db, "{tenants}", tenants).Replace(rollupSummaries["adapted_1h"])
		if err := st.Query(c, store.Query{Name: "upgrade_adapted_summary", SQL: sql}, nil, &rows); err != nil {
			t.Fatal(err)
		}
		return [2]uint64{rows[0].N, rows[0].H}
	}
	if g, w := summary(old), summary(database); g != w {
		t.Errorf("adapted_1h after the upgrade: %d rows, hash %d; want %d rows, hash %d", g[0], g[1], w[0], w[1])
	}

	latest := runner(t)
	upgraded, err := queries.New(st, old, queries.WithClock(func() time.Time { return fixture.Now }), queries.WithChanges(registry.ChangeOf), queries.WithSameContract(registry.SameContract))
	if err != nil {
		t.Fatal(err)
	}
	month := queries.Filter{Tenant: fixture.TenantA, From: fixture.Now.Add(-30 * 24 * time.Hour), To: fixture.Now}
	for _, f := range []queries.Filter{week(fixture.TenantA), month} {
		wantRows, err := latest.AdapterRetirement(c, f, retire)
		if err != nil {
			t.Fatal(err)
		}
		if len(wantRows) == 0 {
			t.Fatalf("no adapter in the latest store's retirement report from %s: the test needs some", f.From)
		}
		gotRows, err := upgraded.AdapterRetirement(c, f, retire)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotRows, wantRows) {
			t.Errorf("adapter retirement from %s after the upgrade %s\nwant %s", f.From, js(gotRows), js(wantRows))
		}
		rawRows, err := upgraded.RawAdapterRetirement(c, f, retire)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rawRows, wantRows) {
			t.Errorf("raw adapter retirement from %s after the upgrade %s\nwant %s", f.From, js(rawRows), js(wantRows))
		}
		s := queries.SeriesOptions{Step: 24 * time.Hour, GroupBy: []string{"adapter"}}
		wantSeries, err := latest.AdapterRetirementSeries(c, f, s)
		if err != nil {
			t.Fatal(err)
		}
		gotSeries, err := upgraded.AdapterRetirementSeries(c, f, s)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotSeries, wantSeries) {
			t.Errorf("adapter retirement series from %s after the upgrade %s\nwant %s", f.From, js(gotSeries), js(wantSeries))
		}
	}
}
