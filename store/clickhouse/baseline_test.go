package clickhouse_test

import (
	"context"
	"flag"
	"slices"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/store/schema"
	"github.com/mcpdrift/mcpdrift/store/storetest"
)

var baselineRuns = flag.Int("baseline-runs", 1, "fresh installs of each kind TestBaselineEqualsReplay runs, in turn")

// TestBaselineEqualsReplay compares, on the ClickHouse server and on the
// cluster, a fresh install by each baseline with one by the migrations it
// stands for, and logs the statements and the time of each
// (-baseline-runs in turn).
func TestBaselineEqualsReplay(t *testing.T) {
	for _, b := range clickhousetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			ex, closeEx, err := b.Execer(st.Schema.Database)
			if err != nil {
				t.Fatal(err)
			}
			defer closeEx()
			baseline, replay := storetest.CheckBaselineEqualsReplay(t, ex, st.Schema, *baselineRuns)
			for i := range baseline {
				t.Logf("%s, run %d: baseline %v, replay %v",
					b.Name, i+1, baseline[i], replay[i])
			}
		})
	}
}

// TestBaselineTwoMigrators starts two migrators at once on a fresh store of
// the ClickHouse server and of the cluster: the schema lock lets one run
// the baseline, and the other finds its migrations recorded.
func TestBaselineTwoMigrators(t *testing.T) {
	for _, b := range clickhousetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := b.Open(t)
			bs, err := schema.Baselines(st.Schema)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := schema.Migrations(st.Schema)
			if err != nil {
				t.Fatal(err)
			}
			first := bs[len(bs)-1].Statements[0]
			var wg sync.WaitGroup
			var applied [2][]int
			var ran [2]bool
			var errs [2]error
			for i := range 2 {
				ex, closeEx, err := b.Execer(st.Schema.Database)
				if err != nil {
					t.Fatal(err)
				}
				defer closeEx()
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := &storetest.Counting{Execer: ex}
					applied[i], errs[i] = schema.Apply(ctx, c, st.Schema)
					ran[i] = slices.Contains(c.Stmts, first)
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("migrator %d: %v", i+1, err)
				}
			}
			if len(applied[0])+len(applied[1]) != len(ms) || ran[0] == ran[1] {
				t.Errorf("the two migrators applied %v and %v, and ran the baseline %v and %v: want %d migrations in all, the baseline by one", applied[0], applied[1], ran[0], ran[1], len(ms))
			}
		})
	}
}
