package queries_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
)

// TestWindowEdges puts the same incident (a stale call through an adapter,
// rejected after its side effect had started, its repair and retry, and a
// list_changed notice) at from − 1s, from, to − 1ns and to, and checks
// that every report, from the rollups and from the events, counts exactly
// the two inside [from, to): the window is the same for all of them, and
// exact while the minutely tier holds its edges. Then, with the clock moved
// on so that the edges are older than the minutely tier, that the window
// the reports state is whole hours and that each counts what lies in it.
// It runs on the embedded store, a ClickHouse server and a 2-shard cluster:
// the engine, not only the SQL, decides what a bound lets through.
func TestWindowEdges(t *testing.T) {
	t.Run("embedded", func(t *testing.T) { testWindowEdges(t, openStore(t), database) })
	for _, b := range clickhousetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			s := b.Open(t)
			if _, err := s.Migrate(ctx(t)); err != nil {
				t.Fatal(err)
			}
			testWindowEdges(t, s, s.Schema.Database)
		})
	}
}

// writerQuerier is a store the window test writes and reads.
type writerQuerier interface {
	store.Writer
	store.Querier
}

func testWindowEdges(t *testing.T, st writerQuerier, database string) {
	c := ctx(t)
	tenant := fmt.Sprintf("edges-%d", time.Now().UnixNano())
	// to lies in the last second of a minute, its fraction over a half:
	// the incident at to − 1ns is then one the engine once dropped, its
	// part skipped against the minutely tier's DateTime bound (inSpans).
	to := time.Now().UTC().Add(-20 * time.Minute).Truncate(time.Minute).Add(59*time.Second + 750*time.Millisecond)
	from := to.Add(-(23*time.Minute + 250*time.Millisecond))
	at := []time.Time{from.Add(-time.Second), from, to.Add(-time.Nanosecond), to}

	for i, t0 := range at {
		session := fmt.Sprintf("edge-s%d", i)
		common := otelschema.Event{Tool: "edge_tool", SessionID: session, ClientName: "edge-client", ClientVersion: "1.0.0",
			Service: "edge-svc", Environment: "prod", RevisionClient: "1", RevisionServer: "2"}
		call := common
		call.ID, call.Name, call.Time = uint64(10*i+1), otelschema.EventCall, t0.UnixNano()
		call.Method, call.RequestID = "tools/call", fmt.Sprintf("edge-req-%d", i)
		call.Outcome, call.ErrorCode, call.AdapterID = otelschema.OutcomeRejectedStale, "STALE_TOOL_SCHEMA", "edge/1-2"
		call.SideEffectStarted, call.Privilege, call.SessionAgeS = true, otelschema.PrivilegeRead, 60
		call.RevisionClientSource = otelschema.RevisionSourceListed
		repair := common
		repair.ID, repair.Name, repair.Time = uint64(10*i+2), otelschema.EventRepair, t0.UnixNano()
		repair.RepairAction, repair.RepairAutomatic, repair.RepairResult = otelschema.RepairActionRefreshRetry, true, otelschema.RepairResultSuccess
		repair.RepairDurationMs, repair.RetryOf = 100, call.RequestID
		notice := common
		notice.ID, notice.Name, notice.Time = uint64(10*i+3), otelschema.EventListChanged, t0.UnixNano()
		notice.Method, notice.RevisionBefore = "notifications/tools/list_changed", "1"
		// The retry the repair made, of another tool, so that the calls
		// of edge_tool stay one per incident.
		retry := common
		retry.ID, retry.Name, retry.Time = uint64(10*i+4), otelschema.EventCall, t0.UnixNano()
		retry.Tool, retry.Method, retry.RequestID = "edge_retry_tool", "tools/call", fmt.Sprintf("edge-retry-%d", i)
		retry.Outcome, retry.RevisionClient, retry.RevisionServer = otelschema.OutcomeCurrent, "2", "2"
		retry.RetryOf, retry.RetryAttempt, retry.RetryAfter = call.RequestID, 1, otelschema.OutcomeRejectedStale
		// The client's contract error, and a refresh that failed.
		contract := common
		contract.ID, contract.Name, contract.Time = uint64(10*i+5), otelschema.EventContractError, t0.UnixNano()
		contract.ContractField, contract.ErrorCode = "edge.id", "OUTPUT_SHAPE"
		refresh := common
		refresh.ID, refresh.Name, refresh.Time = uint64(10*i+6), otelschema.EventRefresh, t0.UnixNano()
		refresh.Tool, refresh.Method, refresh.RefreshResult = "", "tools/list", otelschema.RefreshResultFailed
		// Each incident is an insert of its own, so a part of its own in
		// every table: the engine's index analysis judges it alone.
		if err := st.Write(c, store.Batch{Tenant: tenant, Events: []otelschema.Event{call, repair, notice, retry, contract, refresh}}); err != nil {
			t.Fatal(err)
		}
	}

	// counts runs every report over f and says what each counted.
	counts := func(t *testing.T, r *queries.Runner, f queries.Filter) map[string]uint64 {
		t.Helper()
		got := map[string]uint64{}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		tools, err := r.Tools(c, f)
		must(err)
		for _, row := range tools {
			if row.Tool == "edge_tool" {
				got["tools"] += row.Calls
			}
		}
		for name, run := range map[string]func(queries.Filter) ([]apiv1.StaleUsageRow, error){
			"stale-usage": func(f queries.Filter) ([]apiv1.StaleUsageRow, error) { return r.StaleUsage(c, f) },
			"stale-usage raw": func(f queries.Filter) ([]apiv1.StaleUsageRow, error) {
				return r.RawStaleUsage(c, f)
			},
		} {
			rows, err := run(f)
			must(err)
			for _, row := range rows {
				if row.Tool == "edge_tool" {
					got[name] += row.Calls
				}
			}
		}
		for name, run := range map[string]func(queries.Filter) ([]apiv1.RejectionRow, error){
			"rejections":     func(f queries.Filter) ([]apiv1.RejectionRow, error) { return r.Rejections(c, f) },
			"rejections raw": func(f queries.Filter) ([]apiv1.RejectionRow, error) { return r.RawRejections(c, f) },
		} {
			rows, err := run(f)
			must(err)
			for _, row := range rows {
				got[name] += row.Rejected
			}
		}
		for name, run := range map[string]func(queries.Filter) ([]apiv1.RepairRow, error){
			"repairs":     func(f queries.Filter) ([]apiv1.RepairRow, error) { return r.Repairs(c, f) },
			"repairs raw": func(f queries.Filter) ([]apiv1.RepairRow, error) { return r.RawRepairs(c, f) },
		} {
			rows, err := run(f)
			must(err)
			for _, row := range rows {
				got[name+" stale"] += row.StaleRejections
				got[name+" refresh"] += row.RefreshRetries
				got[name+" retries after stale"] += row.RetriesAfterStale
			}
		}
		o := queries.RetirementOptions{MaxCalls: 100, MaxShare: -1}
		for name, run := range map[string]func(queries.Filter) ([]apiv1.AdapterRow, error){
			"adapter-retirement":     func(f queries.Filter) ([]apiv1.AdapterRow, error) { return r.AdapterRetirement(c, f, o) },
			"adapter-retirement raw": func(f queries.Filter) ([]apiv1.AdapterRow, error) { return r.RawAdapterRetirement(c, f, o) },
		} {
			rows, err := run(f)
			must(err)
			for _, row := range rows {
				got[name] += row.Calls
			}
		}
		for name, run := range map[string]func(queries.Filter) (queries.ViolationPage, error){
			"violations":     func(f queries.Filter) (queries.ViolationPage, error) { return r.Violations(c, f, queries.Page{}) },
			"violations raw": func(f queries.Filter) (queries.ViolationPage, error) { return r.RawViolations(c, f, queries.Page{}) },
		} {
			page, err := run(f)
			must(err)
			for _, row := range page.Rows {
				if row.Kind == "side_effect_rejected" {
					got[name]++
				}
			}
		}
		audit, err := r.Audit(c, queries.AuditFilter{Filter: f}, queries.Page{})
		must(err)
		for _, row := range audit.Rows {
			if row.Tool == "edge_tool" {
				got["audit"]++
			}
		}
		for name, run := range map[string]func(queries.Filter) ([]apiv1.PropagationRow, error){
			"propagation":     func(f queries.Filter) ([]apiv1.PropagationRow, error) { return r.Propagation(c, f) },
			"propagation raw": func(f queries.Filter) ([]apiv1.PropagationRow, error) { return r.RawPropagation(c, f) },
		} {
			rows, err := run(f)
			must(err)
			for _, row := range rows {
				got[name] += row.NotifiedSessions
			}
		}
		for name, run := range map[string]func(queries.Filter) ([]apiv1.RevisionSourceRow, error){
			"revision-sources":     func(f queries.Filter) ([]apiv1.RevisionSourceRow, error) { return r.RevisionSources(c, f) },
			"revision-sources raw": func(f queries.Filter) ([]apiv1.RevisionSourceRow, error) { return r.RawRevisionSources(c, f) },
		} {
			rows, err := run(f)
			must(err)
			for _, row := range rows {
				if row.Tool == "edge_tool" {
					got[name] += row.Listed
				}
			}
		}
		contract, err := r.ContractErrors(c, f)
		must(err)
		for _, row := range contract {
			got["contract-errors"] += row.ContractErrors
			got["contract-errors failed refreshes"] += row.FailedRefreshes
		}
		return got
	}
	check := func(t *testing.T, got map[string]uint64, want uint64) {
		t.Helper()
		if len(got) != 22 {
			t.Errorf("%d figures, want 22: %v", len(got), got)
		}
		for name, n := range got {
			if n != want {
				t.Errorf("%s counted %d, want %d (all: %v)", name, n, want, got)
			}
		}
	}

	t.Run("exact", func(t *testing.T) {
		r, err := queries.New(st, database)
		if err != nil {
			t.Fatal(err)
		}
		if gf, gt := r.Window(from, to); !gf.Equal(from) || !gt.Equal(to) {
			t.Fatalf("window %v..%v, want %v..%v as asked", gf, gt, from, to)
		}
		check(t, counts(t, r, queries.Filter{Tenant: tenant, From: from, To: to}), 2)
	})

	t.Run("widened to the hour", func(t *testing.T) {
		// Ten days on, the minutely tier no longer serves these edges.
		later := time.Now().Add(10 * 24 * time.Hour)
		r, err := queries.New(st, database, queries.WithClock(func() time.Time { return later }))
		if err != nil {
			t.Fatal(err)
		}
		gf, gt := r.Window(from, to)
		if !gf.Equal(from.Truncate(time.Hour)) || !gt.Equal(to.Add(time.Hour-time.Nanosecond).Truncate(time.Hour)) {
			t.Fatalf("window %v..%v, want whole hours around %v..%v", gf, gt, from, to)
		}
		var want uint64
		for _, t0 := range at {
			if !t0.Before(gf) && t0.Before(gt) {
				want++
			}
		}
		check(t, counts(t, r, queries.Filter{Tenant: tenant, From: from, To: to}), want)
	})
}
