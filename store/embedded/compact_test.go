package embedded_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// execRecorder runs every statement on the store and keeps those that
// alter a table's part format.
type execRecorder struct {
	*embedded.Store
	formats []string
}

func (r *execRecorder) Exec(ctx context.Context, sql string, params store.Params) error {
	if strings.Contains(sql, "min_level_for_wide_part") {
		r.formats = append(r.formats, sql)
	}
	return r.Store.Exec(ctx, sql, params)
}

// TestCompactInsertsWideMerges: the first migration of a store sets every
// table to write its inserts compact, a second start-up runs no such DDL,
// inserts larger than the engine's wide-part bound stay compact, and a
// merge of them is wide.
func TestCompactInsertsWideMerges(t *testing.T) {
	requireLibrary(t)
	ctx := context.Background()
	cfg := embedded.DefaultConfig(t.TempDir())
	s, err := embedded.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := cfg.Schema.Database
	r := &execRecorder{Store: s}
	if _, err := schema.Apply(ctx, r, cfg.Schema); err != nil {
		t.Fatal(err)
	}
	if len(r.formats) != len(schema.MergeTreeTables) {
		t.Fatalf("the first migration set the part format of %d tables, want %d: %q", len(r.formats), len(schema.MergeTreeTables), r.formats)
	}
	r.formats = nil
	if _, err := schema.Apply(ctx, r, cfg.Schema); err != nil {
		t.Fatal(err)
	}
	if len(r.formats) != 0 {
		t.Fatalf("a second start-up altered the part format again: %q", r.formats)
	}

	// Two inserts of about 12 MiB each into events, uncompressed (the
	// engine's bound is 10 MiB), in one partition.
	base := time.Now().UTC().Truncate(24 * time.Hour).Add(time.Hour)
	pad := strings.Repeat("x", 90)
	for batch := range 2 {
		events := make([]otelschema.Event, 60_000)
		for i := range events {
			n := batch*len(events) + i
			events[i] = otelschema.Event{ID: uint64(n + 1), Name: otelschema.EventCall, Time: base.Add(time.Duration(n) * time.Millisecond).UnixNano(),
				Tool: "t", Outcome: otelschema.OutcomeCurrent,
				SessionID: fmt.Sprintf("%s-%d", pad, n), RequestID: fmt.Sprintf("%s-%d", pad, n)}
		}
		if err := s.Write(ctx, store.Batch{Tenant: "compact", Events: events}); err != nil {
			t.Fatal(err)
		}
	}
	type part struct {
		Name  string `json:"name"`
		Type  string `json:"part_type"`
		Level uint32 `json:"level"`
		Bytes uint64 `json:"bytes"`
	}
	parts := func() []part {
		var ps []part
		q := store.Query{Name: "parts", SQL: "SELECT name, part_type, level, data_uncompressed_bytes AS bytes FROM system.parts" +
			" WHERE database = {db:String} AND table = 'events' AND active ORDER BY name"}
		if err := s.Query(ctx, q, store.Params{}.String("db", db), &ps); err != nil {
			t.Fatal(err)
		}
		return ps
	}
	inserted := parts()
	if len(inserted) != 2 {
		t.Fatalf("events has %d active parts after two inserts into one partition, want 2: %+v", len(inserted), inserted)
	}
	for _, p := range inserted {
		if p.Type != "Compact" || p.Bytes <= 10<<20 {
			t.Errorf("inserted part %+v: want Compact and above 10 MiB", p)
		}
	}
	if err := s.Exec(ctx, "OPTIMIZE TABLE "+db+".events FINAL", nil); err != nil {
		t.Fatal(err)
	}
	merged := parts()
	if len(merged) != 1 || merged[0].Type != "Wide" || merged[0].Level == 0 {
		t.Errorf("after OPTIMIZE FINAL: %+v, want one Wide part of level 1 or more", merged)
	}
}
