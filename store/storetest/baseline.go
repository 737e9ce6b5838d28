package storetest

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// The baselines (store/schema/baseline.go): cut from a store the
// migrations built, and a store built by a baseline compared with one built
// by the migrations.

// ReplayThrough builds the schema of opts through migration last by
// replaying the migrations, whatever baseline there is: migrations 1 to
// last-1, then last on a store that has recorded them.
func ReplayThrough(ctx context.Context, ex schema.Execer, opts schema.Options, last int) ([]int, error) {
	if last < 2 {
		return nil, fmt.Errorf("cannot replay through migration %d without a baseline: want 2 or more", last)
	}
	first, err := schema.ApplyThrough(ctx, ex, opts, last-1)
	if err != nil {
		return first, err
	}
	rest, err := schema.ApplyThrough(ctx, ex, opts, last)
	return append(first, rest...), err
}

// CutBaseline returns the baseline file of version, cut from a store that
// ex builds by replaying the migrations, in the database of
// schema.CutOptions (dropped before and after).
func CutBaseline(ctx context.Context, ex schema.Execer, version int) ([]byte, error) {
	opts := schema.CutOptions()
	drop := "DROP DATABASE IF EXISTS " + opts.Database + " SYNC"
	if err := ex.Exec(ctx, drop, nil); err != nil {
		return nil, err
	}
	defer ex.Exec(context.Background(), drop, nil) //nolint:errcheck // the next cut drops it first
	if _, err := ReplayThrough(ctx, ex, opts, version); err != nil {
		return nil, err
	}
	var objects []schema.BaselineObject
	sql := "SELECT name, engine, formatQuery(create_table_query) AS create FROM system.tables" +
		" WHERE database = {database:String} AND name NOT IN ('schema_migrations', 'schema_lock')"
	if err := ex.Query(ctx, store.Query{Name: "baseline_cut", SQL: sql}, store.Params{}.String("database", opts.Database), &objects); err != nil {
		return nil, fmt.Errorf("cannot list the tables of %s: %w", opts.Database, err)
	}
	return schema.CutBaseline(version, objects)
}

// schemaRows are database's tables and views and their columns, on every
// replica of cluster (empty: one node), as rows of text, sorted, with the
// database named mcpdrift. The columns of a Distributed table are read
// without their codecs and TTLs: such a table stores nothing, and the
// migrations add columns to the Distributed tables without them, where a
// Distributed table created AS its local table has them.
func schemaRows(ctx context.Context, q store.Querier, database, cluster string) ([]string, error) {
	tables, columns := "system.tables", "system.columns"
	if cluster != "" {
		tables = "clusterAllReplicas('" + cluster + "', system.tables)"
		columns = "clusterAllReplicas('" + cluster + "', system.columns)"
	}
	queries := []store.Query{
		{Name: "baseline_tables", SQL: "SELECT name AS table, engine = 'Distributed' AS distributed, toString(tuple('table', name, engine, engine_full, create_table_query, partition_key, sorting_key, primary_key, sampling_key, arraySort(dependencies_table))) AS row" +
			" FROM " + tables + " WHERE database = {database:String} AND name NOT IN ('schema_migrations', 'schema_lock')"},
		{Name: "baseline_columns", SQL: "SELECT table, toString(tuple('column', table, name, position, type, default_kind, default_expression, comment, is_in_partition_key, is_in_sorting_key, is_in_primary_key)) AS row, compression_codec AS codec" +
			" FROM " + columns + " WHERE database = {database:String} AND table NOT IN ('schema_migrations', 'schema_lock')"},
	}
	distributed := map[string]bool{}
	var out []string
	for _, qq := range queries {
		var rows []struct {
			Table       string `json:"table"`
			Distributed uint8  `json:"distributed"`
			Row         string `json:"row"`
			Codec       string `json:"codec"`
		}
		if err := q.Query(ctx, qq, store.Params{}.String("database", database), &rows); err != nil {
			return nil, fmt.Errorf("cannot read %s of %s: %w", qq.Name, database, err)
		}
		for _, r := range rows {
			row := r.Row
			switch {
			case r.Distributed == 1:
				distributed[r.Table] = true
				row = distributedColumnRE.ReplaceAllString(row, "")
			case qq.Name == "baseline_columns" && !distributed[r.Table]:
				row += " codec " + r.Codec
			}
			out = append(out, strings.ReplaceAll(row, database, "mcpdrift"))
		}
	}
	sort.Strings(out)
	return out, nil
}

// distributedColumnRE matches a column's codec and TTL in a Distributed
// table's DDL.
var distributedColumnRE = regexp.MustCompile(` CODEC\((?:[^()]|\([^()]*\))*\)| TTL toDateTime\(time\) \+ toIntervalDay\(\d+\)`)

// records are the migrations database recorded as applied, version 0
// (a baseline's mark) left out: "version name checksum" lines.
func records(ctx context.Context, q store.Querier, database string) ([]string, error) {
	var rows []struct {
		Version  int    `json:"version"`
		Name     string `json:"name"`
		Checksum string `json:"checksum"`
	}
	sql := "SELECT version, argMax(name, applied_at) AS name, argMax(checksum, applied_at) AS checksum FROM " + database +
		".schema_migrations WHERE version > 0 GROUP BY version ORDER BY version"
	if err := q.Query(ctx, store.Query{Name: "baseline_records", SQL: sql}, nil, &rows); err != nil {
		return nil, fmt.Errorf("cannot read the migrations of %s: %w", database, err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%d %s %s", r.Version, r.Name, r.Checksum)
	}
	return out, nil
}

// Install is what a fresh install ran: its statements and its time.
type Install struct {
	Statements int
	// Kinds counts the statements by their first word (CREATE, ALTER,
	// INSERT, DROP).
	Kinds map[string]int
	Took  time.Duration
}

// String renders in as "N statements (CREATE a, ALTER b, …) in T".
func (in Install) String() string {
	kinds := make([]string, 0, len(in.Kinds))
	for k := range in.Kinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for i, k := range kinds {
		kinds[i] = fmt.Sprintf("%s %d", k, in.Kinds[k])
	}
	return fmt.Sprintf("%d statements (%s) in %v", in.Statements, strings.Join(kinds, ", "), in.Took.Round(time.Millisecond))
}

// CheckBaselineEqualsReplay builds, through ex, the schema of opts at each
// baseline's version twice, in fresh databases named after opts.Database,
// runs times in turn: once with the baseline (schema.ApplyThrough on an
// empty database), once by replaying the migrations (ReplayThrough). It
// fails the test when the two differ in a table, a view or a column (on
// every replica of opts.Cluster), or in the migrations recorded, or when
// the baseline runs no fewer statements than the replay. It returns the
// figures of the last baseline, in the order they ran.
func CheckBaselineEqualsReplay(t *testing.T, ex schema.Execer, opts schema.Options, runs int) (baseline, replay []Install) {
	t.Helper()
	ctx := context.Background()
	bs, err := schema.Baselines(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) == 0 {
		t.Fatal("no baseline embedded")
	}
	onCluster := ""
	if opts.Cluster != "" {
		onCluster = " ON CLUSTER '" + opts.Cluster + "'"
	}
	for _, b := range bs {
		baseline, replay = nil, nil
		for run := range runs {
			var got [2][]string
			var recs [2][]string
			for i, how := range []string{"baseline", "replay"} {
				o := opts
				o.Database = fmt.Sprintf("%s_%s%d", opts.Database, how, run)
				c := &Counting{Execer: ex}
				start := time.Now()
				var versions []int
				if how == "baseline" {
					versions, err = schema.ApplyThrough(ctx, c, o, b.Version)
				} else {
					versions, err = ReplayThrough(ctx, c, o, b.Version)
				}
				took := time.Since(start)
				if err != nil {
					t.Fatalf("%s through %d: %v", how, b.Version, err)
				}
				if len(versions) != b.Version {
					t.Errorf("%s through %d applied %d migrations, want %d", how, b.Version, len(versions), b.Version)
				}
				in := Install{Statements: len(c.Stmts), Kinds: map[string]int{}, Took: took}
				for _, s := range c.Stmts {
					in.Kinds[strings.ToUpper(strings.Fields(s)[0])]++
				}
				if how == "baseline" {
					baseline = append(baseline, in)
				} else {
					replay = append(replay, in)
				}
				if got[i], err = schemaRows(ctx, ex, o.Database, o.Cluster); err != nil {
					t.Fatal(err)
				}
				if recs[i], err = records(ctx, ex, o.Database); err != nil {
					t.Fatal(err)
				}
				if err := ex.Exec(ctx, "DROP DATABASE IF EXISTS "+o.Database+onCluster+" SYNC", nil); err != nil {
					t.Fatal(err)
				}
			}
			if len(got[0]) == 0 {
				t.Fatalf("baseline %04d built no table", b.Version)
			}
			diffRows(t, fmt.Sprintf("baseline %04d, run %d: schema", b.Version, run+1), got[0], got[1])
			diffRows(t, fmt.Sprintf("baseline %04d, run %d: migrations recorded", b.Version, run+1), recs[0], recs[1])
			if baseline[run].Statements >= replay[run].Statements {
				t.Errorf("baseline %04d ran %d statements, the replay %d: want fewer", b.Version, baseline[run].Statements, replay[run].Statements)
			}
		}
	}
	return baseline, replay
}

// diffRows reports the rows that only the baseline's or the replay's store
// has.
func diffRows(t *testing.T, what string, baseline, replay []string) {
	t.Helper()
	count := map[string]int{}
	for _, r := range baseline {
		count[r]++
	}
	for _, r := range replay {
		count[r]--
	}
	var only []string
	for r, n := range count {
		switch {
		case n > 0:
			only = append(only, "baseline only: "+r)
		case n < 0:
			only = append(only, "replay only:   "+r)
		}
	}
	sort.Strings(only)
	if len(only) > 0 {
		t.Errorf("%s: %d rows differ (of %d and %d):\n%s", what, len(only), len(baseline), len(replay), strings.Join(only, "\n"))
	}
}
