package schema

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// recorder is an Execer that records every statement and reports no
// migration as applied.
type recorder struct{ stmts []string }

func (r *recorder) Exec(_ context.Context, sql string, params store.Params) error {
	if len(params) > 0 {
		keys := make([]string, 0, len(params))
		for k, v := range params {
			keys = append(keys, k+"="+v)
		}
		sortStrings(keys)
		sql += "\n-- params: " + strings.Join(keys, ", ")
	}
	r.stmts = append(r.stmts, sql)
	return nil
}

func (r *recorder) Query(context.Context, store.Query, store.Params, any) error { return nil }

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// checkGolden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./store/schema -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the rendering; diff it against the output of go test ./store/schema -run %s -update", path, t.Name())
	}
}

// applied renders what Apply executes on an empty database for opts.
func applied(t *testing.T, opts Options) string {
	t.Helper()
	var r recorder
	if _, err := Apply(context.Background(), &r, opts); err != nil {
		t.Fatal(err)
	}
	return strings.Join(r.stmts, ";\n\n") + ";\n"
}

// TestGoldenSingleNode pins every statement the single-node (embedded)
// rendering runs: the file was generated before cluster mode existed, so
// cluster support cannot change what the embedded store executes.
func TestGoldenSingleNode(t *testing.T) {
	checkGolden(t, "single.sql", applied(t, DefaultOptions()))
}

// TestGoldenCluster pins the cluster rendering.
func TestGoldenCluster(t *testing.T) {
	opts := DefaultOptions()
	opts.Cluster = "mcpdrift"
	checkGolden(t, "cluster.sql", applied(t, opts))
}

// TestGoldenDeduplicationWindow pins what a single-node server runs.
func TestGoldenDeduplicationWindow(t *testing.T) {
	opts := DefaultOptions()
	opts.DeduplicationWindow = 1000
	got := applied(t, opts)
	single := applied(t, DefaultOptions())
	if !strings.HasPrefix(got, strings.TrimSuffix(single, ";\n")) {
		t.Fatal("the deduplication window changed the single-node statements before it")
	}
	checkGolden(t, "single_dedup.sql", got)
	opts.Cluster = "c"
	if strings.Contains(applied(t, opts), "non_replicated_deduplication_window") {
		t.Error("cluster mode sets non_replicated_deduplication_window")
	}
}

// TestChecksumsPredateCluster pins the checksums of the migration files as
// released: stores record them, so a released migration is never edited
// (add a new one), and cluster-mode rendering leaves them unchanged.
func TestChecksumsPredateCluster(t *testing.T) {
	want := map[int]string{
		1: "72e84571746bce555beadff6369e74d3084a1322d70b22890571616f55636b4c",
		2: "7aea8e349e287b38a027a7a3c34ce7ef7a8b65868f45467bc1e3f232a99b434b",
		3: "f3582cbeaaad3e12204d9b4901dbe4ac8723ed84b4c9eda3220064d328d313aa",
		4: "40748c02dbaf23f47e9c17e5de13cce53391c521ccee59296b55ab39207044b0",
		5: "781c1f9a7b3a69dd0b741a40dff309c9e4174ac12932cf632402584a2171637b",
	}
	for _, cluster := range []string{"", "c"} {
		opts := DefaultOptions()
		opts.Cluster = cluster
		ms, err := Migrations(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if w, ok := want[m.Version]; ok && m.Checksum != w {
				t.Errorf("cluster %q: migration %d checksum %s, want %s (recorded by existing stores)", cluster, m.Version, m.Checksum, w)
			}
		}
	}
}

// TestClusterStatements checks properties every cluster statement must have.
func TestClusterStatements(t *testing.T) {
	opts := DefaultOptions()
	opts.Cluster = "prod-1"
	var r recorder
	if _, err := Apply(context.Background(), &r, opts); err != nil {
		t.Fatal(err)
	}
	for _, s := range r.stmts {
		head := strings.SplitN(s, "\n", 2)[0]
		switch {
		case strings.HasPrefix(s, "INSERT"):
			continue
		case !strings.Contains(head, " ON CLUSTER 'prod-1'"):
			t.Errorf("DDL without ON CLUSTER: %s", head)
		}
		if strings.Contains(s, "ENGINE = ") && !strings.Contains(s, "ENGINE = Replicated") &&
			!strings.Contains(s, "ENGINE = Distributed(") && !strings.Contains(s, "ENGINE = Null") {
			t.Errorf("non-replicated engine: %s", head)
		}
		if strings.HasPrefix(s, "CREATE MATERIALIZED VIEW") {
			for _, kw := range []string{" TO ", "\nFROM "} {
				i := strings.Index(s, kw)
				rest := s[i+len(kw):]
				name := strings.Fields(rest)[0]
				if !strings.HasSuffix(strings.TrimSuffix(name, ";"), LocalSuffix) {
					t.Errorf("view reads or writes %s, not a local table: %s", name, head)
				}
			}
		}
		if strings.Contains(s, "{{") {
			t.Errorf("unrendered template action: %s", head)
		}
	}
	for _, table := range append([]string{"events_in"}, MergeTreeTables...) {
		want := "CREATE TABLE IF NOT EXISTS mcpdrift." + table + " ON CLUSTER 'prod-1' AS mcpdrift." + table + "_local\nENGINE = Distributed('prod-1', mcpdrift, " + table + "_local, cityHash64(tenant, tool))"
		found := false
		for _, s := range r.stmts {
			found = found || s == want
		}
		if !found {
			t.Errorf("no Distributed table in front of %s_local", table)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	f := func(mod func(*Options), wantErr string) {
		t.Helper()
		o := DefaultOptions()
		mod(&o)
		err := o.Validate()
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", o, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%+v: error %v, want one containing %q", o, err, wantErr)
		}
	}
	f(func(*Options) {}, "")
	f(func(o *Options) { o.Cluster = "prod_cluster-2.eu" }, "")
	f(func(o *Options) { o.Cluster = "x'; DROP" }, "invalid cluster")
	f(func(o *Options) { o.Cluster = "{cluster}" }, "invalid cluster")
	f(func(o *Options) { o.Database = "my-db" }, "invalid database")
	f(func(o *Options) { o.RetentionDays = 0 }, "invalid retention")
	f(func(o *Options) { o.AuditRetentionDays = -1 }, "invalid audit retention")
	f(func(o *Options) { o.DeduplicationWindow = -1 }, "invalid deduplication window")
	f(func(o *Options) { o.DeduplicationWindow = 100 }, "")
}
