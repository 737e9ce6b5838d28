// Package clickhouse is the server store backend: a ClickHouse server or
// cluster over the native protocol, through clickhouse-go. It runs the same
// migrations and report SQL as the embedded store; with Schema.Cluster set
// it creates Replicated tables ON CLUSTER with Distributed tables in front
// (see store/schema). Any number of processes may share one server: the
// store keeps no state of its own.
//
// Events are inserted into events_in as native column blocks, at most
// Insert.MaxRows per INSERT and Insert.Senders at once. A batch's token
// becomes the INSERT's insert_deduplication_token, with deduplication in the
// materialised views' tables, so that a retried batch is stored once: on a
// single server that needs non_replicated_deduplication_window, which
// Migrate sets on every MergeTree table (Schema.DeduplicationWindow);
// replicated tables deduplicate by default. Batches without a token are
// inserted with deduplication off, so identical batches are all stored.
package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// Store is the server backend. It is safe for concurrent use.
type Store struct {
	cfg    Config
	conn   driver.Conn
	sender *sender
	closed atomic.Bool
	// in sends the INSERTs.
	in *inserter
}

var (
	_ store.Store         = (*Store)(nil)
	_ store.EventIDLister = (*Store)(nil)
	_ schema.Execer       = (*Store)(nil)
)

// Open validates cfg and creates the connection pool. It does not connect
// (Ping does) nor migrate (Migrate does), so a process can start while the
// server is still coming up.
func Open(cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts, err := cfg.options()
	if err != nil {
		return nil, err
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("cannot open ClickHouse %s: %w", cfg.RedactedDSN(), err)
	}
	s := &Store{cfg: cfg, conn: conn, in: newInserter(opts, cfg.Schema.Database, cfg.Insert.Senders)}
	s.sender = newSender(cfg.Insert, s.flush, isTransient)
	return s, nil
}

// Addrs returns the server addresses, in the order they are tried.
func (s *Store) Addrs() []string {
	opts, _ := s.cfg.options()
	return opts.Addr
}

// Version returns the version of the server, as it reports it.
func (s *Store) Version(ctx context.Context) (string, error) {
	var rows []struct {
		V string `json:"v"`
	}
	if err := s.Query(ctx, store.Query{Name: "version", SQL: "SELECT version() AS v"}, nil, &rows); err != nil {
		return "", err
	}
	if len(rows) != 1 {
		return "", fmt.Errorf("version: got %d rows", len(rows))
	}
	return rows[0].V, nil
}

// Close sends what is pending and closes the pool.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.sender.close()
	s.in.close()
	return s.conn.Close()
}

// Migrate applies the pending migrations, ON CLUSTER in cluster mode.
func (s *Store) Migrate(ctx context.Context) ([]int, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	return schema.Apply(ctx, s, s.cfg.Schema)
}

// Ping checks that a server answers and, in cluster mode, that it reaches
// one replica of every shard: with a shard down, inserts through the
// Distributed tables and reports fail.
func (s *Store) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := s.conn.Ping(ctx); err != nil {
		return fmt.Errorf("cannot reach ClickHouse %s: %w", s.cfg.RedactedDSN(), unavailable(err))
	}
	if s.cfg.Schema.Cluster == "" {
		return nil
	}
	var rows []struct {
		Shards uint64 `json:"shards"`
	}
	// The cluster's name is validated (schema.Options) and cannot be bound:
	// table function arguments are not parameters.
	q := store.Query{Name: "shards_reachable", SQL: "SELECT count() AS shards FROM cluster('" + s.cfg.Schema.Cluster + "', system.one)" +
		" SETTINGS skip_unavailable_shards = 0, connect_timeout_with_failover_ms = 1000, connections_with_failover_max_tries = 1"}
	if err := s.Query(ctx, q, nil, &rows); err != nil {
		return fmt.Errorf("cannot reach every shard of cluster %s: %w", s.cfg.Schema.Cluster, err)
	}
	return nil
}

// querySettings are the settings of every query and statement: times read
// as UTC whatever the server's time zone, and, on a cluster, IN and JOIN
// subqueries over Distributed tables run once and are sent to the shards.
func (s *Store) querySettings() clickhouse.Settings {
	set := clickhouse.Settings{"session_timezone": "UTC"}
	if s.cfg.Schema.Cluster != "" {
		set["distributed_product_mode"] = "global"
		set["distributed_foreground_insert"] = 1
	}
	return set
}

func (s *Store) context(ctx context.Context, params store.Params, settings clickhouse.Settings) context.Context {
	opts := []clickhouse.QueryOption{clickhouse.WithSettings(settings)}
	if len(params) > 0 {
		// store.Params hold each value in the engine's escaped text form,
		// which is what the native protocol carries (the driver only quotes
		// it as a string field).
		opts = append(opts, clickhouse.WithParameters(clickhouse.Parameters(params)))
	}
	return clickhouse.Context(ctx, opts...)
}

// Exec runs one statement that returns no rows.
func (s *Store) Exec(ctx context.Context, sql string, params store.Params) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return unavailable(s.conn.Exec(s.context(ctx, params, s.querySettings()), sql))
}

// Query implements store.Querier. Each column is scanned into the driver's
// Go type for it, then stored in the field whose json tag names the column.
func (s *Store) Query(ctx context.Context, q store.Query, params store.Params, dest any) error {
	rv := reflect.ValueOf(dest)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Slice {
		return fmt.Errorf("query %s: dest must be a pointer to a slice, not %T", q.Name, dest)
	}
	if s.closed.Load() {
		return store.ErrClosed
	}
	rows, err := s.conn.Query(s.context(ctx, params, s.querySettings()), q.SQL)
	if err != nil {
		return fmt.Errorf("query %s: %w", q.Name, unavailable(err))
	}
	defer rows.Close()
	slice := rv.Elem()
	elem := slice.Type().Elem()
	types := rows.ColumnTypes()
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Name()
	}
	index, err := store.FieldIndex(elem, names)
	if err != nil {
		return fmt.Errorf("query %s: %w", q.Name, err)
	}
	cells := make([]any, len(types))
	for i, t := range types {
		cells[i] = reflect.New(t.ScanType()).Interface()
	}
	for rows.Next() {
		if err := rows.Scan(cells...); err != nil {
			return fmt.Errorf("query %s: cannot scan row %d: %w", q.Name, slice.Len()+1, err)
		}
		v := reflect.New(elem).Elem()
		for i, idx := range index {
			if idx == nil {
				continue
			}
			if err := assign(v.FieldByIndex(idx), cells[i]); err != nil {
				return fmt.Errorf("query %s: row %d, column %s (%s): %w", q.Name, slice.Len()+1, names[i], types[i].DatabaseTypeName(), err)
			}
		}
		slice = reflect.Append(slice, v)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("query %s: %w", q.Name, unavailable(err))
	}
	rv.Elem().Set(slice)
	return nil
}

// EventIDsSince implements store.EventIDLister.
func (s *Store) EventIDsSince(ctx context.Context, tenant string, since time.Time, limit int) ([]uint64, error) {
	return store.EventIDsSince(ctx, s, s.cfg.Schema.Database, tenant, since, limit)
}

// Write implements store.Writer.
func (s *Store) Write(ctx context.Context, b store.Batch) error {
	if len(b.Events) == 0 {
		return nil
	}
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.sender.write(ctx, b)
}

// WriteNative stores the rows of blk, a block encoded by the caller (the
// ingester's replayer transcodes spooled records into one), as Write
// stores a batch of the same events under token, deduplicated on token
// the same way; each row carries its tenant. The block is sent whole, in
// one INSERT retried as Write's are: it is not split at
// store.insert.max-rows, since a block cannot be cut without decoding it,
// so its writer keeps it within MaxInsertRows (the replayer does). blk
// is only read, and the caller may reuse it once WriteNative returns.
func (s *Store) WriteNative(ctx context.Context, token string, blk *chwire.NativeBlock) error {
	if blk.Rows() == 0 {
		return nil
	}
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if token == "" {
		token = store.UniqueToken()
	}
	return s.sender.send(ctx, &chunk{token: token, blk: blk, rows: blk.Rows(), done: make(chan struct{})})
}

// MaxInsertRows is store.insert.max-rows, the most rows one INSERT
// sends: Write splits a larger batch, WriteNative sends its block whole,
// so a caller that gathers blocks (the ingester's replayer) keeps them
// within it.
func (s *Store) MaxInsertRows() int { return s.cfg.Insert.MaxRows }

// insertSettings returns the settings of the INSERT of c.
func (s *Store) insertSettings(c *chunk) clickhouse.Settings {
	set := s.querySettings()
	set["async_insert"] = 0
	// The rollups' views aggregate each insert by their tables' keys: see
	// the embedded store's insertSettings.
	set["optimize_on_insert"] = 0
	set["insert_deduplicate"] = 1
	set["insert_deduplication_token"] = c.token
	set["deduplicate_blocks_in_dependent_materialized_views"] = 1
	return set
}

// flush inserts c as one native block into events_in (inserter), after a
// read of the schema epoch that keeps inserts out of a migration's way
// (schema.WriteGuard): while a migrator holds the schema lock the chunk
// fails with schema.ErrMigrating, not permanent, so that its batch is
// written again under its token once the migration is over.
func (s *Store) flush(ctx context.Context, c *chunk) error {
	g := schema.WriteGuard{Querier: s, Database: s.cfg.Schema.Database}
	t, err := g.Begin(ctx)
	if err != nil {
		return fmt.Errorf("cannot insert %d events: %w", c.rows, err)
	}
	ready := func() error {
		t, err = g.Fresh(ctx, t)
		return err
	}
	sql := "INSERT INTO " + s.cfg.Schema.Database + ".events_in " + store.InsertColumns + " VALUES"
	if err := s.in.insert(ctx, sql, s.insertSettings(c), c, ready); err != nil {
		if errors.Is(err, schema.ErrMigrating) {
			return fmt.Errorf("cannot insert %d events: %w", c.rows, err)
		}
		return s.insertError(c, err)
	}
	return nil
}

func (s *Store) insertError(c *chunk, err error) error {
	if isPermanent(err) {
		return fmt.Errorf("cannot insert %d events: %w: %w", c.rows, store.ErrPermanent, err)
	}
	return fmt.Errorf("cannot insert %d events: %w", c.rows, unavailable(err))
}
