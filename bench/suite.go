package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/app/embeddedstore"
	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// Bounds of Config.Batch.
const (
	minBatch = 100
	maxBatch = 1000
)

// Targets of the design's performance requirements.
const (
	targetIngestRatio = 1.5 // ingest without store, redaction included, ≤ 1.5× a bare pdata decode
	// Issue 46's ratios, each between figures of one run: the all-views
	// floor within 2× the raw table's (target 1); serve, (c), within 1.5×
	// the all-views floor, its Go threads within 2× (b) and its minor
	// page faults within 1.5× the floor's (target 2).
	targetViewsRatio  = 2.0
	targetStoreRatio  = 1.5
	targetGoRatio     = 2.0
	targetFaultsRatio = 1.5
	// The ingest role against a ClickHouse server: within 1.3× of (c) on
	// the embedded store (issue 46, target 4), in INSERTs of 50k rows or
	// more.
	targetServerRatio      = 1.3
	targetServerInsertRows = 50_000
)

// Config configures a run of the suite.
type Config struct {
	// Events is the number of events sent through each run.
	Events int
	// Batch is the number of log records per OTLP request, minBatch to
	// maxBatch.
	Batch int
	// Streams is the number of concurrent senders, each with one request in
	// flight, and the number of goroutines of the baseline decode.
	Streams int
	// IngestBatch is the ingester's BatchMaxEvents; 0 means Streams × Batch,
	// at most the ingester's default: the senders wait for their answers, so
	// a store batch is sealed as soon as every sender has a request in it.
	IngestBatch int
	// InsertEvents is the ingester's InsertMaxEvents with Ack "spooled";
	// 0 keeps the ingester's default.
	InsertEvents int
	// FloorBlock, when positive, cuts each insert of the floors into
	// Native blocks of that many events, to show what the engine's cost
	// owes to the size of the blocks it is sent; 0 sends each insert as
	// one block, as the stores do.
	FloorBlock int
	// SpoolAfter, when positive, gives the ingester a write-ahead spool in a
	// temporary directory with this latency budget (ingest.Config.SpoolAfter),
	// as `mcpdrift serve` runs by default; zero runs without a spool.
	SpoolAfter time.Duration
	// Ack is the ingester's acknowledgement mode (ingest.Config.Ack) in
	// the store run (c) and the overload suite; "spooled", the default,
	// gives it a write-ahead spool in a temporary directory, as `mcpdrift
	// serve` runs by default, and counts the replayer's inserts until the
	// spool is empty. "stored" (or empty) acknowledges once stored.
	Ack string
	// Seed is the simulator's seed.
	Seed uint64
	// Out is where the results are written as JSON; empty means nowhere.
	Out string
	// Markdown is where the figures are written as Markdown tables, one per
	// suite run (markdown.go); empty means nowhere.
	Markdown string
	// Command is the command line the run is named by in the Markdown
	// tables; empty: none is written.
	Command string
	// CollectorBin, when set, is the Collector the collector suite runs,
	// built from collectorManifest; empty: scripts/otelcol-build.sh builds
	// it, or takes it from its cache.
	CollectorBin string
	// CPUProfile, when set, is where a CPU profile of the store run (c) is
	// written.
	CPUProfile string
	// ServerCPUProfile, when set, is where a CPU profile of this process,
	// the ingest role, is written during run (c) into a ClickHouse server.
	ServerCPUProfile string
	// ServerFlags are flags given to the ingest role of the run into a
	// ClickHouse server after its own (-store.insert.max-rows=…,
	// -store.compression=…), to measure an alternative to its defaults.
	ServerFlags []string
	// SkipStore skips the store run (c).
	SkipStore bool
	// SkipServer skips the run of the ingest role into a ClickHouse
	// server (c).
	SkipServer bool
	// Redact, true by default, runs every ingester with the default
	// redaction rules, as the commands always do; false builds them
	// without a redactor, to show redaction's share of the cost.
	Redact bool
	// TempDir holds the requests file and the store's data directory; empty
	// means the system's temporary directory.
	TempDir string
	// Logger receives the ingester's and the store's logs; nil logs warnings
	// and errors to stderr.
	Logger *slog.Logger

	// Suites selects what runs: SuiteIngest (runs a to d), SuiteReports
	// and SuiteStorage, in that order. The last two share one load of
	// ReportEvents events into a fresh store.
	Suites []string
	// ReportEvents is the number of simulated events loaded for the
	// reports and storage suites, written ReportBatch at a time.
	ReportEvents int
	ReportBatch  int
	// ReportRuns is the measured runs of each report, after ReportWarmups
	// unmeasured ones.
	ReportRuns    int
	ReportWarmups int
	// ReportSpan is the simulated time the loaded events cover; the
	// reports' window covers it (see LoadResult).
	ReportSpan time.Duration
	// ReportTools, ReportSessions, ReportClients and ReportServers are the
	// simulated fleet's cardinalities.
	ReportTools    int
	ReportSessions int
	ReportClients  int
	ReportServers  int
	// ReportDir, when set, is the data directory of the reports load, kept
	// after the run for EXPLAIN and ad-hoc queries; it must be empty or
	// missing. Empty means a temporary directory, removed.
	ReportDir string
	// ReportExplain, when set, is a file where the reports suite writes
	// EXPLAIN indexes = 1 of every report query it timed.
	ReportExplain string

	// OverloadDuration is how long the overload suite floods the ingester,
	// on OverloadStreams concurrent senders, with requests of
	// OverloadBatch records built from OverloadEvents distinct events.
	OverloadDuration time.Duration
	OverloadStreams  int
	OverloadEvents   int
	OverloadBatch    int
	// OverloadMaxPending and OverloadSpoolBytes are the flooded ingester's
	// MaxPendingEvents and spool MaxBytes, deliberately small.
	OverloadMaxPending int
	OverloadSpoolBytes int64
}

// Suites of Config.Suites.
const (
	SuiteIngest   = "ingest"
	SuiteReports  = "reports"
	SuiteStorage  = "storage"
	SuiteOverload = "overload"
	// SuiteConsole times the console's pages in Chromium over the reports
	// load; it runs only when named, as it needs a browser.
	SuiteConsole = "console"
	// SuiteCollector runs only when named: it builds the OpenTelemetry
	// Collector of collectorManifest, minutes on a first run.
	SuiteCollector = "collector"
)

// allSuites lists every suite "all" means, in the order they run.
var allSuites = []string{SuiteIngest, SuiteReports, SuiteStorage, SuiteOverload}

// knownSuites lists every suite in the order they run, those that run
// only when named included.
var knownSuites = []string{SuiteIngest, SuiteReports, SuiteStorage, SuiteConsole, SuiteOverload, SuiteCollector}

// ParseSuites parses a comma-separated list of suites; "all" (or an empty
// list) means every suite but those that run only when named (console,
// collector).
// The result is in the order the suites run.
func ParseSuites(list string) ([]string, error) {
	want := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		switch name = strings.TrimSpace(name); name {
		case "":
		case "all":
			for _, s := range allSuites {
				want[s] = true
			}
		case SuiteIngest, SuiteReports, SuiteStorage, SuiteOverload, SuiteConsole, SuiteCollector:
			want[name] = true
		default:
			return nil, fmt.Errorf("unknown suite %q: want a comma-separated list of %s, or all (every one but %s and %s)", name, strings.Join(knownSuites, ", "), SuiteConsole, SuiteCollector)
		}
	}
	if len(want) == 0 {
		return slices.Clone(allSuites), nil
	}
	var out []string
	for _, s := range knownSuites {
		if want[s] {
			out = append(out, s)
		}
	}
	return out, nil
}

// has reports whether the suite runs.
func (c Config) has(suite string) bool { return slices.Contains(c.Suites, suite) }

// loadsReports reports whether a suite needs the reports load.
func (c Config) loadsReports() bool {
	return c.has(SuiteReports) || c.has(SuiteStorage) || c.has(SuiteConsole)
}

// DefaultConfig returns the configuration of `make bench`.
func DefaultConfig() Config {
	return Config{
		Events:  5_000_000,
		Batch:   500,
		Streams: 4,
		Ack:     string(ingest.AckSpooled),
		Redact:  true,
		Seed:    1,
		Out:     filepath.Join("bench", "results", "latest.json"),

		Suites:         slices.Clone(allSuites),
		ReportEvents:   10_000_000,
		ReportBatch:    100_000,
		ReportRuns:     15,
		ReportWarmups:  2,
		ReportSpan:     7 * 24 * time.Hour,
		ReportTools:    300,
		ReportSessions: 5000,
		ReportClients:  60,
		ReportServers:  12,

		OverloadDuration:   20 * time.Second,
		OverloadStreams:    32,
		OverloadEvents:     300_000,
		OverloadBatch:      100,
		OverloadMaxPending: 2000,
		OverloadSpoolBytes: 4 << 20,
	}
}

// maxReportSpan keeps the loaded events within the store's 30-day
// retention, with a day to spare.
const maxReportSpan = 29 * 24 * time.Hour

// Validate reports the first invalid field by name.
func (c Config) Validate() error {
	switch {
	case c.Events < 1:
		return fmt.Errorf("events must be positive, got %d", c.Events)
	case c.Batch < minBatch || c.Batch > maxBatch:
		return fmt.Errorf("batch must be between %d and %d, got %d", minBatch, maxBatch, c.Batch)
	case c.Streams < 1:
		return fmt.Errorf("streams must be positive, got %d", c.Streams)
	case c.IngestBatch < 0:
		return fmt.Errorf("ingest.batch-events must not be negative, got %d", c.IngestBatch)
	case c.InsertEvents < 0:
		return fmt.Errorf("ingest.insert-events must not be negative, got %d", c.InsertEvents)
	case c.FloorBlock < 0:
		return fmt.Errorf("floor.block-events must not be negative, got %d", c.FloorBlock)
	case len(c.Suites) == 0:
		return errors.New("suite must name at least one suite")
	case c.has(SuiteCollector) && c.SkipStore:
		return errors.New("the collector suite measures run (c) beside the Collector: it cannot run with skip-store")
	}
	for _, s := range c.Suites {
		if !slices.Contains(knownSuites, s) {
			return fmt.Errorf("unknown suite %q", s)
		}
	}
	if c.has(SuiteOverload) {
		switch {
		case c.OverloadDuration <= 0:
			return fmt.Errorf("overload-duration must be positive, got %s", c.OverloadDuration)
		case c.OverloadStreams < 1:
			return fmt.Errorf("overload-streams must be positive, got %d", c.OverloadStreams)
		case c.OverloadEvents < 1:
			return fmt.Errorf("overload-events must be positive, got %d", c.OverloadEvents)
		case c.OverloadBatch < 1:
			return fmt.Errorf("overload-batch must be positive, got %d", c.OverloadBatch)
		case c.OverloadMaxPending < c.OverloadBatch:
			return fmt.Errorf("overload-max-pending must be at least overload-batch (%d), got %d", c.OverloadBatch, c.OverloadMaxPending)
		case c.OverloadSpoolBytes < 256<<10:
			return fmt.Errorf("overload-spool-bytes must be at least 256 KiB, got %d", c.OverloadSpoolBytes)
		}
	}
	if !c.loadsReports() {
		return nil
	}
	switch {
	case c.ReportEvents < 1:
		return fmt.Errorf("report-events must be positive, got %d", c.ReportEvents)
	case c.ReportBatch < 1:
		return fmt.Errorf("report-batch must be positive, got %d", c.ReportBatch)
	case c.ReportRuns < 1:
		return fmt.Errorf("report-runs must be positive, got %d", c.ReportRuns)
	case c.ReportWarmups < 0:
		return fmt.Errorf("report-warmups must not be negative, got %d", c.ReportWarmups)
	case c.ReportSpan < time.Hour || c.ReportSpan > maxReportSpan:
		return fmt.Errorf("report-span must be between 1h and %s, got %s", maxReportSpan, c.ReportSpan)
	case c.ReportTools < 1 || c.ReportSessions < 1 || c.ReportClients < 1 || c.ReportServers < 1:
		return fmt.Errorf("report fleet sizes must be positive, got %d tools, %d sessions, %d clients, %d servers",
			c.ReportTools, c.ReportSessions, c.ReportClients, c.ReportServers)
	}
	return nil
}

// usage is the CPU and wall time of one measured phase.
type usage struct {
	CPU  time.Duration // the process's user + system time
	Wall time.Duration
	// GoCPU is the part of CPU spent on the Go runtime's threads
	// (goThreadsCPU); zero when /proc cannot tell. GCCPU is the garbage
	// collector's part of it (gcCPU).
	GoCPU, GCCPU time.Duration
	// SysCPU is the part of CPU spent in the kernel (system time), every
	// thread's.
	SysCPU time.Duration
	// Allocated is the bytes the Go heap allocated, GCs the garbage
	// collections that ran (goHeapCounts).
	Allocated, GCs uint64
	// Faults is the minor page faults the process took, every thread's:
	// first touches of memory the kernel had to find a page for; GoFaults
	// is the Go runtime's threads' part of them (goThreadsCPU).
	Faults, GoFaults uint64
}

// processCPU returns the user + system time of the whole process, every
// thread included (chDB's too).
func processCPU() time.Duration {
	cpu, _, _ := processTimes()
	return cpu
}

// processTimes returns the user + system time of the whole process, the
// system time alone and the minor page faults taken.
func processTimes() (cpu, sys time.Duration, faults uint64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic("getrusage: " + err.Error()) // cannot fail with RUSAGE_SELF
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(ru.Stime.Nano()), uint64(ru.Minflt)
}

// measure runs f and returns the process's CPU and wall time during it.
func measure(f func() error) (usage, error) {
	runtime.GC()
	go0, gof0, goOK := goThreadsCPU()
	gc0 := gcCPU()
	alloc0, gcs0 := goHeapCounts()
	cpu0, sys0, f0 := processTimes()
	wall0 := time.Now()
	err := f()
	cpu1, sys1, f1 := processTimes()
	alloc1, gcs1 := goHeapCounts()
	u := usage{CPU: cpu1 - cpu0, SysCPU: sys1 - sys0, Wall: time.Since(wall0), GCCPU: gcCPU() - gc0,
		Allocated: alloc1 - alloc0, GCs: gcs1 - gcs0, Faults: f1 - f0}
	if go1, gof1, ok := goThreadsCPU(); ok && goOK {
		u.GoCPU, u.GoFaults = go1-go0, gof1-gof0
	}
	return u, err
}

// Run runs the selected suites — ingest builds the requests and runs (a) to
// (d); reports and storage load the simulator's events into a fresh store
// and time the reports (e, f) and measure the tables on disk (g) — prints
// the table to w and writes the JSON results to cfg.Out. It returns the
// report with an error when a run failed, the counts differ or a rollup
// answer differs from the raw one; the figures are never judged.
func Run(ctx context.Context, cfg Config, w io.Writer) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.IngestBatch == 0 {
		cfg.IngestBatch = min(cfg.Streams*cfg.Batch, ingest.DefaultConfig().BatchMaxEvents)
	}
	if cfg.InsertEvents == 0 {
		cfg.InsertEvents = ingest.DefaultConfig().InsertMaxEvents
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	tmp, err := os.MkdirTemp(cfg.TempDir, "mcpdrift-bench-")
	if err != nil {
		return nil, fmt.Errorf("cannot create temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	// Once every suite has run, remove the chnode binary that the runs
	// into a ClickHouse server built: clickhousetest builds it once per
	// process, so a run removing it would leave the next without it.
	defer clickhousetest.StopAll()

	rep := newReport(cfg)
	fmt.Fprint(w, rep.header())
	var errs []error
	if cfg.has(SuiteIngest) {
		errs = append(errs, runIngestSuite(ctx, cfg, tmp, rep, w))
	}
	if cfg.loadsReports() && ctx.Err() == nil {
		errs = append(errs, runReportSuites(ctx, cfg, rep, w))
	}
	if cfg.has(SuiteOverload) && ctx.Err() == nil {
		errs = append(errs, runOverloadSuite(ctx, cfg, tmp, rep, w))
	}
	if cfg.has(SuiteCollector) && ctx.Err() == nil {
		errs = append(errs, runCollectorSuite(ctx, cfg, tmp, rep, w))
	}
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	runErr := errors.Join(errs...)
	rep.finish()
	fmt.Fprint(w, "\n"+rep.table())
	if runErr != nil {
		rep.Error = runErr.Error()
	}
	if cfg.Out != "" {
		if err := rep.writeJSON(cfg.Out); err != nil {
			return rep, errors.Join(runErr, err)
		}
		fmt.Fprintf(w, "\nresults written to %s\n", cfg.Out)
	}
	if cfg.Markdown != "" {
		if err := rep.writeMarkdown(cfg.Markdown); err != nil {
			return rep, errors.Join(runErr, err)
		}
		fmt.Fprintf(w, "tables written to %s\n", cfg.Markdown)
	}
	return rep, runErr
}

// runIngestSuite builds the requests and runs (a) to (d).
func runIngestSuite(ctx context.Context, cfg Config, tmp string, rep *Report, w io.Writer) error {
	fmt.Fprintf(w, "building %d events into requests of %d records…\n", cfg.Events, cfg.Batch)
	t0 := time.Now()
	rs, err := buildRequests(filepath.Join(tmp, "requests.bin"), cfg.Events, cfg.Batch, cfg.Seed)
	if err != nil {
		return err
	}
	defer rs.close()
	rep.Requests, rep.RequestBytes = len(rs.reqs), rs.bytes()
	fmt.Fprintf(w, "built %d requests, %.1f MiB, %.0f B/event on the wire, in %s\n",
		len(rs.reqs), float64(rs.bytes())/(1<<20), float64(rs.bytes())/float64(rs.total), time.Since(t0).Round(time.Millisecond))
	return runAll(ctx, cfg, rs, tmp, rep)
}

func runAll(ctx context.Context, cfg Config, rs *requestSet, tmp string, rep *Report) error {
	// (a) The baseline: a bare pdata decode of the same requests.
	u, err := measure(func() error { return decodeAll(ctx, rs, cfg.Streams) })
	if err != nil {
		return fmt.Errorf("baseline decode: %w", err)
	}
	rep.Baseline = phaseOf(u, rs.total, nil)

	// (b) The ingester without a store: decode, validate, batch; without
	// the spool too, whose appends are a write to disk like the store's.
	var d discard
	bcfg := cfg
	bcfg.SpoolAfter, bcfg.Ack = 0, ""
	in, err := newIngester(ctx, bcfg, rs, &d)
	if err != nil {
		return fmt.Errorf("ingest without store: %w", err)
	}
	ph, err := runIngest(ctx, bcfg, rs, in, "")
	if ph != nil {
		rep.NoStore = ph
	}
	if err != nil {
		return fmt.Errorf("ingest without store: %w", err)
	}
	if n := d.events.Load(); n != int64(rs.total) {
		return fmt.Errorf("ingest without store: the writer received %d events, %d were sent", n, rs.total)
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	// (c) The ingest role into a ClickHouse server, before the embedded
	// store is loaded into this process: its threads would count in the
	// ingester's CPU.
	if !cfg.SkipServer {
		if err := runServer(ctx, cfg, rs, rep); err != nil {
			return fmt.Errorf("ingest into a ClickHouse server: %w", err)
		}
	}
	// (c) The ingester into the embedded store, then the engine's floors
	// for the same rows.
	if cfg.SkipStore {
		return nil
	}
	if err := runStore(ctx, cfg, rs, rep); err != nil {
		return err
	}
	return runFloors(ctx, cfg, rs, tmp, rep)
}

// runStore runs `mcpdrift serve` as its binary assembles it (app: the
// embedded store in a temporary data directory, migrated, the ingester
// with its defaults — spool, acknowledgement, redaction — and the API),
// with the overrides ingestArgs lists, sends every request through it and
// checks the stored count.
func runStore(ctx context.Context, cfg Config, rs *requestSet, rep *Report) error {
	ph, stored, version, err := runServe(ctx, cfg, rs)
	rep.Store, rep.Stored = ph, stored
	if version != "" {
		rep.Machine.ClickHouse = version
	}
	return err
}

// runServe is run (c) on its own: it returns the phase, the events the
// store holds afterwards and the engine's version, with an error when a
// request failed or the stored count differs from the events sent.
func runServe(ctx context.Context, cfg Config, rs *requestSet) (ph *Phase, stored int64, version string, err error) {
	dir, err := os.MkdirTemp(cfg.TempDir, "mcpdrift-bench-store-")
	if err != nil {
		return nil, 0, "", fmt.Errorf("cannot create store directory: %w", err)
	}
	defer os.RemoveAll(dir)
	c := app.DefaultConfig(app.RoleServe, "mcpdrift serve", embeddedstore.New())
	if err := c.Parse(append(ingestArgs(cfg, rs), "-data.dir="+dir, "-api.listen=127.0.0.1:0"), os.Stderr); err != nil {
		return nil, 0, "", err
	}
	c.NoRedaction = !cfg.Redact
	p, err := app.Start(ctx, c, "bench", nopWriter{}, os.Stderr)
	if err != nil {
		return nil, 0, "", err
	}
	defer p.Shutdown()
	st := p.Store()
	db := c.Store.Schema().Database
	if v, ok := st.(interface{ Version() string }); ok {
		version = v.Version()
	}
	in := ingester{srv: p.Ingester(), isStore: true, spooled: c.Ingest.Ack == ingest.AckSpooled,
		// The ingester only: the store stays open for the count.
		shutdown: func() error { return shutdownIngester(p.Ingester()) }}
	ph, err = runIngest(ctx, cfg, rs, in, cfg.CPUProfile)
	if err != nil {
		return ph, stored, version, fmt.Errorf("ingest into the embedded store: %w", err)
	}
	var rows []struct {
		N uint64 `json:"n"`
	}
	q := store.Query{Name: "bench_count", SQL: "SELECT count() AS n FROM " + db + ".events WHERE tenant = {tenant:String}"}
	if err := st.Query(ctx, q, store.Params{}.String("tenant", store.DefaultTenant), &rows); err != nil {
		return ph, stored, version, fmt.Errorf("cannot count stored events: %w", err)
	}
	if len(rows) != 1 {
		return ph, stored, version, fmt.Errorf("count query returned %d rows", len(rows))
	}
	if stored = int64(rows[0].N); stored != int64(rs.total) {
		return ph, stored, version, fmt.Errorf("stored %d events, %d were sent", stored, rs.total)
	}
	return ph, stored, version, nil
}

// decodeAll unmarshals every request once with pdata, on streams
// goroutines.
func decodeAll(ctx context.Context, rs *requestSet, streams int) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for range streams {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(rs.reqs) || ctx.Err() != nil {
					return
				}
				req := plogotlp.NewExportRequest()
				if err := req.UnmarshalProto(rs.reqs[i]); err != nil {
					errOnce.Do(func() { first = fmt.Errorf("cannot unmarshal request %d of %d bytes: %w", i, len(rs.reqs[i]), err) })
					return
				}
				if n := req.Logs().LogRecordCount(); n != rs.events[i] {
					errOnce.Do(func() { first = fmt.Errorf("request %d holds %d records, want %d", i, n, rs.events[i]) })
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// discard is a store.Writer that counts the events and keeps nothing.
type discard struct{ events atomic.Int64 }

func (d *discard) Write(_ context.Context, b store.Batch) error {
	d.events.Add(int64(len(b.Events)))
	return nil
}

// Settling: after the last answer, the store run keeps measuring until the
// process is idle — the engine's background merges are part of what an
// insert costs — for at most settleMax.
const (
	settleWindow = 250 * time.Millisecond
	settleIdle   = 0.05 // of one core
	settleMax    = 30 * time.Second
)

// ingestArgs are the flags every ingest run passes over the role's
// defaults: loopback listeners, batches sealed once every sender has a
// request in them, room for the senders' backlog in the pending events
// and the spool, and the run's acknowledgement mode.
func ingestArgs(cfg Config, rs *requestSet) []string {
	args := []string{"-otlp.grpc.listen=127.0.0.1:0", "-otlp.http.listen=127.0.0.1:0",
		// Acknowledged once spooled, the senders run ahead of the store
		// and the spool holds the backlog (≈ 370 B per event); its default
		// 1 GiB would refuse them past ~2.9M events, and they do not retry.
		"-ingest.spool.max-bytes=" + strconv.FormatInt(max(1<<30, int64(rs.total)*1024), 10),
		"-ingest.batch.max-events=" + strconv.Itoa(cfg.IngestBatch),
		"-ingest.max-pending-events=" + strconv.Itoa(max(ingestDefaultMaxPending, 2*cfg.Streams*cfg.Batch, cfg.IngestBatch)),
		"-ingest.insert.max-events=" + strconv.Itoa(cfg.InsertEvents),
		"-log.level=error"}
	if cfg.Ack != "" {
		args = append(args, "-ingest.ack="+cfg.Ack)
	}
	if cfg.SpoolAfter > 0 {
		args = append(args, "-ingest.spool.after="+cfg.SpoolAfter.String())
	}
	return args
}

// ingester is the ingester a run measures.
type ingester struct {
	srv *ingest.Server
	// shutdown stops it gracefully, writing what is pending.
	shutdown func() error
	// isStore: it writes to a real store; spooled: it acknowledges once
	// spooled.
	isStore, spooled bool
}

func shutdownIngester(srv *ingest.Server) error {
	sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return srv.Shutdown(sctx)
}

// newIngester returns an ingester writing to w, for the run without a
// store: the ingest role assembled by app as `ingest` runs it (its
// configuration and options, the default redaction rules), its listeners
// on loopback.
func newIngester(ctx context.Context, cfg Config, rs *requestSet, w store.Writer) (ingester, error) {
	c := app.DefaultConfig(app.RoleIngest, "ingest", app.NewServerStore())
	if err := c.Parse(append(ingestArgs(cfg, rs), "-store.dsn=clickhouse://127.0.0.1:9000", "-ingest.spool.dir=off"), os.Stderr); err != nil {
		return ingester{}, err
	}
	c.NoRedaction = !cfg.Redact
	srv, err := app.NewIngester(c, w, os.Stderr)
	if err != nil {
		return ingester{}, err
	}
	if err := srv.Start(ctx); err != nil {
		return ingester{}, errors.Join(err, shutdownIngester(srv))
	}
	return ingester{srv: srv, shutdown: func() error { return shutdownIngester(srv) }}, nil
}

// runIngest has the sender child send every request through in over
// OTLP/gRPC, and measures the process from the start signal to the last
// answer — then, for a store, until the process is idle. It profiles that
// window to profilePath when set, checks the ingester's counters and
// shuts the ingester down.
func runIngest(ctx context.Context, cfg Config, rs *requestSet, in ingester, profilePath string) (*Phase, error) {
	srv, isStore, spooled := in.srv, in.isStore, in.spooled
	var stopped bool
	shutdown := func() error {
		if stopped {
			return nil
		}
		stopped = true
		return in.shutdown()
	}
	var err error
	var prof *os.File
	if profilePath != "" {
		if prof, err = os.Create(profilePath); err != nil {
			return nil, errors.Join(fmt.Errorf("cannot create CPU profile: %w", err), shutdown())
		}
		defer prof.Close()
	}
	cl, err := startClient(clientSpec{Addr: srv.GRPCAddr().String(), File: rs.path, Streams: cfg.Streams})
	if err != nil {
		return nil, errors.Join(err, shutdown())
	}
	return measureIngest(ctx, rs, srv, cl, shutdown, isStore, spooled, prof)
}

// measureIngest measures one run of cl through srv; see runIngest.
func measureIngest(ctx context.Context, rs *requestSet, srv *ingest.Server, cl *client, shutdown func() error, isStore, spooled bool, prof *os.File) (*Phase, error) {
	var peak *memPeak
	if isStore {
		peak = sampleMemory(100 * time.Millisecond)
		defer peak.stop()
	}
	var (
		res    clientResult
		send   time.Duration
		settle time.Duration
		stored time.Duration
	)
	u, err := measure(func() error {
		if prof != nil {
			if err := pprof.StartCPUProfile(prof); err != nil {
				return fmt.Errorf("cannot start CPU profile: %w", err)
			}
			defer pprof.StopCPUProfile()
		}
		t0 := time.Now()
		var err error
		res, err = cl.run()
		send = time.Since(t0)
		if err == nil && isStore {
			for srv.Stats().EventsStored < uint64(rs.total) && time.Since(t0) < send+settleMax && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			stored = time.Since(t0)
		}
		if err == nil && isStore {
			settle = waitIdle(ctx)
		}
		if err == nil && spooled {
			// The last inserts wait for more batches up to
			// InsertMaxDelay: a shutdown writes them at once, and
			// their cost is the ingester's.
			err = shutdown()
			settle = time.Since(t0) - send
		}
		return err
	})
	err = errors.Join(err, shutdown())
	stats := srv.Stats()
	if err != nil {
		return nil, err
	}
	u.Wall = send
	ph := phaseOf(u, rs.total, &res)
	ph.Settle = settle.Seconds()
	ph.Stored = stored.Seconds()
	if peak != nil {
		ph.PeakAnonRSS, ph.PeakGoHeap = peak.stop()
	}
	switch {
	case res.Requests != len(rs.reqs):
		err = fmt.Errorf("%d of %d requests acknowledged", res.Requests, len(rs.reqs))
	case res.Rejected != 0:
		err = fmt.Errorf("%d records rejected: %s", res.Rejected, res.Message)
	case stats.Accepted != uint64(rs.total) || stats.Rejected != 0 || stats.Ignored != 0:
		err = fmt.Errorf("ingester accepted %d, rejected %d, ignored %d of %d records", stats.Accepted, stats.Rejected, stats.Ignored, rs.total)
	case stats.EventsStored != uint64(rs.total):
		err = fmt.Errorf("ingester stored %d of %d events", stats.EventsStored, rs.total)
	}
	ph.Requests = stats.Requests
	if isStore {
		ph.Inserts = stats.InsertSize.Count
		ph.Replayed, ph.FromMemory = stats.Spool.Replayed, stats.Spool.ReplayedFromMemory
	}
	return ph, err
}

// openStore opens the embedded store in dir and migrates it; the caller
// closes it. It records the engine's version in rep.
func openStore(ctx context.Context, dir string, rep *Report) (st *embedded.Store, db string, err error) {
	scfg := embedded.DefaultConfig(dir)
	if st, err = embedded.Open(ctx, scfg); err != nil {
		return nil, "", err
	}
	if _, err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, "", fmt.Errorf("cannot migrate the store: %w", err)
	}
	rep.Machine.ClickHouse = st.Version()
	return st, scfg.Schema.Database, nil
}

// waitIdle waits until the process uses less than settleIdle of a core over
// a settleWindow, for at most settleMax, and returns how long it waited.
func waitIdle(ctx context.Context) time.Duration {
	t0 := time.Now()
	for time.Since(t0) < settleMax && ctx.Err() == nil {
		c0 := processCPU()
		time.Sleep(settleWindow)
		if float64(processCPU()-c0) < settleIdle*float64(settleWindow) {
			break
		}
	}
	return time.Since(t0)
}

// memPeak samples the process's memory until stopped.
type memPeak struct {
	done         chan struct{}
	once         sync.Once
	wg           sync.WaitGroup
	anon, goHeap int64
}

// sampleMemory samples RssAnon (/proc/self/status) and the Go heap in use
// (runtime/metrics) every interval until stop, keeping the highest of each.
func sampleMemory(interval time.Duration) *memPeak {
	m := &memPeak{done: make(chan struct{})}
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	take := func() {
		m.anon = max(m.anon, procStatus("RssAnon"))
		metrics.Read(samples)
		var heap int64
		for _, s := range samples {
			if s.Value.Kind() == metrics.KindUint64 {
				heap += int64(s.Value.Uint64())
			}
		}
		m.goHeap = max(m.goHeap, heap)
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			take()
			select {
			case <-m.done:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// stop ends the sampling, if it has not ended yet, and returns the peaks
// in bytes.
func (m *memPeak) stop() (anon, goHeap int64) {
	m.once.Do(func() { close(m.done) })
	m.wg.Wait()
	return m.anon, m.goHeap
}
