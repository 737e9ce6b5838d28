package queries_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/internal/testing/fixture"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

var update = flag.Bool("update", false, "regenerate testdata/fixtures.json and the golden files")

const fixturePath = "testdata/fixtures.json"

// The engine serves one data path per process: the package's tests share
// one store, opened on first use, and isolate themselves by tenant.
var (
	storeOnce sync.Once
	shared    *embedded.Store
	storeErr  error
	storeDir  string
	database  string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if *update {
		data, err := fixture.Encode(fixture.Generate())
		if err == nil {
			err = os.MkdirAll(filepath.Dir(fixturePath), 0o755)
		}
		if err == nil {
			err = os.WriteFile(fixturePath, data, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "cannot regenerate the fixture:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	clickhousetest.StopAll()
	if shared != nil {
		shared.Close()
	}
	if storeDir != "" {
		os.RemoveAll(storeDir)
	}
	os.Exit(code)
}

// openStore returns the shared store, migrated and loaded with the fixture.
// It skips when libchdb is missing, unless MCPDRIFT_REQUIRE_CHDB is set.
func openStore(t *testing.T) *embedded.Store {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB is set: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	storeOnce.Do(func() { storeErr = load() })
	if storeErr != nil {
		t.Fatal(storeErr)
	}
	return shared
}

func load() error {
	ctx := context.Background()
	var err error
	if storeDir, err = os.MkdirTemp("", "mcpdrift-queries-"); err != nil {
		return err
	}
	cfg := embedded.DefaultConfig(storeDir)
	database = cfg.Schema.Database
	if shared, err = embedded.Open(ctx, cfg); err != nil {
		return err
	}
	if _, err := shared.Migrate(ctx); err != nil {
		return err
	}
	return loadFixture(ctx, shared)
}

// loadFixture writes testdata/fixtures.json to w.
func loadFixture(ctx context.Context, w store.Writer) error {
	data, err := os.ReadFile(fixturePath)
	if err != nil {
		return err
	}
	batches, err := fixture.Decode(data)
	if err != nil {
		return err
	}
	for _, b := range batches {
		// Two inserts per tenant, so that the rollups hold partial states
		// that the reports must merge.
		half := len(b.Events) / 2
		if err := w.Write(ctx, store.Batch{Tenant: b.Tenant, Events: b.Events[:half]}); err != nil {
			return fmt.Errorf("cannot load tenant %s: %w", b.Tenant, err)
		}
		if err := w.Write(ctx, store.Batch{Tenant: b.Tenant, Events: b.Events[half:]}); err != nil {
			return fmt.Errorf("cannot load tenant %s: %w", b.Tenant, err)
		}
	}
	return nil
}

// runner returns a Runner over the shared store whose clock is the
// fixture's Now.
func runner(t *testing.T) *queries.Runner {
	t.Helper()
	st := openStore(t)
	r, err := queries.New(st, database, queries.WithClock(func() time.Time { return fixture.Now }), queries.WithChanges(registry.ChangeOf), queries.WithSameContract(registry.SameContract))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ctx is a test's context: it ends a minute before go test's -timeout
// would, so that a query still running then fails with its name rather
// than a goroutine dump, and never earlier: on busy cores a test of many
// subtests on three backends takes minutes, and no time is asserted.
func ctx(t *testing.T) context.Context {
	t.Helper()
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(20 * time.Minute)
	}
	c, cancel := context.WithDeadline(context.Background(), deadline.Add(-time.Minute))
	t.Cleanup(cancel)
	return c
}

// week is the fixture's window for tenant.
func week(tenant string) queries.Filter {
	return queries.Filter{Tenant: tenant, From: fixture.Now.Add(-7 * 24 * time.Hour), To: fixture.Now}
}

// golden compares v, as indented JSON, with testdata/golden/name.json, or
// writes it under -update.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	compareGolden(t, name, v, *update)
}

// matchGolden compares v with testdata/golden/name.json, under -update
// too: for the answers of other backends, which must match the embedded
// store's.
func matchGolden(t *testing.T, name string, v any) {
	t.Helper()
	compareGolden(t, name, v, false)
}

func compareGolden(t *testing.T, name string, v any, write bool) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden", name+".json")
	if write {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./queries -update to create it)", err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("%s differs from its golden file (go test ./queries -update regenerates it):\n got: %s\nwant: %s", name, buf.String(), want)
	}
}

func TestFixtureIsUpToDate(t *testing.T) {
	data, err := fixture.Encode(fixture.Generate())
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, have) {
		t.Fatalf("%s is not what the generator produces: run go test ./queries -update", fixturePath)
	}
	batches, err := fixture.Decode(have)
	if err != nil {
		t.Fatal(err)
	}
	again, err := fixture.Encode(batches)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, have) {
		t.Fatal("the fixture does not survive a decode/encode round trip")
	}
}
