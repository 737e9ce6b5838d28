// Package embedded is the default store backend: ClickHouse itself, running
// in-process through libchdb, persistent in a data directory that one process
// owns. The library is loaded lazily on Open, so importing this package never
// fails; see LibraryPath for where it is looked for.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/dirlock"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// Config configures the embedded store.
type Config struct {
	// Dir is the data directory. It is created if missing, and locked for
	// the lifetime of the store: a second process gets store.ErrInUse.
	Dir string
	// Schema holds the database name and the retention periods.
	Schema schema.Options
}

// DefaultDeduplicationWindow is the non_replicated_deduplication_window, in
// blocks, that DefaultConfig sets on every MergeTree table, so that a batch
// written again with the same token is stored once (see Store.Write).
const DefaultDeduplicationWindow = 1000

// DefaultConfig returns a configuration for dir with the default schema and
// insert deduplication on (DefaultDeduplicationWindow).
func DefaultConfig(dir string) Config {
	opts := schema.DefaultOptions()
	opts.DeduplicationWindow = DefaultDeduplicationWindow
	return Config{Dir: dir, Schema: opts}
}

// Validate reports the first invalid field by name.
func (c Config) Validate() error {
	if c.Dir == "" {
		return errors.New("data.dir: must not be empty")
	}
	if err := c.Schema.Validate(); err != nil {
		return fmt.Errorf("store schema: %w", err)
	}
	return nil
}

// Store is the embedded backend. It is safe for concurrent use; statements
// run one at a time, as chDB runs them.
type Store struct {
	cfg  Config
	lock *os.File

	mu   sync.Mutex // serialises every statement on conn
	conn *conn

	// encMu guards enc, the Native block that Write encodes batches into,
	// kept from write to write: a sync.Pool is emptied by every other
	// garbage collection, and regrowing tens of megabytes per insert showed
	// in the ingest profile (growslice).
	encMu sync.Mutex
	enc   chwire.NativeBlock
}

// maxKeptEncoding bounds the buffer Write keeps between writes: a rare
// giant batch does not pin its size for the process's life.
const maxKeptEncoding = 128 << 20

var (
	_ store.Store         = (*Store)(nil)
	_ store.EventIDLister = (*Store)(nil)
	_ schema.Execer       = (*Store)(nil)
)

// The engine serves one data path per process.
var (
	processMu   sync.Mutex
	processPath string
)

// Open loads libchdb if needed, takes ownership of cfg.Dir and connects. It
// does not migrate: call Migrate.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l, err := loadLibrary()
	if err != nil {
		return nil, fmt.Errorf("cannot open the embedded store: %w", err)
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve data directory %q: %w", cfg.Dir, err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("cannot create data directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}

	processMu.Lock()
	defer processMu.Unlock()
	if processPath != "" {
		lock.Close()
		return nil, fmt.Errorf("cannot open %s: this process already has the embedded store at %s open (one per process)", dir, processPath)
	}
	c, err := connect(l, filepath.Join(dir, "clickhouse"))
	if err != nil {
		lock.Close()
		return nil, err
	}
	processPath = dir
	s := &Store{cfg: cfg, lock: lock, conn: c}
	s.cfg.Dir = dir
	return s, nil
}

// lockDir takes the data directory's lock (dirlock).
func lockDir(dir string) (*os.File, error) {
	f, err := dirlock.Lock(dir, "mcpdrift.lock")
	if errors.Is(err, dirlock.ErrLocked) {
		return nil, fmt.Errorf("%w: %w; stop that mcpdrift process, or point this one at another -data.dir", store.ErrInUse, err)
	}
	return f, err
}

// Dir returns the absolute data directory.
func (s *Store) Dir() string { return s.cfg.Dir }

// Version returns the version of the loaded ClickHouse engine.
func (s *Store) Version() string {
	l, err := loadLibrary()
	if err != nil {
		return ""
	}
	return l.version()
}

// Close releases the connection and the data directory.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	s.conn.close()
	s.conn = nil
	processMu.Lock()
	processPath = ""
	processMu.Unlock()
	return s.lock.Close()
}

// Migrate applies the pending migrations.
func (s *Store) Migrate(ctx context.Context) ([]int, error) {
	return schema.Apply(ctx, s, s.cfg.Schema)
}

// Ping runs a trivial query.
func (s *Store) Ping(ctx context.Context) error {
	var rows []struct {
		One int `json:"one"`
	}
	return s.Query(ctx, store.Query{Name: "ping", SQL: "SELECT 1 AS one"}, nil, &rows)
}

// Exec runs one statement that returns no rows.
func (s *Store) Exec(ctx context.Context, sql string, params store.Params) error {
	_, err := s.run(ctx, sql, "TabSeparated", params)
	return err
}

// Query implements store.Querier. The engine writes the result as
// RowBinaryWithNamesAndTypes, which chwire.DecodeRowBinary reads into dest,
// converting as encoding/json did when the store read JSONEachRow. As then,
// NaN and ±Inf floats decode as zero, or as a nil pointer.
func (s *Store) Query(ctx context.Context, q store.Query, params store.Params, dest any) error {
	rv := reflect.ValueOf(dest)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Slice {
		return fmt.Errorf("query %s: dest must be a pointer to a slice, not %T", q.Name, dest)
	}
	out, err := s.run(ctx, q.SQL, "RowBinaryWithNamesAndTypes", params)
	if err != nil {
		return fmt.Errorf("query %s: %w", q.Name, err)
	}
	// Rows are appended to a copy, so that dest is left as it was on error.
	slice := reflect.New(rv.Elem().Type()).Elem()
	slice.Set(rv.Elem())
	if err := chwire.DecodeRowBinary(out, slice); err != nil {
		return fmt.Errorf("query %s: %w", q.Name, err)
	}
	rv.Elem().Set(slice)
	return nil
}

func (s *Store) run(ctx context.Context, sql, format string, params store.Params) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil, store.ErrClosed
	}
	return s.conn.query(sql, format, params)
}

// Write implements store.Writer: the batch is streamed as one Native block
// (chwire.NativeBlock) into events_in in one INSERT, whose materialised
// views feed the events, audit, adapter and rollup tables before it returns.
//
// A batch with a token is inserted with that token as its
// insert_deduplication_token: written again within the tables'
// non_replicated_deduplication_window (Schema.DeduplicationWindow), it is
// stored once, in the events table and in every rollup fed from it
// (deduplication through the Null events_in table works with a token
// only: identical data without a token, or under another token, is stored
// again). The token must therefore identify the
// batch's content: another batch under the same token is dropped. A batch
// without a token is stored every time it is written (insertSettings).
func (s *Store) Write(ctx context.Context, b store.Batch) error {
	if len(b.Events) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	tenant := b.Tenant
	if tenant == "" {
		tenant = store.DefaultTenant
	}
	s.encMu.Lock()
	defer s.encMu.Unlock()
	blk := &s.enc
	blk.Encode(tenant, b.Events)
	defer func() {
		if blk.Size() > maxKeptEncoding {
			*blk = chwire.NativeBlock{}
		}
	}()
	return s.insert(b.Token, blk)
}

// WriteNative stores the rows of blk, a block encoded by the caller (the
// ingester's replayer transcodes spooled records into one), as Write
// stores a batch of the same events under token: one INSERT into
// events_in, deduplicated on token the same way. Each row carries its
// tenant. blk is only read, and the caller may reuse it once WriteNative
// returns.
func (s *Store) WriteNative(ctx context.Context, token string, blk *chwire.NativeBlock) error {
	if blk.Rows() == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.insert(token, blk)
}

// insert sends blk in one INSERT under token.
func (s *Store) insert(token string, blk *chwire.NativeBlock) error {
	chunks := blk.Chunks()
	sql := "INSERT INTO " + s.cfg.Schema.Database + ".events_in " + store.InsertColumns + insertSettings(token)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return store.ErrClosed
	}
	if _, err := s.conn.insert(sql, "Native", chunks...); err != nil {
		size := 0
		for _, c := range chunks {
			size += len(c)
		}
		var qe *QueryError
		if errors.As(err, &qe) && qe.permanent() {
			return fmt.Errorf("cannot insert %d events (%d bytes): %w: %w", blk.Rows(), size, store.ErrPermanent, err)
		}
		return fmt.Errorf("cannot insert %d events (%d bytes): %w", blk.Rows(), size, err)
	}
	return nil
}

// insertSettings is the SETTINGS clause of a batch's INSERT.
//
// A batch without a token is inserted under a token of its own
// (store.UniqueToken): it is stored whatever was stored before, and the
// engine does not hash its blocks, as it does for an insert without a
// token into a table with a deduplication window.
//
// optimize_on_insert = 0: the rollups' views aggregate each insert by their
// tables' keys already, so the engine's merge of the new part's equal keys
// would find none and only copy every aggregate state into the part.
// Background merges and the reports' GROUP BYs aggregate across parts
// either way, so answers do not change; the saving is measured in
// docs/capacity.md.
func insertSettings(token string) string {
	if token == "" {
		token = store.UniqueToken()
	}
	return " SETTINGS optimize_on_insert = 0, insert_deduplicate = 1, deduplicate_blocks_in_dependent_materialized_views = 1, insert_deduplication_token = '" +
		tokenEscaper.Replace(token) + "'"
}

var tokenEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`, "\n", `\n`)

// EventIDsSince implements store.EventIDLister.
func (s *Store) EventIDsSince(ctx context.Context, tenant string, since time.Time, limit int) ([]uint64, error) {
	return store.EventIDsSince(ctx, s, s.cfg.Schema.Database, tenant, since, limit)
}
