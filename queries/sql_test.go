package queries_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/queries"
)

// TestRenderedSQL pins the SQL of the rollup-served reports as rendered for
// each family of rollups (testdata/sql/, rewritten by -update), so that a
// change to tiers.tmpl shows in review as the queries it changes. It also
// checks that each report has a rendering for the fine rollups that reads
// no coarse table, and that the coarse one reads no fine hourly or daily
// tier, but for the adapter retirement's calls without a client revision
// (unknown_per_client): counted per client, which only the call rollups
// keep.
func TestRenderedSQL(t *testing.T) {
	r, err := queries.New(nil, "mcpdrift")
	if err != nil {
		t.Fatal(err)
	}
	coarseTables := []string{"usage_1h", "usage_1d"}
	fineTables := []string{"calls_1h", "calls_1d"}
	for _, name := range []string{"stale_usage", "rejections", "repairs", "adapter_retirement"} {
		coarse, ok := r.Query(name)
		if !ok {
			t.Fatalf("no query %s", name)
		}
		fine, ok := r.Query(name + queries.FineSuffix)
		if !ok {
			t.Fatalf("no query %s%s", name, queries.FineSuffix)
		}
		coarseSQL := coarse.SQL
		if name == "adapter_retirement" {
			before, unknown, ok := strings.Cut(coarseSQL, "unknown_per_client AS")
			if !ok {
				t.Fatalf("%s has no unknown_per_client", name)
			}
			for _, tb := range coarseTables {
				if strings.Contains(unknown, "mcpdrift."+tb+"\n") {
					t.Errorf("%s counts the calls without a client revision from %s, which has no client", name, tb)
				}
			}
			coarseSQL = before
		}
		for _, tb := range fineTables {
			if strings.Contains(coarseSQL, "mcpdrift."+tb+"\n") {
				t.Errorf("%s (coarse) reads %s", name, tb)
			}
		}
		for _, tb := range coarseTables {
			if strings.Contains(fine.SQL, "mcpdrift."+tb+"\n") {
				t.Errorf("%s (fine) reads %s", name, tb)
			}
		}
		goldenSQL(t, name+".sql", coarse.SQL)
		goldenSQL(t, name+"_fine.sql", fine.SQL)
	}
	// Revision sources read the fine rollups alone, the client being one
	// of the report's dimensions: one rendering, which reads no coarse
	// table.
	sources, ok := r.Query("revision_sources")
	if !ok {
		t.Fatal("no query revision_sources")
	}
	if _, ok := r.Query("revision_sources" + queries.FineSuffix); ok {
		t.Error("revision_sources has a second rendering for the fine rollups")
	}
	for _, tb := range coarseTables {
		if strings.Contains(sources.SQL, "mcpdrift."+tb+"\n") {
			t.Errorf("revision_sources reads %s", tb)
		}
	}
	goldenSQL(t, "revision_sources.sql", sources.SQL)
	// The series, each for the rollups it reads: those whose text differs
	// for the fine rollups have a second rendering.
	for _, name := range []string{"tools_series", "stale_usage_series", "rejections_series", "repairs_series",
		"adapter_retirement_series", "propagation_series", "violations_series", "audit_series",
		"revision_sources_series", "contract_errors_series"} {
		q, ok := r.Query(name)
		if !ok {
			t.Fatalf("no query %s", name)
		}
		goldenSQL(t, name+".sql", q.SQL)
		if fine, ok := r.Query(name + queries.FineSuffix); ok {
			goldenSQL(t, name+"_fine.sql", fine.SQL)
		}
	}
}

func goldenSQL(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "sql", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./queries -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the rendering (go test ./queries -run TestRenderedSQL -update rewrites it)", path)
	}
}
