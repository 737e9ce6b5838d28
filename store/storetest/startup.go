package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// Counting is an Execer that counts the statements run through it.
type Counting struct {
	schema.Execer
	Stmts []string
}

// Exec implements schema.Execer.
func (c *Counting) Exec(ctx context.Context, sql string, params store.Params) error {
	c.Stmts = append(c.Stmts, sql)
	return c.Execer.Exec(ctx, sql, params)
}

// CheckStartupRunsNoDDL applies the schema of opts through ex, on an empty
// database, then checks what later start-ups run: nothing when the schema,
// the retention and the settings are as opts say; one MODIFY TTL per table
// whose retention changes when it does; nothing again after that.
func CheckStartupRunsNoDDL(t *testing.T, ex schema.Execer, opts schema.Options) {
	t.Helper()
	ctx := context.Background()
	first := &Counting{Execer: ex}
	if _, err := schema.Apply(ctx, first, opts); err != nil {
		t.Fatal(err)
	}
	start := func(opts schema.Options) []string {
		t.Helper()
		c := &Counting{Execer: ex}
		versions, err := schema.Apply(ctx, c, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(versions) != 0 {
			t.Errorf("a later start-up applied migrations %v", versions)
		}
		return c.Stmts
	}
	if got := start(opts); len(got) != 0 {
		t.Errorf("the second start-up ran %d statements, want none (the first ran %d):\n%s", len(got), len(first.Stmts), strings.Join(got, ";\n"))
	}
	// A shorter retention: every table whose TTL is not capped below it.
	shorter := opts
	shorter.RetentionDays = 10
	got := start(shorter)
	const want = 13 // the 16 tables with a retention, but the 2 minute tiers (2 days) and audit_calls (its own setting)
	ttl := 0
	for _, s := range got {
		if strings.Contains(s, " MODIFY TTL ") {
			ttl++
		}
	}
	if ttl != want || len(got) != want {
		t.Errorf("a start-up with a retention of 10 days ran %d statements, %d of them MODIFY TTL, want %d:\n%s", len(got), ttl, want, strings.Join(got, ";\n"))
	}
	if got := start(shorter); len(got) != 0 {
		t.Errorf("the start-up after the retention changed ran %d statements, want none:\n%s", len(got), strings.Join(got, ";\n"))
	}
	t.Logf("statements run: first start-up %d, second 0, with a new retention %d, after it 0", len(first.Stmts), len(got))
}
