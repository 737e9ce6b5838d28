package clickhouse_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
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
	for table, want := range map[string]int{"events": 100, "events:audited": 100} {
		var rows []struct {
			N int `json:"n"`
		}
		name, where, _ := strings.Cut(table, ":")
		if where != "" {
			where = " AND " + where
		}
		q := store.Query{Name: "count", SQL: "SELECT count() AS n FROM " + db + "." + name + " WHERE tenant = 'dedup'" + where}
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

// TestUnavailable stops one shard of a cluster of its own, then the whole
// cluster: Ping, queries and writes fail with store.ErrUnavailable, and
// Ping succeeds again once the shard is back.
func TestUnavailable(t *testing.T) {
	clickhousetest.Require(t)
	ctx := context.Background()
	c, err := clickhousetest.StartCluster(ctx, t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	cfg := clickhouse.DefaultConfig(c.Nodes[0].DSN())
	cfg.Schema.Cluster = c.Name
	cfg.Insert.Attempts = 1
	if _, err := c.Migrate(ctx, cfg.Schema); err != nil {
		t.Fatal(err)
	}
	s, err := clickhouse.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping with every shard up: %v", err)
	}
	events := []otelschema.Event{{ID: 1, Name: otelschema.EventCall, Time: time.Now().UnixNano(), Tool: "a", Outcome: otelschema.OutcomeCurrent},
		{ID: 2, Name: otelschema.EventCall, Time: time.Now().UnixNano(), Tool: "b", Outcome: otelschema.OutcomeCurrent}}
	count := store.Query{Name: "count", SQL: "SELECT count() AS n FROM " + cfg.Schema.Database + ".events"}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s: %v, want an error wrapping store.ErrUnavailable", what, err)
		}
	}

	if err := c.Nodes[1].Kill(); err != nil {
		t.Fatal(err)
	}
	check("Ping with shard 2 down", s.Ping(ctx))
	var rows []struct {
		N uint64 `json:"n"`
	}
	check("a query through Distributed tables with shard 2 down", s.Query(ctx, count, nil, &rows))
	// The tools' sharding key sends at least one of many tools to shard 2.
	var many []otelschema.Event
	for i := range 20 {
		many = append(many, otelschema.Event{ID: uint64(10 + i), Name: otelschema.EventCall, Time: time.Now().UnixNano(), Tool: fmt.Sprint("tool-", i), Outcome: otelschema.OutcomeCurrent})
	}
	check("a write with shard 2 down", s.Write(ctx, store.Batch{Tenant: "t", Token: "down-1", Events: many}))

	if err := c.Nodes[1].Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping once shard 2 is back: %v", err)
	}
	if err := s.Write(ctx, store.Batch{Tenant: "t", Token: "up-1", Events: events}); err != nil {
		t.Fatalf("write once shard 2 is back: %v", err)
	}

	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	check("Ping with the cluster down", s.Ping(ctx))
	check("a query with the cluster down", s.Query(ctx, count, nil, &rows))
}

// TestInsertFailsOver writes through a DSN whose first address has no
// server and whose query names a setting: the INSERT moves on to the
// server that follows and is stored once, with the DSN's setting (its
// log_comment in the server's query_log), as clickhouse-go sends it with
// every query.
func TestInsertFailsOver(t *testing.T) {
	b := clickhousetest.Server(t)
	st := b.Open(t)
	ctx := context.Background()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close() // nothing listens there now
	u, err := url.Parse(b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("log_comment", "mcpdrift-failover")
	dsn := u.Scheme + "://" + u.User.String() + "@" + deadAddr + "," + u.Host + u.Path + "?" + q.Encode()
	if u.User == nil {
		dsn = u.Scheme + "://" + deadAddr + "," + u.Host + u.Path + "?" + q.Encode()
	}
	cfg := clickhouse.DefaultConfig(dsn)
	cfg.Schema = st.Schema
	s, err := clickhouse.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Addrs(); len(got) != 2 || got[0] != deadAddr {
		t.Fatalf("addresses %v, want %s first", got, deadAddr)
	}
	events := []otelschema.Event{{ID: 1, Name: otelschema.EventCall, Time: time.Now().UnixNano(), Tool: "t", Outcome: otelschema.OutcomeCurrent}}
	if err := s.Write(ctx, store.Batch{Tenant: "failover", Token: "failover-1", Events: events}); err != nil {
		t.Fatalf("Write past an address with no server: %v", err)
	}
	if err := st.Exec(ctx, "SYSTEM FLUSH LOGS", nil); err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		N uint64 `json:"n"`
	}
	inserts := store.Query{Name: "inserts", SQL: `SELECT count() AS n FROM system.query_log
		WHERE type = 'QueryFinish' AND query_kind = 'Insert' AND log_comment = 'mcpdrift-failover'
		AND Settings['insert_deduplication_token'] = 'failover-1'`}
	if err := st.Query(ctx, inserts, nil, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].N != 1 {
		t.Fatalf("%v INSERTs with the DSN's log_comment and the batch's token, want 1", rows)
	}
	stored := store.Query{Name: "count", SQL: "SELECT count() AS n FROM " + st.Schema.Database + ".events WHERE tenant = 'failover'"}
	if err := st.Query(ctx, stored, nil, &rows); err != nil || rows[0].N != 1 {
		t.Fatalf("events stored: %v, %v; want 1", rows, err)
	}
}

// TestInsertCompressions writes a batch with each block compression the
// store offers (-store.compression): with none, the columns go to the
// connection as they are (encoded.WriteColumn); compressed, they are
// copied into the block first (encoded.EncodeColumn). Each batch is stored
// whole, every value as written.
func TestInsertCompressions(t *testing.T) {
	b := clickhousetest.Server(t)
	st := b.Open(t)
	ctx := context.Background()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, comp := range []string{"none", "lz4", "zstd"} {
		t.Run(comp, func(t *testing.T) {
			cfg := b.Config(st.Schema.Database)
			cfg.Compression = comp
			s, err := clickhouse.Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			events := make([]otelschema.Event, 300)
			for i := range events {
				events[i] = otelschema.Event{ID: uint64(i + 1), Name: otelschema.EventCall, Time: time.Now().UnixNano(),
					Tool: fmt.Sprint("tool-", i%7), Outcome: otelschema.OutcomeCurrent, Attributes: map[string]string{"k": fmt.Sprint(i)}}
			}
			if err := s.Write(ctx, store.Batch{Tenant: "comp-" + comp, Token: "comp-" + comp, Events: events}); err != nil {
				t.Fatal(err)
			}
			var rows []struct {
				N     uint64 `json:"n"`
				Tools uint64 `json:"tools"`
				Keys  uint64 `json:"keys"`
			}
			q := store.Query{Name: "count", SQL: "SELECT count() AS n, uniqExact(tool) AS tools, uniqExact(attributes['k']) AS keys FROM " +
				st.Schema.Database + ".events WHERE tenant = {tenant:String}"}
			if err := st.Query(ctx, q, store.Params{}.String("tenant", "comp-"+comp), &rows); err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || rows[0].N != 300 || rows[0].Tools != 7 || rows[0].Keys != 300 {
				t.Fatalf("stored %+v, want 300 events of 7 tools and 300 distinct attributes", rows)
			}
		})
	}
}
