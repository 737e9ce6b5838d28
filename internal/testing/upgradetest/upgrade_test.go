// Package upgradetest checks that the schema can be upgraded while ingest
// runs: writers store batches as ingesters do (a batch is acknowledged once
// Write returns nil, and retried under its token until then), while two
// migrators, as two api replicas starting at once, apply migrations that
// drop and create the views an insert goes through and rebuild rollups
// from the events. Every acknowledged event must be stored once, in every
// table, and every rollup must count each stored call once.
package upgradetest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

func TestMain(m *testing.M) {
	code := m.Run()
	clickhousetest.StopAll()
	os.Exit(code)
}

const (
	tenant = "upgrade"
	// writers are the ingesters under load; batchEvents the events of
	// each of their batches, every retryEvery-th a retry.
	writers     = 3
	batchEvents = 40
	retryEvery  = 4
	// rounds is how many times the migrations from replayFrom on are
	// applied again while the writers run: 8 rebuilds the call rollups
	// from the events, 10 drops and creates events_mv and recent_calls_mv
	// and rebuilds retries_1h, 12 alters the call views, 18 drops and
	// creates calls_1h_mv and adapted_1h_mv, which then reads calls_1h.
	rounds     = 3
	replayFrom = 8
	// startAt is the version the store is at when the writers start: the
	// first round is the upgrade from it.
	startAt = 9
)

// TestMigrateUnderLoad runs, on the ClickHouse server and on the cluster,
// the upgrade from version startAt and then rounds replays of the
// migrations from replayFrom, each by two migrators at once, while writers
// insert; then it compares what was acknowledged with every table.
func TestMigrateUnderLoad(t *testing.T) {
	for _, b := range clickhousetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) { migrateUnderLoad(t, b) })
	}
}

// load is what the writers acknowledged.
type load struct {
	calls, retries atomic.Int64
	adapted        atomic.Int64 // calls through an adapter, none with a session age
	batches        atomic.Int64
	failures       atomic.Int64 // Write errors, each followed by a retry
}

func migrateUnderLoad(t *testing.T, b *clickhousetest.Backend) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	st := b.Open(t)
	db := st.Schema.Database
	opts := st.Schema
	if _, err := b.MigrateThrough(ctx, opts, startAt); err != nil {
		t.Fatal(err)
	}

	// The writers: one store each, as separate ingest processes.
	var l load
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		ws, err := clickhouse.Open(b.Config(db))
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			write(ctx, t, ws, w, stop, &l)
		}()
	}

	// The migrators: two api replicas starting at once, each round.
	var applied [2]int
	start := time.Now()
	for round := range rounds {
		if round > 0 {
			if err := b.ForgetMigrations(ctx, db, replayFrom); err != nil {
				t.Fatal(err)
			}
		}
		var mwg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			mwg.Add(1)
			go func() {
				defer mwg.Done()
				versions, err := b.Migrate(ctx, opts)
				applied[i] += len(versions)
				errs[i] = err
			}()
		}
		mwg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, migrator %d: %v", round+1, i+1, err)
			}
		}
	}
	migrating := time.Since(start)
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}
	// Every round applies its migrations once between the two migrators.
	ms, err := schema.Migrations(opts)
	if err != nil {
		t.Fatal(err)
	}
	last := ms[len(ms)-1].Version
	want := (last - startAt) + (rounds-1)*(last-replayFrom+1)
	t.Logf("%s: %d rounds in %v, migrations applied by each migrator %v (want %d in all); %d batches, %d calls (%d retries) acknowledged, %d failed writes retried",
		b.Name, rounds, migrating.Round(time.Millisecond), applied, want, l.batches.Load(), l.calls.Load(), l.retries.Load(), l.failures.Load())
	if applied[0]+applied[1] != want {
		t.Errorf("the two migrators applied %d migrations in all, want %d: a migration ran twice", applied[0]+applied[1], want)
	}
	if l.batches.Load() < int64(rounds) {
		t.Errorf("only %d batches acknowledged while migrating: no load", l.batches.Load())
	}

	calls, retries := l.calls.Load(), l.retries.Load()
	checks := []struct {
		table, sql string
		want       int64
	}{
		{"events", "SELECT count() AS n FROM %s.events WHERE tenant = {tenant:String}", calls},
		{"events (distinct ids)", "SELECT uniqExact(event_id) AS n FROM %s.events WHERE tenant = {tenant:String}", calls},
		// Each call audited once: in audit_calls before version 15, in the
		// events (audited) from it on.
		{"audited calls", "SELECT toInt64(count()) AS n FROM (SELECT event_id FROM %[1]s.audit_calls WHERE tenant = {tenant:String} UNION ALL SELECT event_id FROM %[1]s.events WHERE tenant = {tenant:String} AND audited)", calls},
		{"audited calls (distinct ids)", "SELECT toInt64(uniqExact(event_id)) AS n FROM (SELECT event_id FROM %[1]s.audit_calls WHERE tenant = {tenant:String} UNION ALL SELECT event_id FROM %[1]s.events WHERE tenant = {tenant:String} AND audited)", calls},
		{"recent_calls", "SELECT count() AS n FROM %s.recent_calls WHERE tenant = {tenant:String}", calls},
		{"calls_1h", "SELECT toInt64(sum(calls)) AS n FROM %s.calls_1h WHERE tenant = {tenant:String}", calls},
		{"calls_1d", "SELECT toInt64(sum(calls)) AS n FROM %s.calls_1d WHERE tenant = {tenant:String}", calls},
		{"calls_1h retries", "SELECT toInt64(sum(retries)) AS n FROM %s.calls_1h WHERE tenant = {tenant:String}", retries},
		{"retries_1h", "SELECT toInt64(sum(retries)) AS n FROM %s.retries_1h WHERE tenant = {tenant:String}", retries},
		{"rejected_1h", "SELECT toInt64(sum(calls)) AS n FROM %s.rejected_1h WHERE tenant = {tenant:String}", calls - retries},
		// Fed from the events up to version 17, from calls_1h since 18:
		// each adapted call counted once either way, its unknown age too.
		{"adapted_1h", "SELECT toInt64(sum(calls)) AS n FROM %s.adapted_1h WHERE tenant = {tenant:String}", l.adapted.Load()},
		{"adapted_1h unknown age", "SELECT toInt64(sum(calls_unknown_age)) AS n FROM %s.adapted_1h WHERE tenant = {tenant:String}", l.adapted.Load()},
	}
	for _, c := range checks {
		var rows []struct {
			N int64 `json:"n"`
		}
		q := store.Query{Name: "upgrade_count", SQL: fmt.Sprintf(c.sql, db)}
		if err := st.Query(ctx, q, store.Params{}.String("tenant", tenant), &rows); err != nil {
			t.Fatalf("%s: %v", c.table, err)
		}
		if len(rows) != 1 || rows[0].N != c.want {
			t.Errorf("%s holds %v, want %d (acknowledged)", c.table, rows, c.want)
		}
	}
}

// write stores batches until stop is closed, each retried under its token
// until Write returns nil, as an ingester replays its spool; it counts
// what was acknowledged in l. One call in retryEvery is a retry that
// follows a rejection as stale; the others were rejected as stale. Every
// other call goes through an adapter and, as every call here, carries no
// session age.
func write(ctx context.Context, t *testing.T, s *clickhouse.Store, worker int, stop <-chan struct{}, l *load) {
	base := time.Now().Add(-time.Hour).Truncate(time.Hour).UTC()
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return
		default:
		}
		events := make([]otelschema.Event, batchEvents)
		retries, adapted := 0, 0
		for i := range events {
			id := uint64(worker)<<40 | uint64(seq)<<16 | uint64(i)
			e := otelschema.Event{ID: id, Name: otelschema.EventCall, Time: base.Add(time.Duration(seq%3600) * time.Second).UnixNano(),
				Tool: fmt.Sprintf("tool%d", i%5), Outcome: otelschema.OutcomeRejectedStale, SessionID: fmt.Sprintf("s%d-%d", worker, seq),
				ClientName: "client", Service: "svc"}
			if i%retryEvery == 0 {
				e.Outcome = otelschema.OutcomeCurrent
				e.RetryOf = fmt.Sprintf("%d", id-1)
				e.RetryAfter = otelschema.OutcomeRejectedStale
				retries++
			}
			if i%2 == 1 {
				e.AdapterID = fmt.Sprintf("tool%d/1-2", i%5)
				adapted++
			}
			events[i] = e
		}
		batch := store.Batch{Tenant: tenant, Token: fmt.Sprintf("upgrade-w%d-b%d", worker, seq), Events: events}
		for {
			err := s.Write(ctx, batch)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Errorf("writer %d: batch %d never acknowledged: %v", worker, seq, err)
				return
			}
			l.failures.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
		l.batches.Add(1)
		l.calls.Add(int64(len(events)))
		l.retries.Add(int64(retries))
		l.adapted.Add(int64(adapted))
	}
}
