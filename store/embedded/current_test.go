package embedded_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdrift/mcpdrift/store/embedded"
	"github.com/mcpdrift/mcpdrift/store/storetest"
)

var update = flag.Bool("update", false, "rewrite store/schema/current.sql and current.md")

// TestCurrentSchema checks store/schema/current.sql and the map beside
// it, current.md, against a fresh embedded store (-update rewrites them);
// store/clickhouse's TestCurrentSchema checks current.sql against the
// server and the cluster.
func TestCurrentSchema(t *testing.T) {
	requireLibrary(t)
	ctx := context.Background()
	cfg := embedded.DefaultConfig(t.TempDir())
	s, err := embedded.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	sql, err := storetest.CurrentSchema(ctx, s, cfg.Schema.Database, false)
	if err != nil {
		t.Fatal(err)
	}
	md, err := storetest.SchemaMap(ctx, s, cfg.Schema.Database, filepath.Join("..", "..", "queries"))
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{"current.sql": sql, "current.md": md} {
		path := filepath.Join("..", "schema", name)
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != got {
			t.Errorf("store/schema/%s differs from a fresh store's: run go test ./store/embedded -run TestCurrentSchema -update, and read the diff", name)
		}
	}
}
