package queries_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/testing/fixture"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// TestDailyRetention checks that the daily rollups outlive the raw events
// when -retention.daily.days says so. Three databases beside the shared
// store get the fixture's tenant A moved about 60 days into the past of
// the real clock: "full" keeps everything 400 days, "daily" keeps the
// events 30 days and the daily rollups 400, "plain" keeps everything 30
// days. Once the TTLs have run, only "full" holds events; the stale-usage
// and tools reports over those days (whole days, read from the daily
// tier) answer in "daily" as in "full", where they equal the same reports
// from the raw events, and are empty in "plain".
func TestDailyRetention(t *testing.T) {
	st := openStore(t)
	c := ctx(t)
	now := time.Now().UTC().Truncate(24 * time.Hour)
	shift := fixture.Now.Truncate(24 * time.Hour).Sub(now.Add(-60 * 24 * time.Hour))
	window := queries.Filter{Tenant: fixture.TenantA, From: now.Add(-68 * 24 * time.Hour), To: now.Add(-59 * 24 * time.Hour)}

	type reports struct {
		Stale []apiv1.StaleUsageRow
		Tools []apiv1.ToolRow
	}
	type db struct {
		name   string
		runner *queries.Runner
	}
	open := func(suffix string, retention, daily int) db {
		opts := schema.DefaultOptions()
		opts.Database = database + "_" + suffix
		opts.RetentionDays, opts.AuditRetentionDays, opts.DailyRetentionDays = retention, retention, daily
		t.Cleanup(func() { _ = st.Exec(ctx(t), "DROP DATABASE IF EXISTS "+opts.Database+" SYNC", nil) })
		if _, err := schema.Apply(c, st, opts); err != nil {
			t.Fatal(err)
		}
		cols := strings.Trim(store.InsertColumns, "()")
		sel := strings.Replace(cols, "time,", "time - toIntervalSecond({shift:Int64}) AS time,", 1)
		if sel == cols {
			t.Fatalf("no time column in %s", cols)
		}
		sql := "INSERT INTO " + opts.Database + ".events_in (" + cols + ") SELECT " + sel + " FROM " + database + ".events WHERE tenant = {tenant:String}"
		if err := st.Exec(c, sql, store.Params{}.String("tenant", fixture.TenantA).Int("shift", int64(shift/time.Second))); err != nil {
			t.Fatal(err)
		}
		// Rows already expired are dropped as they are written; the
		// others when the TTL is materialised.
		for _, table := range []string{"events", "recent_calls", "calls_1h", "calls_1d", "usage_1h", "usage_1d"} {
			if err := st.Exec(c, fmt.Sprintf("ALTER TABLE %s.%s MATERIALIZE TTL SETTINGS mutations_sync = 2", opts.Database, table), nil); err != nil {
				t.Fatal(err)
			}
		}
		r, err := queries.New(st, opts.Database, queries.WithRetentionDays(retention), queries.WithClock(func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		return db{opts.Database, r}
	}
	read := func(d db, raw bool) reports {
		t.Helper()
		staleUsage := d.runner.StaleUsage
		if raw {
			staleUsage = d.runner.RawStaleUsage
		}
		stale, err := staleUsage(c, window)
		if err != nil {
			t.Fatal(err)
		}
		tools, err := d.runner.Tools(c, window)
		if err != nil {
			t.Fatal(err)
		}
		return reports{stale, tools}
	}
	events := func(d db) int {
		t.Helper()
		var rows []struct {
			N int `json:"n"`
		}
		q := store.Query{Name: "daily_retention_events", SQL: "SELECT toInt32(count()) AS n FROM " + d.name + ".events WHERE tenant = {tenant:String}"}
		if err := st.Query(c, q, store.Params{}.String("tenant", fixture.TenantA), &rows); err != nil {
			t.Fatal(err)
		}
		return rows[0].N
	}

	full, daily, plain := open("retention_full", 400, 0), open("retention_daily", 30, 400), open("retention_plain", 30, 0)
	if n := events(full); n == 0 {
		t.Fatal("no events kept with a retention of 400 days")
	}
	for _, d := range []db{daily, plain} {
		if n := events(d); n != 0 {
			t.Fatalf("%s: %d events left after their 30 days", d.name, n)
		}
	}
	want := read(full, false)
	if len(want.Stale) == 0 || len(want.Tools) == 0 {
		t.Fatalf("nothing to compare: %d stale-usage rows, %d tools rows", len(want.Stale), len(want.Tools))
	}
	if raw := read(full, true); !reflect.DeepEqual(raw.Stale, want.Stale) {
		t.Fatalf("full: stale usage from the rollups\n%s\nfrom the raw events %s", js(want.Stale), js(raw.Stale))
	}
	if got := read(daily, false); !reflect.DeepEqual(got, want) {
		t.Errorf("with a daily retention of 400 days, after the events expired:\n%s\nwant %s", js(got), js(want))
	}
	if got := read(plain, false); len(got.Stale) != 0 || len(got.Tools) != 0 {
		t.Errorf("with the daily tier kept 30 days, the reports still hold %d stale-usage and %d tools rows", len(got.Stale), len(got.Tools))
	}
}
