package clickhouse_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// TestWritesWaitForTheSchemaLock: on a ClickHouse server, a write while a
// migrator holds the schema lock fails with schema.ErrMigrating and stores
// nothing; once the lock is released the same batch is stored; on a store
// whose lock table is missing (migrated by a release without it) writes
// fail, until a migrator of this release creates it.
func TestWritesWaitForTheSchemaLock(t *testing.T) {
	b := clickhousetest.Server(t)
	s := b.Open(t)
	ctx := context.Background()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db := s.Schema.Database
	base := time.Now().Add(-time.Hour).UTC()
	events := make([]otelschema.Event, 10)
	for i := range events {
		events[i] = otelschema.Event{ID: uint64(i + 1), Name: otelschema.EventCall, Time: base.Add(time.Duration(i) * time.Second).UnixNano(),
			Tool: "t", Outcome: otelschema.OutcomeCurrent, SessionID: "s"}
	}
	batch := store.Batch{Tenant: "lock", Token: "lock-1", Events: events}
	count := func() int {
		t.Helper()
		var rows []struct {
			N int `json:"n"`
		}
		q := store.Query{Name: "count", SQL: "SELECT count() AS n FROM " + db + ".events WHERE tenant = 'lock'"}
		if err := s.Query(ctx, q, nil, &rows); err != nil {
			t.Fatal(err)
		}
		return rows[0].N
	}
	lockRow := func(seq uint64) {
		t.Helper()
		sql := fmt.Sprintf("INSERT INTO %s.schema_lock (seq, owner) VALUES (%d, 'test')", db, seq)
		if err := s.Exec(ctx, sql, nil); err != nil {
			t.Fatal(err)
		}
	}
	epoch, err := schema.Epoch(ctx, s, db)
	if err != nil {
		t.Fatal(err)
	}
	if epoch%2 != 0 {
		t.Fatalf("schema epoch %d after a migration, want an even one", epoch)
	}

	lockRow(epoch + 1)
	if err := s.Write(ctx, batch); !errors.Is(err, schema.ErrMigrating) || errors.Is(err, store.ErrPermanent) {
		t.Errorf("a write while the lock is held: %v, want schema.ErrMigrating, not permanent", err)
	}
	if n := count(); n != 0 {
		t.Errorf("a write while the lock is held stored %d events", n)
	}
	lockRow(epoch + 2)
	if err := s.Write(ctx, batch); err != nil {
		t.Fatalf("the write after the lock was released: %v", err)
	}
	if n := count(); n != len(events) {
		t.Errorf("stored %d events, want %d", n, len(events))
	}

	if err := s.Exec(ctx, "DROP TABLE "+db+".schema_lock SYNC", nil); err != nil {
		t.Fatal(err)
	}
	batch2 := store.Batch{Tenant: "lock", Token: "lock-2", Events: events}
	if err := s.Write(ctx, batch2); err == nil || errors.Is(err, store.ErrPermanent) {
		t.Errorf("a write without the lock table: %v, want a retryable error", err)
	}
	if n := count(); n != len(events) {
		t.Errorf("a write without the lock table stored %d events", n-len(events))
	}
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, batch2); err != nil {
		t.Fatalf("the write once a migrator created the lock table: %v", err)
	}
	if n := count(); n != 2*len(events) {
		t.Errorf("stored %d events, want %d", n, 2*len(events))
	}
}

// TestMigratorTakesOverADeadLock: a lock whose holder wrote nothing for
// schema.LockLease is taken over by the next migrator, which applies the
// pending migrations and releases it; a live one is waited for.
func TestMigratorTakesOverADeadLock(t *testing.T) {
	b := clickhousetest.Server(t)
	s := b.Open(t)
	ctx := context.Background()
	if _, err := b.MigrateThrough(ctx, s.Schema, 11); err != nil {
		t.Fatal(err)
	}
	db := s.Schema.Database
	epoch, err := schema.Epoch(ctx, s, db)
	if err != nil {
		t.Fatal(err)
	}
	held := func(seq uint64, age time.Duration) {
		t.Helper()
		sql := fmt.Sprintf("INSERT INTO %s.schema_lock (seq, owner, at) VALUES (%d, 'test', now64(3) - toIntervalMillisecond(%d))", db, seq, age.Milliseconds())
		if err := s.Exec(ctx, sql, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A live holder: the migrator waits.
	held(epoch+1, 0)
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	start := time.Now()
	versions, err := schema.Apply(wctx, s.Store, s.Schema)
	// It waited until its deadline: the context expired, or, on a loaded
	// machine, a read of the lock near the deadline failed first with an
	// i/o timeout (seen under -race in CI).
	waited := wctx.Err() != nil || time.Since(start) >= 1500*time.Millisecond
	cancel()
	if err == nil || !waited || len(versions) > 0 {
		t.Fatalf("a migrator beside a live lock applied %v after %v, error %v, want it to wait until its deadline", versions, time.Since(start).Round(time.Millisecond), err)
	}
	// The holder's last row older than the lease: taken over.
	held(epoch+1, schema.LockLease+time.Second)
	if err := s.Exec(ctx, fmt.Sprintf("ALTER TABLE %s.schema_lock DELETE WHERE seq = %d AND at > now64(3) - toIntervalSecond(30) SETTINGS mutations_sync = 2", db, epoch+1), nil); err != nil {
		t.Fatal(err)
	}
	versions, err = schema.Apply(ctx, s.Store, s.Schema)
	if err != nil {
		t.Fatal(err)
	}
	// Every migration after 11, whatever their number.
	ms, err := schema.Migrations(s.Schema)
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for _, m := range ms {
		if m.Version > 11 {
			want = append(want, m.Version)
		}
	}
	if len(want) == 0 || fmt.Sprint(versions) != fmt.Sprint(want) {
		t.Errorf("the migrator that took the lock over applied %v, want %v", versions, want)
	}
	if got, err := schema.Epoch(ctx, s, db); err != nil || got != epoch+4 {
		t.Errorf("schema epoch %d (%v) after the take-over, want %d: the odd epoch past the dead holder's claimed, then released", got, err, epoch+4)
	}
}

// BenchmarkWriteGuard measures what the schema lock adds to each insert
// into a ClickHouse server: the epoch read (Begin), beside the Write of a
// batch of 50,000 events, which reads the epoch once per insert itself.
// The read's share of a write is the ratio of the two.
func BenchmarkWriteGuard(b *testing.B) {
	be := clickhousetest.Server(b)
	s := be.Open(b)
	ctx := context.Background()
	if _, err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	g := schema.WriteGuard{Querier: s, Database: s.Schema.Database}
	b.Run("epoch", func(b *testing.B) {
		for b.Loop() {
			if _, err := g.Begin(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	const n = 50000
	base := time.Now().Add(-time.Hour).UTC()
	events := make([]otelschema.Event, n)
	for i := range events {
		events[i] = otelschema.Event{ID: uint64(i + 1), Name: otelschema.EventCall, Time: base.Add(time.Duration(i) * time.Millisecond).UnixNano(),
			Tool: fmt.Sprintf("tool_%d", i%40), Outcome: otelschema.OutcomeCurrent, SessionID: fmt.Sprintf("s%d", i%500)}
	}
	b.Run("insert_50000", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if err := s.Write(ctx, store.Batch{Tenant: "bench", Token: fmt.Sprintf("bench-%d", i), Events: events}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
