package clickhousetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/store/clickhouse"
	"github.com/mcpdrift/mcpdrift/store/embedded"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// Environment variables that point the tests at servers started elsewhere
// instead of the ones this package starts from libchdb.
const (
	// ServerDSNEnv is the DSN of a single ClickHouse server.
	ServerDSNEnv = "MCPDRIFT_CLICKHOUSE_DSN"
	// ClusterDSNEnv is the DSN of a ClickHouse cluster whose remote_servers
	// entry ClusterEnv names; its schema is migrated with real ON CLUSTER
	// DDL and Replicated tables.
	ClusterDSNEnv = "MCPDRIFT_CLICKHOUSE_CLUSTER_DSN"
	ClusterEnv    = "MCPDRIFT_CLICKHOUSE_CLUSTER"
)

// Backend is a ClickHouse server or cluster that tests run against.
type Backend struct {
	// Name is "server" or "cluster".
	Name string
	// DSN reaches the server, or every node of the cluster.
	DSN string
	// Cluster is the remote_servers entry of a cluster, empty for a server.
	Cluster string
	// Nodes are the nodes this process started, nil for servers started
	// elsewhere.
	Nodes []*Node

	local *Cluster // a cluster started here: migrated node by node
}

// External reports whether the backend was started elsewhere.
func (b *Backend) External() bool { return b.Nodes == nil }

// Config returns the store configuration of database db on b.
func (b *Backend) Config(db string) clickhouse.Config {
	cfg := clickhouse.DefaultConfig(b.DSN)
	cfg.Schema.Database = db
	cfg.Schema.Cluster = b.Cluster
	if b.Cluster != "" {
		// The nodes listen on loopback, where the default leaves the
		// native protocol uncompressed: the cluster's stores compress,
		// so that the tests run over both encodings.
		cfg.Compression = "lz4"
	}
	return cfg
}

// Migrate brings the schema of opts up to date on b: the store's own
// Migrate on a server or a cluster started elsewhere, Cluster.Migrate (node
// by node, without replication) on a cluster started here.
func (b *Backend) Migrate(ctx context.Context, opts schema.Options) ([]int, error) {
	return b.MigrateThrough(ctx, opts, 0)
}

// MigrateThrough is Migrate stopped after migration last (every migration
// when last is 0), as schema.ApplyThrough: a store as an older release
// left it.
func (b *Backend) MigrateThrough(ctx context.Context, opts schema.Options, last int) ([]int, error) {
	if b.local != nil {
		return b.local.MigrateThrough(ctx, opts, last)
	}
	cfg := b.Config(opts.Database)
	cfg.Schema = opts
	cfg.Schema.Cluster = b.Cluster
	st, err := clickhouse.Open(cfg)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return schema.ApplyThrough(ctx, st, cfg.Schema, last)
}

// Execer returns what runs b's schema statements, as Migrate runs them:
// on a cluster started here, the node-by-node scaffolding (Cluster.Migrate);
// otherwise a store on database db. close releases it.
func (b *Backend) Execer(db string) (ex schema.Execer, close func(), err error) {
	if b.local != nil {
		opts := b.Config(db).Schema
		f, err := b.local.fanout(opts)
		if err != nil {
			return nil, nil, err
		}
		return f, f.close, nil
	}
	st, err := clickhouse.Open(b.Config(db))
	if err != nil {
		return nil, nil, err
	}
	return st, func() { st.Close() }, nil
}

// ForgetMigrations deletes the records of the migrations from version from
// on, in db's schema_migrations on every node of b, so that the next
// Migrate applies them again: a test that replays an upgrade.
func (b *Backend) ForgetMigrations(ctx context.Context, db string, from int) error {
	sql := fmt.Sprintf("ALTER TABLE %s.schema_migrations DELETE WHERE version >= %d SETTINGS mutations_sync = 2", db, from)
	if b.Nodes == nil {
		cfg := clickhouse.DefaultConfig(b.DSN)
		if b.Cluster != "" {
			sql = fmt.Sprintf("ALTER TABLE %s.schema_migrations ON CLUSTER '%s' DELETE WHERE version >= %d SETTINGS mutations_sync = 2", db, b.Cluster, from)
		}
		st, err := clickhouse.Open(cfg)
		if err != nil {
			return err
		}
		defer st.Close()
		return st.Exec(ctx, sql, nil)
	}
	for _, n := range b.Nodes {
		st, err := clickhouse.Open(clickhouse.DefaultConfig(n.DSN()))
		if err != nil {
			return err
		}
		err = st.Exec(ctx, sql, nil)
		st.Close()
		if err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	return nil
}

// DropDatabase drops db from every node of b.
func (b *Backend) DropDatabase(ctx context.Context, db string) error {
	if b.local != nil {
		return b.local.DropDatabase(ctx, db)
	}
	st, err := clickhouse.Open(clickhouse.DefaultConfig(b.DSN))
	if err != nil {
		return err
	}
	defer st.Close()
	onCluster := ""
	if b.Cluster != "" {
		onCluster = " ON CLUSTER '" + b.Cluster + "'"
	}
	return st.Exec(ctx, "DROP DATABASE IF EXISTS "+db+onCluster+" SYNC", nil)
}

// Store is a server-backend store whose Migrate is its Backend's: on a
// cluster started here, the node-by-node scaffolding.
type Store struct {
	*clickhouse.Store
	Backend *Backend
	Schema  schema.Options
}

// Migrate implements store.Migrator.
func (s *Store) Migrate(ctx context.Context) ([]int, error) { return s.Backend.Migrate(ctx, s.Schema) }

var dbSeq atomic.Int64

// FreshDatabase returns a database name no other test uses.
func FreshDatabase() string {
	return fmt.Sprintf("mcpdrift_t%d_%d", time.Now().UnixNano()%1_000_000_000, dbSeq.Add(1))
}

// Open opens a store on a fresh, empty database of b, dropped when the test
// ends. The schema is not migrated: call Migrate.
func (b *Backend) Open(t testing.TB) *Store {
	t.Helper()
	cfg := b.Config(FreshDatabase())
	st, err := clickhouse.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := b.DropDatabase(ctx, cfg.Schema.Database); err != nil {
			t.Errorf("cannot drop the test database %s: %v", cfg.Schema.Database, err)
		}
		st.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	return &Store{Store: st, Backend: b, Schema: cfg.Schema}
}

// The backends of a test process, started on first use and stopped by
// StopAll.
var (
	mu       sync.Mutex
	started  = map[string]*Backend{}
	startErr = map[string]error{}
	rootDir  string
)

// Server returns the process's single ClickHouse server: the one
// ServerDSNEnv names, or one started from libchdb on first use.
func Server(t testing.TB) *Backend {
	t.Helper()
	return shared(t, "server")
}

// ShardedCluster returns the process's 2-shard cluster: the one
// ClusterDSNEnv and ClusterEnv name, or one started from libchdb on first
// use.
func ShardedCluster(t testing.TB) *Backend {
	t.Helper()
	return shared(t, "cluster")
}

// Backends returns the server and the cluster, for tests that run on both.
func Backends(t testing.TB) []*Backend {
	t.Helper()
	return []*Backend{Server(t), ShardedCluster(t)}
}

func shared(t testing.TB, name string) *Backend {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if b := started[name]; b != nil {
		return b
	}
	if err := startErr[name]; err != nil {
		t.Fatal(err)
	}
	b, err := start(name)
	if err != nil {
		startErr[name] = err
		t.Fatal(err)
	}
	if b == nil {
		unavailable(t)
	}
	started[name] = b
	return b
}

// Require skips the test when libchdb is missing, unless the environment
// asks for the real engine (MCPDRIFT_REQUIRE_CHDB), when it fails it: for
// tests that start nodes of their own.
func Require(t testing.TB) {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		unavailable(t)
	}
}

// unavailable skips the test when libchdb is missing, unless the
// environment asks for the real engine, when it fails it.
func unavailable(t testing.TB) {
	t.Helper()
	_, err := embedded.LibraryPath()
	if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
		t.Fatalf("MCPDRIFT_REQUIRE_CHDB is set: no ClickHouse server to test against (%s unset): %v", ServerDSNEnv, err)
	}
	t.Skipf("no ClickHouse server to test against: set %s, or fetch libchdb (make libchdb): %v", ServerDSNEnv, err)
}

// start returns the backend name, nil when there is none to start.
func start(name string) (*Backend, error) {
	switch name {
	case "server":
		if dsn := os.Getenv(ServerDSNEnv); dsn != "" {
			return &Backend{Name: name, DSN: dsn}, nil
		}
	case "cluster":
		if dsn := os.Getenv(ClusterDSNEnv); dsn != "" {
			cluster := os.Getenv(ClusterEnv)
			if cluster == "" {
				return nil, fmt.Errorf("%s is set but %s does not name the cluster", ClusterDSNEnv, ClusterEnv)
			}
			return &Backend{Name: name, DSN: dsn, Cluster: cluster}, nil
		}
	}
	if _, err := embedded.LibraryPath(); err != nil {
		return nil, nil
	}
	if rootDir == "" {
		dir, err := os.MkdirTemp("", "clickhousetest-")
		if err != nil {
			return nil, err
		}
		rootDir = dir
	}
	ctx := context.Background()
	if name == "server" {
		n, err := StartServer(ctx, filepath.Join(rootDir, "server"))
		if err != nil {
			return nil, err
		}
		return &Backend{Name: name, DSN: n.DSN(), Nodes: []*Node{n}}, nil
	}
	c, err := StartCluster(ctx, filepath.Join(rootDir, "cluster"), 2)
	if err != nil {
		return nil, err
	}
	return &Backend{Name: name, DSN: c.DSN(), Cluster: c.Name, Nodes: c.Nodes, local: c}, nil
}

// StopAll stops the nodes this process started and removes their data.
// TestMain calls it after the tests.
func StopAll() {
	mu.Lock()
	defer mu.Unlock()
	for _, b := range started {
		for _, n := range b.Nodes {
			_ = n.Stop()
		}
	}
	started = map[string]*Backend{}
	if rootDir != "" {
		os.RemoveAll(rootDir)
		rootDir = ""
	}
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}
