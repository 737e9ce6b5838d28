package scaleouttest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/internal/testing/loopback"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// TestUpgradeWhileIngesting upgrades a deployment on a ClickHouse server in
// the order docs/upgrade.md gives, with the roles' binaries: the store is
// at version 9, as an older release left it; the new ingesters report
// unready until bin/api -migrate.only has applied the new migrations;
// then, while the simulator sends through both ingesters, two bin/api
// -migrate.only processes at once apply migrations 8 to 12 again, twice
// (their records deleted before each round): the drops and creations of
// the views an insert goes through, and the rollups rebuilt from the
// events. Every acknowledged event must be stored once, and every rollup
// must count each stored call once.
func TestUpgradeWhileIngesting(t *testing.T) {
	clickhousetest.Require(t)
	if testing.Short() {
		t.Skip("runs real processes and a server for a minute")
	}
	ctx := context.Background()
	node, err := clickhousetest.StartServer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop() })
	cfg := clickhouse.DefaultConfig(node.DSN())
	st, err := clickhouse.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := schema.ApplyThrough(ctx, st, cfg.Schema, 9); err != nil {
		t.Fatal(err)
	}
	storeFlags := []string{"-store.dsn=" + node.DSN()}

	// ingest first: unready while the store lacks its migrations.
	var ins []ingester
	for i := range 2 {
		in := ingester{grpc: loopback.Addr(t), health: loopback.Addr(t)}
		in.proc = start(t, fmt.Sprintf("ingest-%d", i+1), "ingest", append(storeFlags,
			"-otlp.grpc.listen="+in.grpc, "-otlp.http.listen="+loopback.Addr(t), "-health.listen="+in.health,
			"-ingest.spool.dir="+filepath.Join(t.TempDir(), "spool"), "-ingest.insert.max-delay=300ms")...)
		ins = append(ins, in)
	}
	time.Sleep(2 * time.Second)
	for _, in := range ins {
		if s := ready("http://" + in.health + "/readyz"); s != http.StatusServiceUnavailable {
			t.Fatalf("%s answers /readyz %d on a store at version 9, want 503", in.name, s)
		}
	}
	migrate := func(name string) *proc {
		return start(t, name, "api", append(storeFlags, "-migrate.only")...)
	}
	wait := func(ps ...*proc) {
		t.Helper()
		for _, p := range ps {
			select {
			case <-p.exited:
			case <-time.After(3 * time.Minute):
				t.Fatalf("%s did not exit", p.name)
			}
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Fatalf("%s exited %d: %s", p.name, code, tail(p.logs.String(), 3000))
			}
		}
	}
	wait(migrate("api-upgrade"))
	for _, in := range ins {
		d := waitStatus(t, in.proc, "http://"+in.health+"/readyz", http.StatusOK, time.Minute)
		t.Logf("%s ready %s after the api migrated", in.name, d.Round(time.Millisecond))
	}

	// The load, and the migrations replayed meanwhile.
	const loadFor = 25 * time.Second
	ledgers := make([]simulate.Ledger, len(ins))
	errs := make([]error, len(ins))
	var load sync.WaitGroup
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	began := time.Now()
	for i := range ins {
		sim := simulate.DefaultConfig()
		sim.Seed = uint64(21 + i)
		sim.Duration, sim.Rate = loadFor, 1500
		// Within recent_calls' two days, so that it holds every call.
		sim.Span = 24 * time.Hour
		sim.Endpoint = ins[i].grpc
		load.Go(func() { ledgers[i], errs[i] = simulate.Run(ctx, sim, logger) })
	}
	const rounds = 2
	for round := range rounds {
		time.Sleep(2 * time.Second)
		sql := "ALTER TABLE " + cfg.Schema.Database + ".schema_migrations DELETE WHERE version >= 8 SETTINGS mutations_sync = 2"
		if err := st.Exec(ctx, sql, nil); err != nil {
			t.Fatal(err)
		}
		from := time.Since(began)
		a, b := migrate(fmt.Sprintf("api-%d-a", round+1)), migrate(fmt.Sprintf("api-%d-b", round+1))
		wait(a, b)
		t.Logf("round %d: two api -migrate.only from %s to %s of the load", round+1, from.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	}
	load.Wait()
	var events int64
	for i, err := range errs {
		if err != nil {
			t.Fatalf("simulator %d: %v", i+1, err)
		}
		l := ledgers[i]
		if x := l.Export; x.Exported != l.Events || x.Rejected != 0 || x.Failed != 0 {
			t.Fatalf("simulator %d: export %+v of %d events: every event must be acknowledged", i+1, x, l.Events)
		}
		events += l.Events
	}

	c := waitUpgraded(t, st, cfg.Schema.Database, events)
	t.Logf("%d events acknowledged; stored %d (distinct ids %d); calls %d in events, %d in recent_calls, %d in calls_1h, %d in calls_1d; retries %d in events, %d in retries_1h",
		events, c.Events, c.Distinct, c.Calls, c.Recent, c.Calls1h, c.Calls1d, c.Retries, c.Retries1h)
	if c.Events != uint64(events) || c.Distinct != c.Events {
		t.Errorf("stored %d events, %d distinct, want %d once each", c.Events, c.Distinct, events)
	}
	if c.Recent != c.Calls || c.Calls1h != c.Calls || c.Calls1d != c.Calls || c.Retries1h != c.Retries {
		t.Errorf("a rollup differs from the events: %+v", c)
	}
}

// upgraded is what the server holds.
type upgraded struct {
	Events    uint64 `json:"events"`
	Distinct  uint64 `json:"distinct_ids"`
	Calls     uint64 `json:"calls"`
	Recent    uint64 `json:"recent"`
	Calls1h   uint64 `json:"calls_1h"`
	Calls1d   uint64 `json:"calls_1d"`
	Retries   uint64 `json:"retries"`
	Retries1h uint64 `json:"retries_1h"`
}

// waitUpgraded waits until the server holds want events, or no more
// arrive for 20 s, and returns what it holds.
func waitUpgraded(t *testing.T, st *clickhouse.Store, db string, want int64) upgraded {
	t.Helper()
	q := store.Query{Name: "upgrade_counts", SQL: `SELECT
		(SELECT count() FROM ` + db + `.events) AS events,
		(SELECT uniqExact(event_id) FROM ` + db + `.events) AS distinct_ids,
		(SELECT count() FROM ` + db + `.events WHERE event_name = 'mcp.drift.call') AS calls,
		(SELECT count() FROM ` + db + `.recent_calls) AS recent,
		(SELECT sum(calls) FROM ` + db + `.calls_1h) AS calls_1h,
		(SELECT sum(calls) FROM ` + db + `.calls_1d) AS calls_1d,
		(SELECT count() FROM ` + db + `.events WHERE event_name = 'mcp.drift.call' AND retry_of != '') AS retries,
		(SELECT sum(retries) FROM ` + db + `.retries_1h) AS retries_1h`}
	var last upgraded
	changed := time.Now()
	for {
		var rows []upgraded
		if err := st.Query(context.Background(), q, nil, &rows); err != nil {
			t.Logf("counting: %v", err)
		} else if len(rows) == 1 {
			if rows[0] != last {
				changed = time.Now()
			}
			last = rows[0]
			if last.Events >= uint64(want) && last.Calls1d == last.Calls {
				return last
			}
		}
		if time.Since(changed) > 20*time.Second {
			return last
		}
		time.Sleep(200 * time.Millisecond)
	}
}
