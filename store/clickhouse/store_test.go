package clickhouse_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
	"github.com/mcpdrift/mcpdrift/store/storetest"
)

// openServer opens a store on a fresh database of the server named by
// MCPDRIFT_CLICKHOUSE_DSN (and the cluster named by
// MCPDRIFT_CLICKHOUSE_CLUSTER, if set), and drops the database afterwards.
// Without the DSN the test is skipped: no ClickHouse server runs here by
// default. To run it against a local server:
//
//	docker run -d --name ch -p 9000:9000 -e CLICKHOUSE_PASSWORD=test clickhouse/clickhouse-server:25.8
//	MCPDRIFT_CLICKHOUSE_DSN=clickhouse://default:test@localhost:9000 go test ./store/clickhouse
func openServer(t *testing.T) (*clickhouse.Store, clickhouse.Config) {
	t.Helper()
	dsn := os.Getenv("MCPDRIFT_CLICKHOUSE_DSN")
	if dsn == "" {
		t.Skip("MCPDRIFT_CLICKHOUSE_DSN is not set: the server backend is not tested against a server")
	}
	cfg := clickhouse.DefaultConfig(dsn)
	cfg.Schema.Database = fmt.Sprintf("mcpdrift_test_%d", time.Now().UnixNano())
	cfg.Schema.Cluster = os.Getenv("MCPDRIFT_CLICKHOUSE_CLUSTER")
	s, err := clickhouse.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		onCluster := ""
		if cfg.Schema.Cluster != "" {
			onCluster = " ON CLUSTER '" + cfg.Schema.Cluster + "' SYNC"
		}
		if err := s.Exec(context.Background(), "DROP DATABASE IF EXISTS "+cfg.Schema.Database+onCluster, nil); err != nil {
			t.Errorf("cannot drop the test database: %v", err)
		}
		s.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	return s, cfg
}

func TestConformance(t *testing.T) {
	s, cfg := openServer(t)
	(&storetest.Suite{Store: s, Database: cfg.Schema.Database}).RunAll(t)
	t.Run("RetriedBatchIsStoredOnce", func(t *testing.T) { testRetriedBatch(t, s, cfg.Schema.Database) })
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
