package embedded_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdrift/mcpdrift/store/embedded"
	"github.com/mcpdrift/mcpdrift/store/storetest"
)

var baselineRuns = flag.Int("baseline-runs", 1, "fresh installs of each kind TestBaselineEqualsReplay runs, in turn")

// TestBaselineCut checks every file under store/schema/baseline against
// the baseline cut from a store built by replaying the migrations
// (-update rewrites them; an empty NNNN.sql is cut at version NNNN).
func TestBaselineCut(t *testing.T) {
	requireLibrary(t)
	ctx := context.Background()
	s, err := embedded.Open(ctx, embedded.DefaultConfig(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The files as they are, an empty one (not cut yet) included, which
	// schema.Baselines refuses.
	dir := filepath.Join("..", "schema", "baseline")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		var version int
		if _, err := fmt.Sscanf(e.Name(), "%04d.sql", &version); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		got, err := storetest.CutBaseline(ctx, s, version)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, e.Name())
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != string(got) {
			t.Errorf("store/schema/baseline/%s differs from the migrations' end state: run go test ./store/embedded -run TestBaselineCut -update, and read the diff", e.Name())
		}
	}
}

// TestBaselineEqualsReplay compares, on the embedded store, a fresh
// install by each baseline with one by the migrations it stands for, and
// logs the statements and the time of each (-baseline-runs in turn).
func TestBaselineEqualsReplay(t *testing.T) {
	requireLibrary(t)
	cfg := embedded.DefaultConfig(t.TempDir())
	s, err := embedded.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	baseline, replay := storetest.CheckBaselineEqualsReplay(t, s, cfg.Schema, *baselineRuns)
	for i := range baseline {
		t.Logf("embedded, run %d: baseline %v, replay %v",
			i+1, baseline[i], replay[i])
	}
}
