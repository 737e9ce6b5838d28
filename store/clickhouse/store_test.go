package clickhouse_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/clickhousetest"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
	"github.com/mcpdrift/mcpdrift/store/storetest"
)

// TestConformance runs the conformance suite on a ClickHouse server and
// on a 2-shard cluster, started from libchdb by clickhousetest (or named by
// its environment variables).
func TestConformance(t *testing.T) {
	for _, b := range clickhousetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := b.Open(t)
			(&storetest.Suite{Store: s, Database: s.Schema.Database}).RunAll(t)
			t.Run("RetriedBatchIsStoredOnce", func(t *testing.T) { testRetriedBatch(t, s.Store, s.Schema.Database) })
		})
	}
}

// testRetriedBatch writes the same batch twice with one token, as the
// ingester does after a failed acknowledgement, and expects one copy in
// every table fed by events_in.
func testRetriedBatch(t *testing.T, s *clickhouse.Store, db string) {
	ctx := context.Background()
	base := time.Now().Add(-time.Hour).UTC()
	events := make([]otelschema.Event, 100)
	for i := range events {
		events[i] = otelschema.Event{ID: uint64(i), Name: otelschema.EventCall, Time: base.Add(time.Duration(i) * time.Second).UnixNano(),
			Tool: "t", Outcome: otelschema.OutcomeCurrent, SessionID: "s"}
	}
	b := store.Batch{Tenant: "dedup", Token: "batch-1", Events: events}
	for i := 0; i < 2; i++ {
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	for table, want := range map[string]int{"events": 100, "audit_calls": 100} {
		var rows []struct {
			N int `json:"n"`
		}
		q := store.Query{Name: "count", SQL: "SELECT count() AS n FROM " + db + "." + table + " WHERE tenant = 'dedup'"}
		if err := s.Query(ctx, q, nil, &rows); err != nil {
			t.Fatal(err)
		}
		if rows[0].N != want {
			t.Errorf("%s holds %d rows after a retried batch, want %d", table, rows[0].N, want)
		}
	}
	var calls []struct {
		N uint64 `json:"n"`
	}
	q := store.Query{Name: "rollup", SQL: "SELECT sum(calls) AS n FROM " + db + ".calls_1h WHERE tenant = 'dedup'"}
	if err := s.Query(ctx, q, nil, &calls); err != nil {
		t.Fatal(err)
	}
	if calls[0].N != 100 {
		t.Errorf("calls_1h counts %d calls after a retried batch, want 100", calls[0].N)
	}
}

// TestOneInsertPerBatch checks, in the server's query_log, that a batch is
// sent as one INSERT into events_in, with the batch's token.
func TestOneInsertPerBatch(t *testing.T) {
	b := clickhousetest.Server(t)
	s := b.Open(t)
	ctx := context.Background()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	events := make([]otelschema.Event, 500)
	for i := range events {
		events[i] = otelschema.Event{ID: uint64(i + 1), Name: otelschema.EventCall, Time: time.Now().UnixNano(), Tool: "t", Outcome: otelschema.OutcomeCurrent}
	}
	if err := s.Write(ctx, store.Batch{Tenant: "one-insert", Token: "one-insert-1", Events: events}); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, "SYSTEM FLUSH LOGS", nil); err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Token string `json:"token"`
	}
	q := store.Query{Name: "inserts", SQL: `SELECT Settings['insert_deduplication_token'] AS token FROM system.query_log
		WHERE type = 'QueryFinish' AND query_kind = 'Insert' AND startsWith(query, {prefix:String})`}
	if err := s.Query(ctx, q, store.Params{}.String("prefix", "INSERT INTO "+s.Schema.Database+".events_in "), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Token != "one-insert-1" {
		t.Fatalf("one batch ran %d INSERTs into events_in (%+v), want 1 with its token", len(rows), rows)
	}
}
