// Package embeddedstore is the store section of the all-in-one binary: the
// embedded store (chDB) at a data directory. It lives apart from app so
// that the scale-out binaries, which run on a ClickHouse server, do not
// link the embedded store and its cgo.
package embeddedstore

import (
	"context"
	"flag"
	"path/filepath"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/selftrace"
	"github.com/mcpdrift/mcpdrift/store/embedded"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// Section is the embedded store's section of an app.Config.
type Section struct {
	embedded.Config
}

var _ app.StoreSection = (*Section)(nil)

// New returns the section with its defaults: app.DefaultDataDir and the
// default schema.
func New() *Section { return &Section{Config: embedded.DefaultConfig(app.DefaultDataDir())} }

// RegisterFlags implements app.StoreSection.
func (s *Section) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&s.Dir, "data.dir", s.Dir, "data directory of the embedded store (one process owns it)")
	s.Config.Schema.RegisterRetentionFlags(fs)
}

// Validate implements app.StoreSection.
func (s *Section) Validate() error { return s.Config.Validate() }

// Open implements app.StoreSection.
func (s *Section) Open(ctx context.Context) (app.Store, error) { return embedded.Open(ctx, s.Config) }

// Schema implements app.StoreSection.
func (s *Section) Schema() schema.Options { return s.Config.Schema }

// SpoolDir implements app.StoreSection: the spool is under the data
// directory.
func (s *Section) SpoolDir() string { return filepath.Join(s.Dir, "spool") }

// Describe implements app.StoreSection.
func (s *Section) Describe() []any {
	return []any{"store", "embedded", "dir", s.Dir, "retention_days", s.Config.Schema.RetentionDays,
		"audit_retention_days", s.Config.Schema.AuditRetentionDays, "daily_retention_days", s.Config.Schema.DailyDays()}
}

// Location implements app.StoreSection.
func (s *Section) Location() (string, string) { return "data", s.Dir }

// Backend implements app.StoreSection.
func (s *Section) Backend() string { return selftrace.BackendEmbedded }
