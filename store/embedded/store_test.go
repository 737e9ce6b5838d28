package embedded_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
	"github.com/mcpdrift/mcpdrift/store/storetest"
)

// requireLibrary skips when libchdb is absent, unless the environment asks
// for the real engine (make test and CI do).
func requireLibrary(t *testing.T) {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB is set: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
}

func TestConformance(t *testing.T) {
	requireLibrary(t)
	cfg := embedded.DefaultConfig(t.TempDir())
	s, err := embedded.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	(&storetest.Suite{Store: s, Database: cfg.Schema.Database}).RunAll(t)
	t.Run("RetriedBatchIsStoredOnce", func(t *testing.T) { testRetriedBatch(t, s, cfg.Schema.Database) })
}

// testRetriedBatch writes one batch three times under one token, as the
// ingester does when an acknowledgement is lost, and expects every table
// fed from events_in, down to the daily tier of every rollup family, to
// count it once.
func testRetriedBatch(t *testing.T, s *embedded.Store, db string) {
	ctx := context.Background()
	const tenant = "dedup"
	base := time.Now().UTC().Add(-3 * time.Hour)
	outcomes := []otelschema.Outcome{otelschema.OutcomeCurrent, otelschema.OutcomeNormalized, otelschema.OutcomeRejectedStale}
	var events []otelschema.Event
	for i := range 600 {
		e := otelschema.Event{
			ID: uint64(i + 1), Name: otelschema.EventCall, Time: base.Add(time.Duration(i) * 17 * time.Second).UnixNano(),
			Tool: fmt.Sprintf("tool-%d", i%3), SessionID: fmt.Sprintf("s%d", i%11), ClientName: "cursor", ClientVersion: fmt.Sprint(i % 2),
			RevisionClient: "1", RevisionServer: "2", Outcome: outcomes[i%3],
		}
		switch e.Outcome {
		case otelschema.OutcomeNormalized:
			e.AdapterID = "v1-to-v2"
		case otelschema.OutcomeRejectedStale:
			e.ErrorCode = "STALE_TOOL_SCHEMA"
		}
		if i%5 == 0 {
			e.Name = otelschema.EventRepair
			e.RepairAction, e.RepairAutomatic, e.RepairResult = otelschema.RepairActionRefreshRetry, true, otelschema.RepairResultSuccess
			e.RepairDurationMs = int64(100 + i)
		}
		events = append(events, e)
	}
	b := store.Batch{Tenant: tenant, Token: "retried-batch", Events: events}
	for range 3 {
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	// 480 calls (600 events, every fifth a repair): 160 of each outcome.
	want := map[string]string{
		"events": "count()",
		// The calls, with their arguments for the audit.
		"events:audited": "countIf(audited)",
		"recent_calls":   "count()",
		"calls_1h":       "sum(calls)",
		"calls_1d":       "sum(calls)",
		"usage_1h":       "sum(calls)",
		"usage_1d":       "sum(calls)",
		"rejected_1h":    "sum(calls)",
		"adapted_1h":     "sum(calls)",
		"repairs_1m":     "sum(repairs)",
		"repairs_1h":     "sum(repairs)",
		"repairs_1d":     "sum(repairs)",
	}
	expect := map[string]uint64{"events": 600, "rejected_1h": 160, "adapted_1h": 160}
	for table, agg := range want {
		n, ok := expect[table]
		switch {
		case ok:
		case strings.HasPrefix(table, "repair"):
			n = 120
		default:
			n = 480
		}
		var rows []struct {
			N uint64 `json:"n"`
		}
		name, _, _ := strings.Cut(table, ":")
		q := store.Query{Name: "dedup_" + name, SQL: "SELECT toUInt64(" + agg + ") AS n FROM " + db + "." + name + " WHERE tenant = {tenant:String}"}
		if err := s.Query(ctx, q, store.Params{}.String("tenant", tenant), &rows); err != nil {
			t.Fatal(err)
		}
		if rows[0].N != n {
			t.Errorf("%s counts %d after a batch written three times under one token, want %d", table, rows[0].N, n)
		}
	}
}
