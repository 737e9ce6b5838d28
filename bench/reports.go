package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/retirement"
	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// Targets of the design's report and storage requirements.
const (
	targetReportMs      = 100.0 // each report over 10M events ≤ 100 ms
	targetReportSpeedup = 10.0  // and ≥ 10× faster than from the raw table
	targetBytesPerEvent = 40.0  // ≤ 40 bytes per event on disk (raw events)
)

// reportFollowUp is how long after the simulated end the reports' clock is
// fixed: the simulator stamps follow-ups (repairs, retries) up to 30 minutes
// after their call.
const reportFollowUp = 30 * time.Minute

// settleMergesMax bounds how long the reports suite waits for the merges
// that OPTIMIZE FINAL leaves running.
const settleMergesMax = 10 * time.Minute

// LoadResult is the reports suite's load: the simulator's events written
// straight into a fresh embedded store, then merged.
type LoadResult struct {
	Events  int `json:"events"`
	Batches int `json:"batches"`
	// Wall is the seconds from the first Write to the last one's return,
	// the simulator running alongside on its own goroutine.
	Wall float64 `json:"wall_s"`
	// CPU is the process's user + system seconds during the load minus the
	// simulator's (StoreCPU), and GeneratorCPU the simulator goroutine's
	// own thread.
	StoreCPU     float64 `json:"store_cpu_s"`
	GeneratorCPU float64 `json:"generator_cpu_s"`
	// Optimize is the seconds OPTIMIZE TABLE … FINAL took on every table,
	// and Settle the seconds waited afterwards until system.merges was
	// empty.
	Optimize float64 `json:"optimize_s"`
	Settle   float64 `json:"settle_s"`
	// AsLoadedSettle is the seconds waited after the load, before the
	// reports ran through the HTTP API on the store as loaded, until the
	// process was idle (background merges).
	AsLoadedSettle float64 `json:"as_loaded_settle_s,omitempty"`
	// Stored is the count of the events table after the load.
	Stored int64 `json:"stored"`
	// Calls is the call events the simulator generated (its ledger).
	Calls int64 `json:"calls"`
	// Start, End and Clock are the simulated clock's start and end and the
	// fixed clock the reports run with; From and To are the reports'
	// window.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Clock time.Time `json:"clock"`
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	// LastEvent is the time of the latest event generated.
	LastEvent time.Time `json:"last_event"`
}

// EventsPerSecond returns the events loaded per wall-clock second.
func (l *LoadResult) EventsPerSecond() float64 { return float64(l.Events) / l.Wall }

// StoreCPUPerEvent returns the store's CPU microseconds per event.
func (l *LoadResult) StoreCPUPerEvent() float64 { return l.StoreCPU * 1e6 / float64(l.Events) }

// Latency is the distribution of one query's run times.
type Latency struct {
	Runs  int     `json:"runs"`
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
	MinMs float64 `json:"min_ms"`
	MaxMs float64 `json:"max_ms"`
	// CPUP50Ms is the median of the process's CPU time (user + system,
	// chDB's threads and the Go decoding included) per run: steadier than
	// the wall time on a busy machine.
	CPUP50Ms float64 `json:"cpu_p50_ms"`
	// Rows is the rows (or page rows) the query answered.
	Rows int `json:"rows"`
	// Read is what one more run read from MergeTree tables.
	Read ReadStats `json:"read"`
}

// ReadStats is what queries read from MergeTree tables, from the
// differences of system.events counters around them (chDB has no
// query_log).
type ReadStats struct {
	Parts      uint64 `json:"selected_parts"`
	Marks      uint64 `json:"selected_marks"`
	Rows       uint64 `json:"selected_rows"`
	Bytes      uint64 `json:"selected_bytes"`
	Compressed uint64 `json:"read_compressed_bytes"`
}

// ReportTiming is one report's measurement.
type ReportTiming struct {
	// Name is the report's name in the table, such as "stale-usage"; ID
	// its name in figure ids, such as "stale_usage".
	Name string `json:"name"`
	ID   string `json:"id"`
	// Source says which tables serve the report.
	Source  string  `json:"source"`
	Latency Latency `json:"latency"`
	// Raw is the same report computed from the raw events table, for the
	// reports that have that fallback; nil otherwise.
	Raw *Latency `json:"raw,omitempty"`
	// Equal tells whether the rollup and raw answers were equal; nil
	// without a raw version.
	Equal *bool `json:"rollup_equals_raw,omitempty"`
}

// TableStorage is one table's active parts.
type TableStorage struct {
	Table string `json:"table"`
	Rows  uint64 `json:"rows"`
	Parts uint64 `json:"parts"`
	// PartTypes lists the parts' formats: Wide, Compact.
	PartTypes    string `json:"part_types"`
	BytesOnDisk  uint64 `json:"bytes_on_disk"`
	Compressed   uint64 `json:"data_compressed_bytes"`
	Uncompressed uint64 `json:"data_uncompressed_bytes"`
	// BytesPerEvent is BytesOnDisk divided by the events loaded (not by
	// the table's rows).
	BytesPerEvent float64 `json:"bytes_per_event"`
}

// ColumnStorage is one column of the events table in its active parts.
type ColumnStorage struct {
	Column       string  `json:"column"`
	Type         string  `json:"type"`
	Codec        string  `json:"codec"`
	Compressed   uint64  `json:"compressed"`
	Uncompressed uint64  `json:"uncompressed"`
	Ratio        float64 `json:"ratio"`
	// BytesPerEvent is Compressed divided by the events loaded.
	BytesPerEvent float64 `json:"bytes_per_event"`
}

// StorageResult is the storage suite's measurement.
type StorageResult struct {
	Events  int             `json:"events"`
	Tables  []TableStorage  `json:"tables"`
	Columns []ColumnStorage `json:"events_columns"`
	// AuditArgsBytes is the compressed size of the columns of events that
	// keep the calls' arguments for the audit (store/schema's
	// auditColumns): the audit's share of the events table, which has its
	// own retention, reported apart from the raw events' bytes.
	AuditArgsBytes uint64 `json:"audit_args_bytes"`
}

// runReportSuites loads the simulator's events into a fresh embedded store
// and runs the reports suite, the storage suite or both on it.
func runReportSuites(ctx context.Context, cfg Config, rep *Report, w io.Writer) error {
	dir := cfg.ReportDir
	if dir == "" {
		d, err := os.MkdirTemp(cfg.TempDir, "mcpdrift-bench-reports-")
		if err != nil {
			return fmt.Errorf("cannot create store directory: %w", err)
		}
		defer os.RemoveAll(d)
		dir = d
	} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("report-dir %s is not empty: the reports load needs a fresh store", dir)
	}
	st, db, err := openStore(ctx, dir, rep)
	if err != nil {
		return err
	}
	defer st.Close()

	fmt.Fprintf(w, "loading %d simulated events (%d tools, %d sessions, %d clients over %s) in batches of %d…\n",
		cfg.ReportEvents, cfg.ReportTools, cfg.ReportSessions, cfg.ReportClients, cfg.ReportSpan, cfg.ReportBatch)
	load, ledger, err := loadEvents(ctx, cfg, st)
	if load != nil {
		rep.Load = load
	}
	if err != nil {
		return fmt.Errorf("report load: %w", err)
	}
	fmt.Fprintf(w, "loaded in %.1f s (%.0f events/s)\n", load.Wall, load.EventsPerSecond())
	var (
		web  *httpReports
		errs []error
	)
	if cfg.has(SuiteReports) {
		// The reports through the HTTP API on the store as the load left
		// it, once the engine is idle: its parts as merged in the
		// background, not by OPTIMIZE.
		load.AsLoadedSettle = waitIdle(ctx).Seconds()
		if web, err = startHTTPReports(st, db, load, busiestTool(ledger), cfg.Logger); err != nil {
			return fmt.Errorf("reports API: %w", err)
		}
		defer web.close()
		fmt.Fprintf(w, "timing %d reports through the HTTP API on the store as loaded…\n", len(reportNames))
		rep.HTTPReports, err = web.measure(ctx, cfg, rep.HTTPReports, func(t *HTTPTiming, l *Latency) { t.AsLoaded = l })
		if err != nil {
			errs = append(errs, fmt.Errorf("reports over HTTP, as loaded: %w", err))
		}
	}
	fmt.Fprintf(w, "optimising every table…\n")
	if err := settle(ctx, st, db, load); err != nil {
		return err
	}
	fmt.Fprintf(w, "OPTIMIZE FINAL took %.1f s, merges settled %.1f s later\n", load.Optimize, load.Settle)
	if load.Stored, err = count(ctx, st, "SELECT count() AS n FROM "+db+".events"); err != nil {
		return err
	}
	if load.Stored != int64(load.Events) {
		return fmt.Errorf("report load: stored %d events, %d were written", load.Stored, load.Events)
	}

	if cfg.has(SuiteReports) {
		fmt.Fprintf(w, "timing %d reports, %d runs after %d warm-ups each…\n", len(reportNames), cfg.ReportRuns, cfg.ReportWarmups)
		timings, err := measureReports(ctx, cfg, st, db, load, ledger)
		rep.Reports = timings
		if err != nil {
			errs = append(errs, fmt.Errorf("reports: %w", err))
		}
		fmt.Fprintf(w, "timing %d reports through the HTTP API after OPTIMIZE FINAL…\n", len(reportNames))
		rep.HTTPReports, err = web.measure(ctx, cfg, rep.HTTPReports, func(t *HTTPTiming, l *Latency) { t.Optimized = l })
		if err != nil {
			errs = append(errs, fmt.Errorf("reports over HTTP, optimised: %w", err))
		}
		fmt.Fprintln(w, "refreshing the provisioned dashboards through the API…")
		if rep.Dashboards, err = measureDashboards(ctx, cfg, st, db, load); err != nil {
			errs = append(errs, fmt.Errorf("dashboards: %w", err))
		}
	}
	if cfg.has(SuiteStorage) && ctx.Err() == nil {
		s, err := measureStorage(ctx, st, db, load.Events)
		rep.Storage = s
		if err != nil {
			errs = append(errs, fmt.Errorf("storage: %w", err))
		}
	}
	if cfg.has(SuiteConsole) && ctx.Err() == nil {
		fmt.Fprintf(w, "timing the console's pages in Chromium, %d runs after %d warm-ups each…\n", cfg.ReportRuns, cfg.ReportWarmups)
		c, err := measureConsole(ctx, cfg, st, db, load, ledger)
		rep.Console = c
		if err != nil {
			errs = append(errs, fmt.Errorf("console: %w", err))
		}
	}
	return errors.Join(errs...)
}

// simulatorConfig returns the simulator's configuration for the reports
// load: the realistic cardinalities of cfg, over cfg.ReportSpan ending at
// the next whole hour, so that the data is recent (within every tier's
// TTL) and the windows are the same, relative to the data, on every run.
func simulatorConfig(cfg Config, now time.Time) simulate.Config {
	sim := simulate.DefaultConfig()
	sim.Seed = cfg.Seed
	sim.Events = int64(cfg.ReportEvents)
	sim.Span = cfg.ReportSpan
	sim.Tools = cfg.ReportTools
	sim.Sessions = cfg.ReportSessions
	sim.Clients = cfg.ReportClients
	sim.Servers = min(cfg.ReportServers, cfg.ReportTools)
	end := now.UTC().Truncate(time.Hour).Add(time.Hour)
	sim.Start = end.Add(-sim.Span)
	return sim
}

// threadCPU returns the user + system time of the calling OS thread.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadEvents generates cfg.ReportEvents events on one goroutine, locked to
// its thread so that its CPU can be told apart, and writes them in batches
// of cfg.ReportBatch as they come. It returns the load's figures and the
// simulator's ledger.
func loadEvents(ctx context.Context, cfg Config, st *embedded.Store) (*LoadResult, *simulate.Ledger, error) {
	sim := simulatorConfig(cfg, time.Now())
	gen, err := simulate.NewGenerator(sim)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create simulator: %w", err)
	}
	type genResult struct {
		cpu     time.Duration
		maxTime int64
	}
	batches := make(chan []otelschema.Event, 1)
	free := make(chan []otelschema.Event, 2)
	for range 2 {
		free <- make([]otelschema.Event, 0, cfg.ReportBatch)
	}
	done := make(chan genResult, 1)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()

	load := &LoadResult{}
	var writeErr error
	u, err := measure(func() error {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c0 := threadCPU()
			var (
				rec     simulate.Record
				maxTime int64
				b       []otelschema.Event
			)
			defer func() { close(batches); done <- genResult{cpu: threadCPU() - c0, maxTime: maxTime} }()
			for gen.Next(&rec) {
				if b == nil {
					select {
					case b = <-free:
					case <-lctx.Done():
						return
					}
				}
				b = append(b, rec.Event)
				maxTime = max(maxTime, rec.Event.Time)
				if len(b) == cfg.ReportBatch {
					select {
					case batches <- b:
						b = nil
					case <-lctx.Done():
						return
					}
				}
			}
			if len(b) > 0 {
				select {
				case batches <- b:
				case <-lctx.Done():
				}
			}
		}()
		for b := range batches {
			if writeErr == nil {
				if writeErr = st.Write(lctx, store.Batch{Tenant: store.DefaultTenant, Events: b}); writeErr != nil {
					cancel()
				}
				load.Events += len(b)
				load.Batches++
			}
			clear(b)
			free <- b[:0]
		}
		return writeErr
	})
	g := <-done
	ledger := gen.Ledger()
	load.Wall = u.Wall.Seconds()
	load.GeneratorCPU = g.cpu.Seconds()
	load.StoreCPU = max(0, (u.CPU - g.cpu).Seconds())
	load.Calls = ledger.ByEvent[otelschema.EventCall.String()]
	load.Start, load.End = ledger.Start.UTC(), ledger.End.UTC()
	if load.Start.IsZero() {
		load.Start = sim.Start
	}
	// The clock is fixed at the simulated end plus reportFollowUp, when
	// the last follow-ups have been stamped, and the window is the span
	// before it, as "the last week" ends now: its start is in the past of
	// the minutely tier's TTL, so the plan widens it to the hour, the
	// simulated start; its end is ragged, so the last half hour is read
	// from the minutely tier. The clock is after the real time the load
	// started, so every bucket the plan reads is still within its TTL.
	load.Clock = load.End.Add(reportFollowUp)
	load.From, load.To = load.Clock.Add(-cfg.ReportSpan), load.Clock
	load.LastEvent = time.Unix(0, g.maxTime).UTC()
	if err != nil {
		return load, &ledger, err
	}
	if err := ctx.Err(); err != nil {
		return load, &ledger, err
	}
	if !load.LastEvent.Before(load.To) {
		return load, &ledger, fmt.Errorf("the simulator's last event at %s is after the reports' window [%s, %s)",
			load.LastEvent.Format(time.RFC3339Nano), load.From.Format(time.RFC3339), load.To.Format(time.RFC3339))
	}
	if load.Events != cfg.ReportEvents {
		return load, &ledger, fmt.Errorf("the simulator generated %d events, %d were asked for", load.Events, cfg.ReportEvents)
	}
	return load, &ledger, nil
}

// settle runs OPTIMIZE TABLE … FINAL on every MergeTree table of db, then
// waits until no merge is running.
func settle(ctx context.Context, st *embedded.Store, db string, load *LoadResult) error {
	var tables []struct {
		Name string `json:"name"`
	}
	q := store.Query{Name: "bench_tables", SQL: "SELECT name FROM system.tables WHERE database = {db:String} AND engine LIKE '%MergeTree' AND name != 'schema_migrations' ORDER BY name"}
	if err := st.Query(ctx, q, store.Params{}.String("db", db), &tables); err != nil {
		return fmt.Errorf("cannot list tables: %w", err)
	}
	t0 := time.Now()
	for _, t := range tables {
		if err := st.Exec(ctx, "OPTIMIZE TABLE "+db+"."+t.Name+" FINAL", nil); err != nil {
			return fmt.Errorf("cannot optimise %s: %w", t.Name, err)
		}
	}
	load.Optimize = time.Since(t0).Seconds()
	t1 := time.Now()
	for time.Since(t1) < settleMergesMax {
		n, err := count(ctx, st, "SELECT count() AS n FROM system.merges")
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	load.Settle = time.Since(t1).Seconds()
	return nil
}

// count runs a query that returns one row with a column n.
func count(ctx context.Context, st *embedded.Store, sql string) (int64, error) {
	var rows []struct {
		N int64 `json:"n"`
	}
	if err := st.Query(ctx, store.Query{Name: "bench_count", SQL: sql}, nil, &rows); err != nil {
		return 0, fmt.Errorf("cannot count: %w", err)
	}
	if len(rows) != 1 {
		return 0, fmt.Errorf("count query returned %d rows", len(rows))
	}
	return rows[0].N, nil
}

// reportCase is one report to time: run answers it from its usual tables,
// raw (when set) from the raw events table; each returns its answer and
// its row count.
type reportCase struct {
	name, id, source string
	run, raw         func(context.Context) (any, int, error)
	// equal compares the two answers; nil means reflect.DeepEqual.
	equal func(rollup, raw any) bool
	// rare says that an empty answer is no sign of a broken comparison:
	// a small load may hold no safety violation at all.
	rare bool
}

// repairQuantileTolerance is how far apart, relatively, the rollup and raw
// repair times may be: the rollups merge t-digest states where the raw
// query builds one t-digest, and a t-digest compresses differently with
// the order it sees its values in.
const repairQuantileTolerance = 0.05

// repairsAgree compares two Repairs answers: every count exactly, the
// repair times within repairQuantileTolerance.
func repairsAgree(a, b any) bool {
	ra, rb := a.([]apiv1.RepairRow), b.([]apiv1.RepairRow)
	if len(ra) != len(rb) {
		return false
	}
	near := func(x, y *float64) bool {
		if x == nil || y == nil {
			return x == y
		}
		return math.Abs(*x-*y) <= repairQuantileTolerance*math.Max(math.Abs(*x), math.Abs(*y))
	}
	for i := range ra {
		x, y := ra[i], rb[i]
		if !near(x.AutomaticRepairP50Ms, y.AutomaticRepairP50Ms) || !near(x.AutomaticRepairP95Ms, y.AutomaticRepairP95Ms) ||
			!near(x.HumanRepairP50Ms, y.HumanRepairP50Ms) || !near(x.HumanRepairP95Ms, y.HumanRepairP95Ms) {
			return false
		}
		x.AutomaticRepairP50Ms, x.AutomaticRepairP95Ms, y.AutomaticRepairP50Ms, y.AutomaticRepairP95Ms = nil, nil, nil, nil
		x.HumanRepairP50Ms, x.HumanRepairP95Ms, y.HumanRepairP50Ms, y.HumanRepairP95Ms = nil, nil, nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// reportNames are the reports timed, in order.
var reportNames = []string{"stale-usage", "rejections", "repairs", "adapter-retirement", "propagation", "violations", "audit",
	"revision-sources", "contract-errors"}

// reportCases returns the reports over filter f; auditTool is the tool the
// audit is searched by.
func reportCases(r *queries.Runner, f queries.Filter, auditTool string) []reportCase {
	rows := func(v any, err error) (any, int, error) {
		if err != nil {
			return nil, 0, err
		}
		return v, reflect.ValueOf(v).Len(), nil
	}
	return []reportCase{
		{
			name: "stale-usage", id: "stale_usage", source: "usage_1h/1d + recent_calls",
			run: func(ctx context.Context) (any, int, error) { return rows(r.StaleUsage(ctx, f)) },
			raw: func(ctx context.Context) (any, int, error) { return rows(r.RawStaleUsage(ctx, f)) },
		},
		{
			name: "rejections", id: "rejections", source: "rejected_* + usage_*",
			run: func(ctx context.Context) (any, int, error) { return rows(r.Rejections(ctx, f)) },
			raw: func(ctx context.Context) (any, int, error) { return rows(r.RawRejections(ctx, f)) },
		},
		{
			name: "repairs", id: "repairs", source: "usage_* + repairs_*",
			run:   func(ctx context.Context) (any, int, error) { return rows(r.Repairs(ctx, f)) },
			raw:   func(ctx context.Context) (any, int, error) { return rows(r.RawRepairs(ctx, f)) },
			equal: repairsAgree,
		},
		{
			name: "adapter-retirement", id: "adapter_retirement", source: "adapted_* + usage_* + adapters",
			run: func(ctx context.Context) (any, int, error) {
				return rows(r.AdapterRetirement(ctx, f, retirement.Options{}))
			},
			raw: func(ctx context.Context) (any, int, error) {
				return rows(r.RawAdapterRetirement(ctx, f, retirement.Options{}))
			},
		},
		{
			name: "propagation", id: "propagation", source: "propagation_events",
			run: func(ctx context.Context) (any, int, error) { return rows(r.Propagation(ctx, f)) },
			raw: func(ctx context.Context) (any, int, error) { return rows(r.RawPropagation(ctx, f)) },
		},
		{
			name: "violations", id: "violations", source: "violation_candidates, first page",
			run: func(ctx context.Context) (any, int, error) {
				p, err := r.Violations(ctx, f, queries.Page{})
				return p, len(p.Rows), err
			},
			raw: func(ctx context.Context) (any, int, error) {
				p, err := r.RawViolations(ctx, f, queries.Page{})
				return p, len(p.Rows), err
			},
			rare: true,
		},
		{
			name: "revision-sources", id: "revision_sources", source: "calls_1h/1d + recent_calls",
			run: func(ctx context.Context) (any, int, error) { return rows(r.RevisionSources(ctx, f)) },
			raw: func(ctx context.Context) (any, int, error) { return rows(r.RawRevisionSources(ctx, f)) },
		},
		{
			// Rare events, read from events through its sort key: no
			// rollup, so no raw twin to compare with.
			name: "contract-errors", id: "contract_errors", source: "events (contract errors, refreshes)",
			run: func(ctx context.Context) (any, int, error) { return rows(r.ContractErrors(ctx, f)) },
		},
		{
			name: "audit", id: "audit", source: "events (audited calls), first page, one tool",
			run: func(ctx context.Context) (any, int, error) {
				af := queries.AuditFilter{Filter: f}
				af.Tool = auditTool
				p, err := r.Audit(ctx, af, queries.Page{})
				return p, len(p.Rows), err
			},
		},
	}
}

// busiestTool returns the tool with the most calls in the ledger, the
// first by name among equals.
func busiestTool(l *simulate.Ledger) string {
	var best string
	var most int64 = -1
	for tool, outcomes := range l.Calls {
		var n int64
		for _, c := range outcomes {
			n += c
		}
		if n > most || (n == most && tool < best) {
			best, most = tool, n
		}
	}
	return best
}

// measureReports times every report over the load's window with the clock
// fixed at load.Clock: cfg.ReportWarmups unmeasured runs, then
// cfg.ReportRuns measured ones; a report with a raw version runs it right
// after each of its own runs, so that both see the same machine. It fails
// when a rollup answer differs from the raw one, or when the rollups do
// not count every call generated.
func measureReports(ctx context.Context, cfg Config, st *embedded.Store, db string, load *LoadResult, ledger *simulate.Ledger) ([]ReportTiming, error) {
	clock := load.Clock
	rec := &recorder{q: st}
	var explain io.Writer
	if cfg.ReportExplain != "" {
		f, err := os.Create(cfg.ReportExplain)
		if err != nil {
			return nil, fmt.Errorf("cannot create the EXPLAIN file: %w", err)
		}
		defer f.Close()
		explain = f
		fmt.Fprintf(f, "EXPLAIN indexes = 1 of every report query, window [%s, %s), clock %s, %d events\n",
			load.From.Format(time.RFC3339), load.To.Format(time.RFC3339), clock.Format(time.RFC3339), load.Events)
	}
	r, err := queries.New(rec, db,
		queries.WithRetentionDays(embedded.DefaultConfig("").Schema.RetentionDays),
		queries.WithClock(func() time.Time { return clock }))
	if err != nil {
		return nil, err
	}
	f := queries.Filter{Tenant: store.DefaultTenant, From: load.From, To: load.To}
	var (
		out  []ReportTiming
		errs []error
	)
	for _, c := range reportCases(r, f, busiestTool(ledger)) {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		t := ReportTiming{Name: c.name, ID: c.id, Source: c.source}
		var (
			times, rawTimes []run
			ans, rawAns     any
			n, rawN         int
			runErr          error
		)
		timed := func(f func(context.Context) (any, int, error)) (run, any, int, error) {
			cpu0, t0 := processCPU(), time.Now()
			v, n, err := f(ctx)
			return run{wall: time.Since(t0), cpu: processCPU() - cpu0}, v, n, err
		}
		// series times f's warm-up and measured runs, and returns the
		// measured runs and the last answer.
		series := func(f func(context.Context) (any, int, error)) (runs []run, v any, n int, err error) {
			for i := range cfg.ReportWarmups + cfg.ReportRuns {
				var d run
				if d, v, n, err = timed(f); err != nil {
					return nil, nil, 0, err
				}
				if i >= cfg.ReportWarmups {
					runs = append(runs, d)
				}
			}
			return runs, v, n, nil
		}
		// The rollup runs, then the raw ones: each in the steady state of
		// its own kind. Interleaved, every rollup run followed a scan of
		// the whole events table, which left the caches and the allocator
		// to that scan (measured: stale-usage 121 ms alone, 148 ms right
		// after its raw twin) — a neighbour no deployment has, since the
		// raw twins exist only to be compared with.
		times, ans, n, runErr = series(c.run)
		if runErr == nil && c.raw != nil {
			rawTimes, rawAns, rawN, runErr = series(c.raw)
		}
		if runErr != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.name, runErr))
			continue
		}
		t.Latency = latencyOf(times, n)
		if t.Latency.Read, err = inspect(ctx, st, rec, c.name, c.run, explain); err != nil {
			errs = append(errs, err)
		}
		if c.raw != nil {
			l := latencyOf(rawTimes, rawN)
			if l.Read, err = inspect(ctx, st, rec, c.name+" (raw)", c.raw, explain); err != nil {
				errs = append(errs, err)
			}
			t.Raw = &l
			eq := reflect.DeepEqual(ans, rawAns)
			if c.equal != nil {
				eq = c.equal(ans, rawAns)
			}
			t.Equal = &eq
			if !eq {
				errs = append(errs, fmt.Errorf("%s: the rollup answer (%d rows) differs from the raw one (%d rows): %s", c.name, n, rawN, firstDifference(ans, rawAns)))
			}
			if n == 0 && !c.rare {
				errs = append(errs, fmt.Errorf("%s: the rollup and raw answers are both empty: the comparison compared nothing", c.name))
			}
		}
		if c.id == "stale_usage" {
			var calls uint64
			for _, row := range ans.([]apiv1.StaleUsageRow) {
				calls += row.Calls
			}
			if int64(calls) != load.Calls {
				errs = append(errs, fmt.Errorf("stale-usage counts %d calls over the whole window, the simulator generated %d", calls, load.Calls))
			}
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

// firstDifference describes the first row where two report answers (slices
// of the same type) differ.
func firstDifference(a, b any) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() == reflect.Struct && va.Type() == vb.Type() && va.FieldByName("Rows").IsValid() {
		// A page: its rows, else its cursor.
		ra, rb := va.FieldByName("Rows").Interface(), vb.FieldByName("Rows").Interface()
		if !reflect.DeepEqual(ra, rb) {
			return firstDifference(ra, rb)
		}
		return fmt.Sprintf("next page %+v, raw %+v", va.FieldByName("Next").Interface(), vb.FieldByName("Next").Interface())
	}
	if va.Kind() != reflect.Slice || vb.Kind() != reflect.Slice || va.Type() != vb.Type() {
		return fmt.Sprintf("%T against %T", a, b)
	}
	for i := range min(va.Len(), vb.Len()) {
		if !reflect.DeepEqual(va.Index(i).Interface(), vb.Index(i).Interface()) {
			return fmt.Sprintf("row %d: rollup %+v, raw %+v", i, va.Index(i).Interface(), vb.Index(i).Interface())
		}
	}
	return fmt.Sprintf("%d rows against %d", va.Len(), vb.Len())
}

// run is the wall and process CPU time of one run of a report.
type run struct{ wall, cpu time.Duration }

// latencyOf summarises runs: the 50th and 95th percentiles by nearest rank
// (with 15 runs, the 8th and the 15th, i.e. the slowest).
func latencyOf(runs []run, rows int) Latency {
	l := Latency{Runs: len(runs), Rows: rows}
	if len(runs) == 0 {
		return l
	}
	walls, cpus := make([]time.Duration, len(runs)), make([]time.Duration, len(runs))
	for i, r := range runs {
		walls[i], cpus[i] = r.wall, r.cpu
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	rank := func(s []time.Duration, p float64) time.Duration {
		return s[max(0, int(math.Ceil(p*float64(len(s))))-1)]
	}
	l.P50Ms, l.P95Ms = ms(rank(walls, 0.50)), ms(rank(walls, 0.95))
	l.MinMs, l.MaxMs = ms(walls[0]), ms(walls[len(walls)-1])
	l.CPUP50Ms = ms(rank(cpus, 0.50))
	return l
}

// recorder is a store.Querier that remembers the queries it ran, with
// their parameters, so that they can be inspected afterwards.
type recorder struct {
	q   store.Querier
	ran []recorded
}

type recorded struct {
	query  store.Query
	params store.Params
}

// Query implements store.Querier.
func (r *recorder) Query(ctx context.Context, q store.Query, p store.Params, dest any) error {
	r.ran = append(r.ran, recorded{q, p})
	return r.q.Query(ctx, q, p, dest)
}

// readCounters returns the system.events counters of ReadStats.
func readCounters(ctx context.Context, st *embedded.Store) (ReadStats, error) {
	var rows []struct {
		Event string `json:"event"`
		Value uint64 `json:"value"`
	}
	q := store.Query{Name: "bench_read_counters", SQL: "SELECT event, value FROM system.events WHERE event IN ('SelectedParts', 'SelectedMarks', 'SelectedRows', 'SelectedBytes', 'ReadCompressedBytes')"}
	if err := st.Query(ctx, q, nil, &rows); err != nil {
		return ReadStats{}, fmt.Errorf("cannot read system.events: %w", err)
	}
	var s ReadStats
	for _, r := range rows {
		switch r.Event {
		case "SelectedParts":
			s.Parts = r.Value
		case "SelectedMarks":
			s.Marks = r.Value
		case "SelectedRows":
			s.Rows = r.Value
		case "SelectedBytes":
			s.Bytes = r.Value
		case "ReadCompressedBytes":
			s.Compressed = r.Value
		}
	}
	return s, nil
}

// inspect runs a report once more and returns what it read; with explain
// set, it writes there EXPLAIN indexes = 1 of every query the report ran.
func inspect(ctx context.Context, st *embedded.Store, rec *recorder, name string, f func(context.Context) (any, int, error), explain io.Writer) (ReadStats, error) {
	before, err := readCounters(ctx, st)
	if err != nil {
		return ReadStats{}, err
	}
	rec.ran = rec.ran[:0]
	if _, _, err := f(ctx); err != nil {
		return ReadStats{}, fmt.Errorf("%s: %w", name, err)
	}
	after, err := readCounters(ctx, st)
	if err != nil {
		return ReadStats{}, err
	}
	read := ReadStats{
		Parts: after.Parts - before.Parts, Marks: after.Marks - before.Marks,
		Rows: after.Rows - before.Rows, Bytes: after.Bytes - before.Bytes,
		Compressed: after.Compressed - before.Compressed,
	}
	if explain == nil {
		return read, nil
	}
	for _, q := range slices.Clone(rec.ran) {
		var rows []struct {
			Explain string `json:"explain"`
		}
		fmt.Fprintf(explain, "\n==== %s: query %s; one run read %d rows, %d marks, %d parts, %.1f MiB compressed\n",
			name, q.query.Name, read.Rows, read.Marks, read.Parts, float64(read.Compressed)/(1<<20))
		eq := store.Query{Name: "explain_" + q.query.Name, SQL: "EXPLAIN indexes = 1 " + q.query.SQL}
		if err := st.Query(ctx, eq, q.params, &rows); err != nil {
			fmt.Fprintf(explain, "cannot explain: %v\n", err)
			continue
		}
		for _, r := range rows {
			fmt.Fprintln(explain, r.Explain)
		}
	}
	return read, nil
}

// storageTopColumns is how many of the events table's columns the storage
// suite lists, largest compressed first.
const storageTopColumns = 10

// measureStorage reads the active parts of every table of db from
// system.parts, and the columns of the events table from
// system.parts_columns and system.columns.
func measureStorage(ctx context.Context, st *embedded.Store, db string, events int) (*StorageResult, error) {
	res := &StorageResult{Events: events}
	p := store.Params{}.String("db", db)
	q := store.Query{Name: "bench_parts", SQL: `
SELECT table, sum(rows) AS rows, count() AS parts,
       arrayStringConcat(arraySort(groupUniqArray(part_type)), ',') AS part_types,
       sum(bytes_on_disk) AS bytes_on_disk,
       sum(data_compressed_bytes) AS data_compressed_bytes,
       sum(data_uncompressed_bytes) AS data_uncompressed_bytes
FROM system.parts
WHERE database = {db:String} AND active AND table != 'schema_migrations'
GROUP BY table
ORDER BY table`}
	if err := st.Query(ctx, q, p, &res.Tables); err != nil {
		return res, fmt.Errorf("cannot read system.parts: %w", err)
	}
	// The raw table first, then the rollups and the rest by name.
	rank := func(t string) int {
		if t == "events" {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(res.Tables, func(a, b TableStorage) int { return rank(a.Table) - rank(b.Table) })
	for i := range res.Tables {
		res.Tables[i].BytesPerEvent = float64(res.Tables[i].BytesOnDisk) / float64(events)
	}
	q = store.Query{Name: "bench_columns", SQL: `
SELECT c.column AS column, c.type AS type, d.compression_codec AS codec,
       c.compressed AS compressed, c.uncompressed AS uncompressed
FROM
(
    SELECT column, any(type) AS type,
           sum(column_data_compressed_bytes) AS compressed,
           sum(column_data_uncompressed_bytes) AS uncompressed
    FROM system.parts_columns
    WHERE database = {db:String} AND table = 'events' AND active
    GROUP BY column
) AS c
LEFT JOIN
(
    SELECT name, compression_codec FROM system.columns
    WHERE database = {db:String} AND table = 'events'
) AS d ON d.name = c.column
ORDER BY compressed DESC, column
LIMIT ` + fmt.Sprint(storageTopColumns)}
	if err := st.Query(ctx, q, p, &res.Columns); err != nil {
		return res, fmt.Errorf("cannot read system.parts_columns: %w", err)
	}
	for i := range res.Columns {
		c := &res.Columns[i]
		if c.Compressed > 0 {
			c.Ratio = float64(c.Uncompressed) / float64(c.Compressed)
		}
		c.BytesPerEvent = float64(c.Compressed) / float64(events)
	}
	var args []struct {
		N uint64 `json:"n"`
	}
	q = store.Query{Name: "bench_audit_args", SQL: `
SELECT toUInt64(sum(column_data_compressed_bytes)) AS n
FROM system.parts_columns
WHERE database = {db:String} AND table = 'events' AND active AND column IN ('args_raw', 'args_normalized')`}
	if err := st.Query(ctx, q, p, &args); err != nil {
		return res, fmt.Errorf("cannot read the audit's columns in system.parts_columns: %w", err)
	}
	if len(args) == 1 {
		res.AuditArgsBytes = args[0].N
	}
	var found bool
	for _, t := range res.Tables {
		found = found || t.Table == "events"
	}
	if !found {
		return res, errors.New("the events table has no active part")
	}
	return res, nil
}

// text prints the storage suite's tables and columns.
func (s *StorageResult) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nstorage after OPTIMIZE FINAL, active parts, %d events loaded:\n", s.Events)
	tw := newTabWriter(&b)
	fmt.Fprintln(tw, "table\trows\tparts\ton disk\tcompressed\tuncompressed\tratio\tB/event")
	for _, t := range s.Tables {
		ratio := 0.0
		if t.Compressed > 0 {
			ratio = float64(t.Uncompressed) / float64(t.Compressed)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d %s\t%s\t%s\t%s\t%.1f×\t%.2f\n", t.Table, t.Rows, t.Parts, t.PartTypes,
			mib(t.BytesOnDisk), mib(t.Compressed), mib(t.Uncompressed), ratio, t.BytesPerEvent)
	}
	_ = tw.Flush()
	var known bool
	for _, c := range s.Columns {
		known = known || c.Compressed > 0
	}
	if !known {
		b.WriteString("\nevents table columns: no per-column sizes (ClickHouse records them for Wide parts only; these are Compact, too small)\n")
		return b.String()
	}
	fmt.Fprintf(&b, "\nevents table, top %d columns by compressed size:\n", len(s.Columns))
	tw = newTabWriter(&b)
	fmt.Fprintln(tw, "column\ttype\tcodec\tcompressed\tuncompressed\tratio\tB/event")
	for _, c := range s.Columns {
		codec := c.Codec
		if codec == "" {
			codec = "(default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.1f×\t%.2f\n", c.Column, c.Type, codec,
			mib(c.Compressed), mib(c.Uncompressed), c.Ratio, c.BytesPerEvent)
	}
	_ = tw.Flush()
	return b.String()
}

func mib(n uint64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }
