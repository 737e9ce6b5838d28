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
	// The audit retention, at most the retention, follows it: audit_calls'
	// TTL and one statement for the columns of events that keep the
	// arguments (their TTL).
	shorter := opts
	shorter.RetentionDays, shorter.AuditRetentionDays = 10, 10
	got := start(shorter)
	const want = 14 // the 16 tables with a retention, but the 2 minute tiers (2 days)
	ttl, columns := 0, 0
	for _, s := range got {
		switch {
		case strings.Contains(s, " MODIFY TTL "):
			ttl++
		case strings.Contains(s, " MODIFY COLUMN args_raw TTL ") && strings.Contains(s, " MODIFY COLUMN args_normalized TTL "):
			columns++
		}
	}
	if ttl != want || columns != 1 || len(got) != want+1 {
		t.Errorf("a start-up with a retention of 10 days ran %d statements, %d of them MODIFY TTL and %d MODIFY COLUMN TTL, want %d and 1:\n%s", len(got), ttl, columns, want, strings.Join(got, ";\n"))
	}
	retained := len(got)
	if got := start(shorter); len(got) != 0 {
		t.Errorf("the start-up after the retention changed ran %d statements, want none:\n%s", len(got), strings.Join(got, ";\n"))
	}
	// A shorter audit retention alone: audit_calls and the columns.
	audit := shorter
	audit.AuditRetentionDays = 3
	if got := start(audit); len(got) != 2 || !strings.Contains(got[0], "audit_calls") || !strings.Contains(got[1], " MODIFY COLUMN args_raw TTL toDateTime(time) + INTERVAL 3 DAY") {
		t.Errorf("a start-up with an audit retention of 3 days ran %d statements, want audit_calls' TTL and the columns':\n%s", len(got), strings.Join(got, ";\n"))
	}
	if got := start(audit); len(got) != 0 {
		t.Errorf("the start-up after the audit retention changed ran %d statements, want none:\n%s", len(got), strings.Join(got, ";\n"))
	}
	// A daily retention: the three daily rollups, and nothing after.
	daily := audit
	daily.DailyRetentionDays = 400
	got = start(daily)
	tables := map[string]bool{}
	for _, s := range got {
		for _, table := range []string{"calls_1d", "repairs_1d", "usage_1d"} {
			if strings.Contains(s, "."+table) && strings.Contains(s, " MODIFY TTL day + INTERVAL 400 DAY") {
				tables[table] = true
			}
		}
	}
	if len(got) != 3 || len(tables) != 3 {
		t.Errorf("a start-up with a daily retention of 400 days ran %d statements, want one MODIFY TTL for each daily rollup:\n%s", len(got), strings.Join(got, ";\n"))
	}
	if got := start(daily); len(got) != 0 {
		t.Errorf("the start-up after the daily retention changed ran %d statements, want none:\n%s", len(got), strings.Join(got, ";\n"))
	}
	// A daily retention shorter than the retention is refused, with no
	// statement run.
	c := &Counting{Execer: ex}
	shortDaily := daily
	shortDaily.DailyRetentionDays = 9
	if _, err := schema.Apply(ctx, c, shortDaily); err == nil || len(c.Stmts) != 0 {
		t.Errorf("a daily retention of 9 days under a retention of 10: err %v, %d statements run; want an error and none", err, len(c.Stmts))
	}
	// An audit retention longer than the retention is refused, with no
	// statement run.
	longer := shorter
	longer.AuditRetentionDays = 11
	c = &Counting{Execer: ex}
	if _, err := schema.Apply(ctx, c, longer); err == nil || len(c.Stmts) != 0 {
		t.Errorf("an audit retention of 11 days over a retention of 10: err %v, %d statements run; want an error and none", err, len(c.Stmts))
	}
	t.Logf("statements run: first start-up %d, second 0, with a new retention %d, a new daily retention %d, after each 0", len(first.Stmts), retained, len(got))
}
