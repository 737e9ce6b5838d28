package schema

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestBaselinePath checks which stores take the baseline and what it
// records: a fresh store, and one whose baseline was cut short (its mark
// recorded), take it; a store with a migration recorded replays.
func TestBaselinePath(t *testing.T) {
	opts := DefaultOptions()
	ms, err := Migrations(opts)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := Baselines(opts)
	if err != nil {
		t.Fatal(err)
	}
	b := bs[len(bs)-1]
	var all, after []int
	var vs, sums []string
	for _, m := range ms {
		all = append(all, m.Version)
		if m.Version > b.Version {
			after = append(after, m.Version)
			continue
		}
		vs = append(vs, fmt.Sprintf("'%d'", m.Version))
		sums = append(sums, "'"+m.Checksum+"'")
	}
	mark := fmt.Sprintf(`{"version":0,"checksum":%q}`, b.Checksum)
	tests := []struct {
		name     string
		fresh    bool
		applied  string // the rows of schema_migrations
		baseline bool
		want     []int
	}{
		{name: "fresh store", fresh: true, applied: "[]", baseline: true, want: all},
		{name: "tables but no record", fresh: false, applied: "[]", want: all},
		{name: "baseline cut short", fresh: false, applied: "[" + mark + "]", baseline: true, want: all},
		{name: "migrations recorded", fresh: true, applied: fmt.Sprintf(`[{"version":1,"checksum":%q}]`, ms[0].Checksum), want: all[1:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &appliedRecorder{recorder: recorder{fresh: tt.fresh}, applied: tt.applied}
			got, err := Apply(context.Background(), r, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("applied %v, want %v", got, tt.want)
			}
			start := slices.Index(r.stmts, b.Statements[0])
			if (start >= 0) != tt.baseline {
				t.Fatalf("baseline run: %v, want %v", start >= 0, tt.baseline)
			}
			if !tt.baseline {
				return
			}
			// The mark, the baseline's statements, one record of the
			// migrations it stands for, then the migrations after it.
			if !strings.Contains(r.stmts[start-1], "version=0") || !strings.Contains(r.stmts[start-1], "checksum="+b.Checksum) {
				t.Errorf("before the baseline: %s, want its mark", r.stmts[start-1])
			}
			if !slices.Equal(r.stmts[start:start+len(b.Statements)], b.Statements) {
				t.Error("the baseline's statements did not run in order")
			}
			rec := r.stmts[start+len(b.Statements)]
			for _, want := range []string{"versions=[" + strings.Join(vs, ",") + "]", "checksums=[" + strings.Join(sums, ",") + "]"} {
				if !strings.Contains(rec, want) {
					t.Errorf("the record of the baseline lacks %s:\n%s", want, rec)
				}
			}
			if n := strings.Count(strings.Join(r.stmts, "\n"), "INSERT INTO mcpdrift.schema_migrations (version, name, checksum) VALUES"); n != 1+len(after) {
				t.Errorf("%d single records, want the mark and one per migration after the baseline (%v)", n, after)
			}
		})
	}
}
