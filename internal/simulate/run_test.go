package simulate

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"

	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// openStore opens the embedded store in a fresh directory, migrated, closed
// at the end of the test. It skips when libchdb is missing, unless
// MCPDRIFT_REQUIRE_CHDB=1.
func openStore(t *testing.T) (*embedded.Store, string) {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") == "1" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB=1: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	ctx := context.Background()
	cfg := embedded.DefaultConfig(t.TempDir())
	st, err := embedded.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st, cfg.Schema.Database
}

// startIngest starts the OTLP ingester on loopback for tenant, writing to
// st, shut down at the end of the test.
func startIngest(t *testing.T, st store.Writer, tenant string) *ingest.Server {
	t.Helper()
	cfg := ingest.DefaultConfig()
	cfg.GRPCListen, cfg.HTTPListen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.BatchMaxDelay = 20 * time.Millisecond
	cfg.Tenant = tenant
	srv, err := ingest.New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("ingest shutdown: %v", err)
		}
	})
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return srv
}

type countRow struct {
	K string `json:"k"`
	S string `json:"s"`
	N int64  `json:"n"`
}

// counts runs a query returning k, s, n rows for tenant.
func counts(t *testing.T, st store.Querier, name, sql, tenant string) []countRow {
	t.Helper()
	var rows []countRow
	if err := st.Query(context.Background(), store.Query{Name: name, SQL: sql}, store.Params{}.String("tenant", tenant), &rows); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rows
}

// checkStored compares what tenant's events in the store add up to with
// the ledger: by event name, by tool and outcome, normalised calls by
// adapter, and the safety violations as the report defines them.
func checkStored(t *testing.T, st store.Querier, db, tenant string, l Ledger) {
	t.Helper()
	from := " FROM " + db + ".events WHERE tenant = {tenant:String}"

	// The store keeps events under their stored names; the ledger counts
	// them under the names they were sent with.
	byEvent := map[string]int64{}
	for _, r := range counts(t, st, "by_event", "SELECT toString(event_name) AS k, '' AS s, count() AS n"+from+" GROUP BY k", tenant) {
		for e := otelschema.EventName(1); e.String() != ""; e++ {
			if e.Stored() == r.K {
				r.K = e.String()
			}
		}
		byEvent[r.K] = r.N
	}
	if !reflect.DeepEqual(byEvent, l.ByEvent) {
		t.Errorf("events by name: store %v, ledger %v", byEvent, l.ByEvent)
	}

	calls := map[string]map[string]int64{}
	for _, r := range counts(t, st, "by_tool_outcome", "SELECT tool AS k, toString(outcome) AS s, count() AS n"+from+
		" AND event_name = 'mcp.drift.call' GROUP BY k, s", tenant) {
		if calls[r.K] == nil {
			calls[r.K] = map[string]int64{}
		}
		calls[r.K][r.S] = r.N
	}
	if !reflect.DeepEqual(calls, l.Calls) {
		t.Errorf("calls by tool and outcome: store %v, ledger %v", calls, l.Calls)
	}

	normalized := map[string]int64{}
	for _, r := range counts(t, st, "normalized", "SELECT adapter_id AS k, '' AS s, count() AS n"+from+
		" AND event_name = 'mcp.drift.call' AND outcome = 'normalized' GROUP BY k", tenant) {
		normalized[r.K] = r.N
	}
	if !reflect.DeepEqual(normalized, l.Normalized) {
		t.Errorf("normalized calls by adapter: store %v, ledger %v", normalized, l.Normalized)
	}

	repairs := map[string]int64{}
	for _, r := range counts(t, st, "repairs", "SELECT toString(repair_action) AS k, '' AS s, count() AS n"+from+
		" AND event_name = 'mcp.drift.repair' GROUP BY k", tenant) {
		repairs[r.K] = r.N
	}
	if !reflect.DeepEqual(repairs, l.Repairs) {
		t.Errorf("repairs by action: store %v, ledger %v", repairs, l.Repairs)
	}

	violations := map[string]int64{}
	for _, r := range counts(t, st, "violations", `SELECT k, '' AS s, n FROM (SELECT
		countIf(event_name = 'mcp.drift.call' AND outcome IN ('rejected_stale', 'rejected_incompatible') AND side_effect_started) AS side_effect_on_rejection,
		countIf(event_name = 'mcp.drift.call' AND revision_validated != '' AND revision_validated != revision_server) AS mixed_revision,
		countIf(event_name = 'mcp.drift.call' AND change_class = 'removal' AND outcome IN ('current', 'normalized')) AS removed_success,
		countIf(event_name = 'mcp.drift.repair' AND repair_automatic AND change_class IN ('semantic', 'authority')) AS auto_retry_across_change`+
		from+`) ARRAY JOIN ['side_effect_on_rejection', 'mixed_revision', 'removed_success', 'auto_retry_across_change'] AS k,
		[side_effect_on_rejection, mixed_revision, removed_success, auto_retry_across_change] AS n WHERE n > 0`, tenant) {
		violations[r.K] = r.N
	}
	if !reflect.DeepEqual(violations, l.Violations) {
		t.Errorf("violations: store %v, ledger %v", violations, l.Violations)
	}

	stateless := counts(t, st, "stateless", "SELECT '' AS k, '' AS s, countIf(session_id != '' OR run_id = '' OR client_name = '') AS n"+from+
		" AND protocol_version = '2026-07-28'", tenant)
	if stateless[0].N != 0 {
		t.Errorf("%d events of protocol 2026-07-28 with a session id or without run or client", stateless[0].N)
	}
}

func TestRunEndToEnd(t *testing.T) {
	st, db := openStore(t)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	run := func(t *testing.T, tenant string, mutate func(*Config, *ingest.Server)) Ledger {
		t.Helper()
		srv := startIngest(t, st, tenant)
		cfg := DefaultConfig()
		cfg.Seed = 7
		cfg.Events = 5000
		cfg.ViolationRate = 0.02
		cfg.Endpoint = srv.GRPCAddr().String()
		mutate(&cfg, srv)
		l, err := Run(context.Background(), cfg, logger)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		x := l.Export
		t.Logf("%s: %d events in %.2fs (final flush %.2fs) = %.0f events/s over %d providers (OTLP/%s)",
			tenant, l.Events, x.Seconds, x.FlushSeconds, x.EventsPerSecond, x.Providers, x.Protocol)
		if x.Exported != l.Events || x.Rejected != 0 || x.Failed != 0 {
			t.Fatalf("export: %+v, want all %d events exported", x, l.Events)
		}
		if st := srv.Stats(); st.Accepted != uint64(l.Events) || st.Rejected != 0 {
			t.Fatalf("ingest accepted %d, rejected %d of %d", st.Accepted, st.Rejected, l.Events)
		}
		return l
	}

	t.Run("grpc", func(t *testing.T) {
		l := run(t, "sim-grpc", func(*Config, *ingest.Server) {})
		if l.Events != 5000 {
			t.Fatalf("ledger counts %d events, want 5000", l.Events)
		}
		checkStored(t, st, db, "sim-grpc", l)
		// The same seed without OTLP: the pure generator's ledger.
		cfg := DefaultConfig()
		cfg.Seed, cfg.Events, cfg.ViolationRate, cfg.Start = 7, 5000, 0.02, l.Start
		_, pure := generate(t, cfg)
		l.Export = nil
		if !reflect.DeepEqual(pure, l) {
			t.Errorf("Run's ledger differs from Generate's for the same config:\nrun  %+v\npure %+v", l, pure)
		}
	})
	t.Run("http", func(t *testing.T) {
		l := run(t, "sim-http", func(cfg *Config, srv *ingest.Server) {
			cfg.Protocol, cfg.Endpoint = ProtocolHTTP, srv.HTTPAddr().String()
			cfg.Seed = 8
		})
		checkStored(t, st, db, "sim-http", l)
	})
	t.Run("paced", func(t *testing.T) {
		// A second of real time at 1500 events/s covers three simulated
		// days; Events is the planned density only.
		l := run(t, "sim-paced", func(cfg *Config, _ *ingest.Server) {
			cfg.Events, cfg.Duration, cfg.Rate = 0, time.Second, 1500
		})
		// Never faster than the rate (the event at time zero is free);
		// slower only on a loaded machine.
		if l.Events == 0 || l.Events > 1501 {
			t.Errorf("paced run emitted %d events, want at most 1501", l.Events)
		}
		checkStored(t, st, db, "sim-paced", l)
	})
}

func TestRunUnreachable(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Events = 300
	cfg.Endpoint = "127.0.0.1:1" // nothing listens
	cfg.Protocol = ProtocolHTTP
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := Run(ctx, cfg, nil)
	if !errors.Is(err, ErrUndelivered) {
		t.Fatalf("err = %v, want ErrUndelivered", err)
	}
	if l.Events != 300 || l.Export.Failed != 300 {
		t.Fatalf("ledger %d events, export %+v", l.Events, l.Export)
	}
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l, err := Run(ctx, DefaultConfig(), nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "after 0 events") {
		t.Fatalf("err = %v", err)
	}
	if l.Events != 0 {
		t.Fatalf("ledger counts %d events", l.Events)
	}
}
