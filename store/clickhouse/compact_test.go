package clickhouse_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// dryRun answers queries from a store and records the statements it is
// given without running them.
type dryRun struct {
	store.Querier
	stmts []string
}

func (d *dryRun) Exec(_ context.Context, sql string, _ store.Params) error {
	d.stmts = append(d.stmts, sql)
	return nil
}

// TestCompactInsertsSetOnce: once a server or a cluster is migrated, every
// table of every node writes its inserts compact, and a start-up after the
// first would run no DDL for it. That the start-up steps run, and alter
// what differs, is TestStartupRunsNoDDL's.
func TestCompactInsertsSetOnce(t *testing.T) {
	for _, b := range clickhousetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := b.Open(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			d := &dryRun{Querier: s.Store}
			if _, err := schema.Apply(ctx, d, s.Schema); err != nil {
				t.Fatal(err)
			}
			var again []string
			for _, sql := range d.stmts {
				if strings.Contains(sql, "min_level_for_wide_part") {
					again = append(again, sql)
				}
			}
			if len(again) > 0 {
				t.Errorf("after the first migration, a start-up would alter %d tables again: %q", len(again), again)
			}
		})
	}
}
