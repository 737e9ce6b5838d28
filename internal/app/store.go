package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/mcpdrift/mcpdrift/internal/selftrace"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// Store is what a process needs of its store: the whole backend, and the
// deduplication capability that every backend has.
type Store interface {
	store.Store
	store.EventIDLister
	// Execer runs statements that return no rows: the client views'
	// releaser inserts with it.
	schema.Execer
}

// StoreSection is the store part of a Config: one backend's configuration.
type StoreSection interface {
	// RegisterFlags registers the backend's flags.
	RegisterFlags(fs *flag.FlagSet)
	// Validate reports the first invalid setting by the name of its flag.
	Validate() error
	// Open opens the store. It need not reach it: Ping does.
	Open(ctx context.Context) (Store, error)
	// Schema is the schema the store holds.
	Schema() schema.Options
	// SpoolDir is the ingester's spool directory unless -ingest.spool.dir
	// says otherwise.
	SpoolDir() string
	// Describe returns attributes that say where the store is, for the
	// start-up log line.
	Describe() []any
	// Location says where the data is, as a label and a place, for the
	// all-in-one role's start-up banner.
	Location() (label, where string)
	// Backend names the backend in self-traces: selftrace.BackendEmbedded
	// or selftrace.BackendServer.
	Backend() string
}

// ServerStore is the store section of a ClickHouse server or cluster.
type ServerStore struct {
	clickhouse.Config
}

// NewServerStore returns the server section with its defaults: no DSN, the
// default schema.
func NewServerStore() *ServerStore {
	return &ServerStore{Config: clickhouse.DefaultConfig("")}
}

// RegisterFlags implements StoreSection.
func (s *ServerStore) RegisterFlags(fs *flag.FlagSet) { s.Config.RegisterFlags(fs) }

// Validate implements StoreSection.
func (s *ServerStore) Validate() error {
	if s.DSN == "" {
		return errors.New("store.dsn: required (MCPDRIFT_STORE_DSN): this role runs against a ClickHouse server; for one machine, run `mcpdrift serve`, which embeds the store")
	}
	return s.Config.Validate()
}

// Open implements StoreSection.
func (s *ServerStore) Open(context.Context) (Store, error) { return clickhouse.Open(s.Config) }

// Schema implements StoreSection.
func (s *ServerStore) Schema() schema.Options { return s.Config.Schema }

// SpoolDir implements StoreSection: the spool is under the default data
// directory.
func (s *ServerStore) SpoolDir() string { return filepath.Join(DefaultDataDir(), "spool") }

// Describe implements StoreSection.
func (s *ServerStore) Describe() []any {
	return []any{"store", s.RedactedDSN(), "database", s.Config.Schema.Database, "cluster", s.Config.Schema.Cluster}
}

// Location implements StoreSection.
func (s *ServerStore) Location() (string, string) { return "store", s.RedactedDSN() }

// Backend implements StoreSection.
func (s *ServerStore) Backend() string { return selftrace.BackendServer }

// schemaReady reports whether st answers and holds the events_in table,
// which ingest writes to.
func schemaReady(ctx context.Context, st Store, database string) error {
	if err := st.Ping(ctx); err != nil {
		return err
	}
	var rows []struct {
		N int `json:"n"`
	}
	q := store.Query{Name: "schema_ready", SQL: "SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = 'events_in'"}
	if err := st.Query(ctx, q, store.Params{}.String("db", database), &rows); err != nil {
		return err
	}
	if len(rows) != 1 || rows[0].N == 0 {
		return fmt.Errorf("table %s.events_in does not exist: the schema is not migrated yet (the api migrates it)", database)
	}
	return nil
}
