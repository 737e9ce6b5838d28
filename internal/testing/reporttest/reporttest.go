// Package reporttest loads the report fixture of queries
// (queries/testdata/fixtures.json: two tenants, a week of drift traffic
// before a fixed Now) into an embedded store, once per test process, so
// that the API and CLI tests run against real reports over real data with
// the same clock as the queries' golden tests.
package reporttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/testing/fixture"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// Tenants of the fixture.
const (
	TenantA = "acme"
	TenantB = "globex"
)

// Fixture is the fixture loaded into a store.
type Fixture struct {
	// Now is the fixture's clock: its week of traffic ends here.
	Now time.Time
	// Store holds the fixture's events; Database is its database.
	Store    *embedded.Store
	Database string
	// Dir is the store's data directory.
	Dir string
	// Runner runs the reports over Store with the clock pinned at Now.
	Runner *queries.Runner
}

// The engine serves one data path per process: the tests of a process
// share one fixture store.
var (
	once    sync.Once
	shared  *Fixture
	loadErr error
)

// Open returns the process's fixture store, loading it on first use. It
// skips the test when libchdb is missing, unless MCPDRIFT_REQUIRE_CHDB is
// set, when it fails it.
func Open(t testing.TB) *Fixture {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB is set: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	once.Do(func() { shared, loadErr = load(context.Background()) })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return shared
}

// Close closes the fixture store, if a test opened it, and removes its
// directory; TestMain calls it after the tests.
func Close() {
	if shared == nil {
		return
	}
	shared.Store.Close()
	os.RemoveAll(shared.Dir)
}

// Path returns the path of queries/testdata/fixtures.json.
func Path() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "queries", "testdata", "fixtures.json")
}

func load(ctx context.Context) (*Fixture, error) {
	data, err := os.ReadFile(Path())
	if err != nil {
		return nil, fmt.Errorf("cannot read the fixture: %w", err)
	}
	batches, err := fixture.Decode(data)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mcpdrift-reporttest-")
	if err != nil {
		return nil, err
	}
	cfg := embedded.DefaultConfig(dir)
	st, err := embedded.Open(ctx, cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	fail := func(err error) (*Fixture, error) {
		st.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	if _, err := st.Migrate(ctx); err != nil {
		return fail(err)
	}
	for _, b := range batches {
		// Two inserts per tenant, as the queries tests do, so that the
		// rollups hold partial states the reports must merge.
		half := len(b.Events) / 2
		for _, part := range [][]otelschema.Event{b.Events[:half], b.Events[half:]} {
			if err := st.Write(ctx, store.Batch{Tenant: b.Tenant, Events: part}); err != nil {
				return fail(fmt.Errorf("cannot load tenant %s: %w", b.Tenant, err))
			}
		}
	}
	r, err := queries.New(st, cfg.Schema.Database, queries.WithClock(func() time.Time { return fixture.Now }),
		queries.WithChanges(registry.ChangeOf), queries.WithSameContract(registry.SameContract))
	if err != nil {
		return fail(err)
	}
	return &Fixture{Now: fixture.Now, Store: st, Database: cfg.Schema.Database, Dir: dir, Runner: r}, nil
}
