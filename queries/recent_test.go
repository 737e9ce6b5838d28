package queries_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/fixture"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
)

// TestRecentCallsBackfill puts the store back as version 6 left it as far
// as recent_calls goes (no table, no view, no record of migration 7),
// migrates again, and expects the copy from the events to hold exactly what
// the view wrote, and the reports that read their edge minutes from it to
// equal their raw twins. The fixture lies in 2099, inside the backfill's
// last two days.
func TestRecentCallsBackfill(t *testing.T) {
	st := openStore(t)
	r := runner(t)
	c := ctx(t)
	summary := func() [2]uint64 {
		t.Helper()
		var rows []struct {
			N uint64 `json:"n"`
			H uint64 `json:"h"`
		}
		q := store.Query{Name: "recent_summary", SQL: `SELECT count() AS n,
			sum(cityHash64(tenant, time, tool, revision_client, revision_server, toString(outcome), adapter_id,
			    service, environment, client_name, client_version, toString(privilege), error_code,
			    side_effect_started, retry, session, run_id, session_age_s)) AS h
			FROM ` + database + `.recent_calls`}
		if err := st.Query(c, q, nil, &rows); err != nil {
			t.Fatal(err)
		}
		return [2]uint64{rows[0].N, rows[0].H}
	}
	before := summary()
	if before[0] == 0 {
		t.Fatal("the view wrote nothing to recent_calls")
	}
	for _, sql := range []string{
		"DROP VIEW " + database + ".recent_calls_mv",
		"DROP TABLE " + database + ".recent_calls",
		"ALTER TABLE " + database + ".schema_migrations DELETE WHERE version = 7 SETTINGS mutations_sync = 2",
	} {
		if err := st.Exec(c, sql, nil); err != nil {
			t.Fatal(err)
		}
	}
	versions, err := st.Migrate(c)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(versions, []int{7}) {
		t.Fatalf("migrate applied versions %v, want [7]", versions)
	}
	if after := summary(); after != before {
		t.Errorf("backfilled recent_calls (rows, hash) %v, the view wrote %v", after, before)
	}
	// Windows whose edges fall inside hours, so that the plan reads
	// minutes from recent_calls.
	answered := 0
	for _, tenant := range []string{fixture.TenantA, fixture.TenantB} {
		for _, w := range []struct{ from, to time.Duration }{
			{-3*time.Hour - 17*time.Minute, -23 * time.Minute},
			{-26*time.Hour - 41*time.Minute, 0},
		} {
			f := queries.Filter{Tenant: tenant, From: fixture.Now.Add(w.from), To: fixture.Now.Add(w.to)}
			if p := r.Plan(f.From, f.To); len(p.Spans[queries.TierMinute]) == 0 {
				t.Fatalf("window %v..%v reads no minutes", f.From, f.To)
			}
			got, err := r.StaleUsage(c, f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := r.RawStaleUsage(c, f)
			if err != nil {
				t.Fatal(err)
			}
			answered += len(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %v..%v: stale usage after the backfill %s, raw %s", tenant, f.From, f.To, js(got), js(want))
			}
		}
	}
	if answered == 0 {
		t.Error("no window had calls: the comparison proves nothing")
	}
}
