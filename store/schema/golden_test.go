package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// recorder is an Execer that records every statement and reports no
// migration as applied. Its queries return no rows, but for the tables
// still to be set for compact inserts, a retention or a deduplication
// window: every one named, as on a server that knows the setting and a
// store that predates it; and for the schema lock: held by the last owner
// written, on every replica. The lock's owner, random, is recorded as
// <owner>.
type recorder struct {
	stmts []string
	owner string
	// fresh has the store hold no table but the migrations' own, so that
	// Apply takes the baseline; otherwise it holds one, and replays.
	fresh bool
}

func (r *recorder) Exec(_ context.Context, sql string, params store.Params) error {
	if owner, ok := params["owner"]; ok {
		r.owner = owner
		params = maps.Clone(params)
		params["owner"] = "<owner>"
	}
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

func (r *recorder) Query(_ context.Context, q store.Query, params store.Params, dst any) error {
	switch q.Name {
	case "schema_compact_inserts", "schema_retention", "schema_deduplication_window":
	case "schema_lock_owner":
		return json.Unmarshal([]byte(fmt.Sprintf(`[{"owner":%q}]`, r.owner)), dst)
	case "schema_lock_replicated":
		return json.Unmarshal([]byte(`[{"ok":1}]`), dst)
	case "schema_fresh":
		if r.fresh {
			return json.Unmarshal([]byte(`[{"n":0}]`), dst)
		}
		return json.Unmarshal([]byte(`[{"n":1}]`), dst)
	default:
		return nil
	}
	list := strings.Trim(params["tables"], "[]")
	var rows []string
	for _, name := range strings.Split(list, ",") {
		rows = append(rows, fmt.Sprintf(`{"name":%q}`, strings.Trim(name, "'")))
	}
	return json.Unmarshal([]byte("["+strings.Join(rows, ",")+"]"), dst)
}

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
	// But for the lock's table, whose claims deduplicate on every engine
	// (lock.go).
	lockDDL := bootStatements(opts)[2]
	if strings.Contains(strings.Replace(applied(t, opts), lockDDL, "", 1), "non_replicated_deduplication_window") {
		t.Error("cluster mode sets non_replicated_deduplication_window")
	}
}

// TestChecksums pins the checksums of the migrations: stores record them,
// so a released migration's statements never change (add a new one), its
// comments may, and cluster-mode rendering leaves them unchanged.
func TestChecksums(t *testing.T) {
	want := map[int]string{
		1:  "60a3877ff7215b3322198f5b014caafcae3da2c05355495d9912c6ba2cab6334",
		2:  "6431bc8088b953b18dd7de2a08e727581824d286267c1a243b54111e8f8df2bc",
		3:  "273de8f561ef241384865aff05de17438897d0661003cf3d8ec52bbe6fd552ee",
		4:  "dc852f42eedfb6e73d21eb6a0e190b61aad6c5a18cec9f17b742849000fceee4",
		5:  "49a83cd810128841804d36a91ccc2c5725bb8905d4b422233a7831f95a6f2b84",
		6:  "33b794a59eb358e1ee1d03f2e24adee2444dc566867a10d680eea581bac05649",
		7:  "2c57309a79e1e45c6f9910ca5fd895403a403447c2722ae26d2ad76d0c343c2d",
		8:  "f4fc39c462aeaf573442c2aeec1bffb78ad829e479561db9d31fc7013f4e29bc",
		9:  "b62cf43cd8db4922fb82fd9ebbd59885432c505aaaf0ea8373f3ed5795fcb9ca",
		10: "194695d80f3b53baf0431f3b788dd7f8921352486abc74cc5b1f12e979642f8f",
		12: "b828e9c509aeb73336d42f1b49ce0cf13e21803696b86882a9603b420004f393",
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
		// Comments do not count; statements do.
		raw := []byte("-- a comment\nCREATE TABLE {{table \"t\"}}{{.OnCluster}} (x UInt8)\n    -- another\nENGINE = MergeTree ORDER BY x;\n")
		edited := bytes.Replace(raw, []byte("a comment"), []byte("a corrected comment"), 1)
		changed := bytes.Replace(raw, []byte("UInt8"), []byte("UInt16"), 1)
		if checksum(raw) != checksum(edited) || checksum(raw) == checksum(changed) {
			t.Errorf("a comment's edit changes the checksum (%v), or a statement's does not (%v)", checksum(raw) != checksum(edited), checksum(raw) == checksum(changed))
		}
	}
}

// TestReleasedChecksumsMatch: a store that recorded the checksums of the
// migrations as released (comments included) migrates with nothing to do.
func TestReleasedChecksumsMatch(t *testing.T) {
	var applied []string
	for v, sum := range releasedChecksums {
		applied = append(applied, fmt.Sprintf(`{"version":%d,"checksum":%q}`, v, sum))
	}
	r := &appliedRecorder{applied: "[" + strings.Join(applied, ",") + "]"}
	opts := DefaultOptions()
	versions, err := Apply(context.Background(), r, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		if _, released := releasedChecksums[v]; released {
			t.Errorf("released migration %d applied again", v)
		}
	}
	// A record that matches neither is refused.
	r = &appliedRecorder{applied: `[{"version":1,"checksum":"0000"}]`}
	if _, err := Apply(context.Background(), r, opts); !errors.Is(err, ErrChecksum) {
		t.Errorf("a foreign checksum: %v, want ErrChecksum", err)
	}
}

// appliedRecorder is a recorder whose migrations table holds applied, a
// JSON array of rows.
type appliedRecorder struct {
	recorder
	applied string
}

func (r *appliedRecorder) Query(ctx context.Context, q store.Query, params store.Params, dst any) error {
	if q.Name != "schema_migrations" {
		return r.recorder.Query(ctx, q, params, dst)
	}
	return json.Unmarshal([]byte(r.applied), dst)
}

// viewTableRE finds the tables a view statement names after TO and FROM.
var viewTableRE = regexp.MustCompile(`\b(?:TO|FROM)\s+([A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*)`)

// TestClusterStatements checks properties every cluster statement must
// have, on the migrations' path and on the baseline's.
func TestClusterStatements(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		t.Run(fmt.Sprintf("baseline=%v", fresh), func(t *testing.T) { clusterStatements(t, fresh) })
	}
}

func clusterStatements(t *testing.T, fresh bool) {
	opts := DefaultOptions()
	opts.Cluster = "prod-1"
	r := recorder{fresh: fresh}
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
			// Every table a view names after TO or FROM (a subquery's
			// FROM included); a FROM followed by a subquery names none.
			names := viewTableRE.FindAllStringSubmatch(s, -1)
			if len(names) < 2 {
				t.Errorf("view names %d tables, want its target and its source: %s", len(names), head)
			}
			for _, m := range names {
				if !strings.HasSuffix(m[1], LocalSuffix) {
					t.Errorf("view reads or writes %s, not a local table: %s", m[1], head)
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
	f(func(o *Options) { o.DailyRetentionDays = 400 }, "")
	f(func(o *Options) { o.DailyRetentionDays = o.RetentionDays }, "")
	f(func(o *Options) { o.DailyRetentionDays = o.RetentionDays - 1 }, "invalid daily retention of 29 days")
	f(func(o *Options) { o.DailyRetentionDays = -1 }, "invalid daily retention")
	f(func(o *Options) { o.DeduplicationWindow = 100 }, "")
}
