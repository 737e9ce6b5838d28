package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/store/embedded"
)

func TestMain(m *testing.M) {
	// The suite re-executes the test binary as its sender.
	if spec := os.Getenv(clientEnv); spec != "" {
		os.Exit(clientMain(spec))
	}
	goleak.VerifyTestMain(m)
}

// TestSuiteSmoke runs every suite on a few events, so that `make test` and
// CI keep it working: every run must succeed, every event sent must be
// stored, every report must be timed, the rollup answers must equal the raw
// ones, every figure must be positive, the flood must be refused in part
// and store exactly what was accepted, and the JSON must be written. It
// judges no figure against its target.
func TestSuiteSmoke(t *testing.T) {
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB is set: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	const events = 20000
	cfg := DefaultConfig()
	cfg.Events = events
	// Grouped inserts of 5,000 events: the floors must insert blocks of
	// the same size.
	const insertEvents = 5000
	cfg.InsertEvents = insertEvents
	cfg.TempDir = t.TempDir()
	cfg.Out = filepath.Join(t.TempDir(), "results", "latest.json")
	cfg.Markdown = filepath.Join(t.TempDir(), "results", "bench.md")
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	const reportEvents = 50000
	cfg.ReportEvents = reportEvents
	cfg.ReportRuns, cfg.ReportWarmups = 3, 1
	// A tiny flood: 32 streams of 100-record requests into 1000 pending
	// events must be refused often.
	cfg.OverloadDuration, cfg.OverloadStreams = 3*time.Second, 32
	cfg.OverloadEvents, cfg.OverloadBatch = 30000, 100
	cfg.OverloadMaxPending, cfg.OverloadSpoolBytes = 1000, 1<<20
	var out strings.Builder
	rep, err := Run(context.Background(), cfg, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stored != events {
		t.Errorf("stored %d events, want %d", rep.Stored, events)
	}
	if f := rep.Floors; f == nil || f.Block != insertEvents || f.Inserts != events/insertEvents {
		t.Errorf("floors: %+v, want %d inserts of %d events, as run (c) groups them", f, events/insertEvents, insertEvents)
	}
	if s := rep.Server; s == nil || s.StoredEvents != events || s.Inserts == 0 || s.ServerCPU <= 0 || s.IngestCPU <= 0 ||
		s.InsertCPU <= 0 || s.InsertCPU > s.ServerCPU || s.InsertPeakBytes <= 0 {
		t.Errorf("the ingest role into a server: %+v, want %d events stored, its inserts, their CPU (within the server's) and peak memory, and both processes' CPU", s, events)
	}
	if s := rep.Server; s != nil {
		// Every view of the schema ran on every insert; events_mv wrote
		// each event once.
		byView := map[string]ViewCost{}
		for _, v := range s.Views {
			byView[v.View] = v
		}
		if v := byView["events_mv"]; v.Rows != events || v.Runs == 0 || !(v.CPU > 0) {
			t.Errorf("events_mv's cost %+v, want %d rows written and some CPU", v, events)
		}
		if _, ok := byView["violations_mv"]; !ok || len(s.Views) < 10 {
			t.Errorf("views measured: %+v, want every view of the schema", s.Views)
		}
		if !strings.Contains(out.String(), "the materialised views (system.query_views_log)") {
			t.Error("the views' costs are missing from the table")
		}
	}
	wantFigures := []string{
		"pdata.cpu_us_per_event", "pdata.events_per_s",
		"ingest_no_store.cpu_us_per_event", "ingest_no_store.events_per_s",
		"ingest_store.cpu_us_per_event", "ingest_store.events_per_s",
		"ingest_server.cpu_us_per_event", "ingest_server.rows_per_insert",
		"floor_raw.cpu_us_per_event", "floor_views.cpu_us_per_event", "floor_views.sys_cpu_us_per_event", "ingest_store.sys_cpu_us_per_event", "ingest_server.cpu_us_per_event_vs_floor",
		"ingest_store.peak_anon_rss_mib", "ingest_store.peak_go_heap_mib", "ingest_store.go_allocated_bytes_per_event", "ingest_store.gcs",
		"floor_views.minor_faults_per_kevent", "ingest_store.minor_faults_per_kevent", "ingest_store.go_minor_faults_per_kevent",
		"client_no_store.cpu_us_per_event", "client_store.cpu_us_per_event",
		"report_load.events_per_s", "report_load.store_cpu_us_per_event", "report_load.optimize_s",
		// storage.audit_args needs Wide parts, which a load this small has none of.
		"storage.events.bytes_per_event",
		"storage.calls_1h.bytes_per_event", "storage.calls_1d.bytes_per_event",
		"storage.repairs_1h.bytes_per_event", "storage.total.bytes_per_event",
		"overload.offered_events_per_s", "overload.accepted_events_per_s", "overload.refused_pct", "overload.peak_rss_mib",
	}
	for _, id := range []string{"stale_usage", "rejections", "repairs", "adapter_retirement", "propagation", "violations", "audit",
		"revision_sources", "contract_errors"} {
		wantFigures = append(wantFigures, "reports."+id+".p50_ms", "reports."+id+".p95_ms",
			"reports_http."+id+".as_loaded.p50_ms", "reports_http."+id+".optimized.p50_ms")
	}
	for _, id := range []string{"stale_usage", "rejections", "repairs", "adapter_retirement", "propagation", "violations", "revision_sources"} {
		wantFigures = append(wantFigures, "reports."+id+"_raw.p50_ms", "reports."+id+"_raw.p95_ms", "reports."+id+".speedup_p50")
	}
	// The collector's share and its cycles are read from the runtime's
	// counters, which a collection adds to as it ends: a run this short
	// may see none end, and measure zero.
	mayBeZero := map[string]bool{"ingest_store.gc_cpu_us_per_event": true, "ingest_store.gcs": true}
	got := map[string]Figure{}
	for _, f := range rep.Figures {
		got[f.ID] = f
		if !(f.Value > 0) && !(mayBeZero[f.ID] && f.Value == 0) {
			t.Errorf("%s = %v, want a positive value", f.ID, f.Value)
		}
		if f.Baseline != "" && !(f.Ratio > 0) {
			t.Errorf("%s: ratio %v to %s, want positive", f.ID, f.Ratio, f.Baseline)
		}
		if !strings.Contains(out.String(), f.Label) {
			t.Errorf("%s is missing from the table", f.Label)
		}
	}
	for _, id := range wantFigures {
		if _, ok := got[id]; !ok {
			t.Errorf("figure %s is missing", id)
		}
	}

	if l := rep.Load; l == nil || l.Stored != reportEvents || l.Calls <= 0 {
		t.Errorf("report load: %+v, want %d events stored", l, reportEvents)
	}
	if len(rep.Reports) != len(reportNames) {
		t.Errorf("%d reports timed, want %d", len(rep.Reports), len(reportNames))
	}
	for _, r := range rep.Reports {
		if r.Latency.Runs != cfg.ReportRuns || !(r.Latency.P50Ms > 0) || r.Latency.P95Ms < r.Latency.P50Ms || r.Latency.Read.Rows == 0 {
			t.Errorf("%s: latency %+v", r.Name, r.Latency)
		}
		switch r.ID {
		case "stale_usage", "rejections", "repairs", "adapter_retirement", "propagation", "revision_sources":
			if r.Raw == nil || r.Equal == nil || !*r.Equal || r.Latency.Rows == 0 {
				t.Errorf("%s: raw %+v, rollup = raw %v, %d rows: want equal non-empty answers", r.Name, r.Raw, r.Equal, r.Latency.Rows)
			}
		case "violations": // rare: the small load may hold none
			if r.Raw == nil || r.Equal == nil || !*r.Equal {
				t.Errorf("%s: raw %+v, rollup = raw %v: want equal answers", r.Name, r.Raw, r.Equal)
			}
		default:
			if r.Raw != nil || r.Equal != nil {
				t.Errorf("%s has a raw version", r.Name)
			}
		}
	}
	if s := rep.Storage; s == nil || len(s.Columns) == 0 || s.Tables[0].Table != "events" || s.Tables[0].Rows != reportEvents {
		t.Errorf("storage: %+v, want the events table first with %d rows", s, reportEvents)
	}

	if o := rep.Overload; o == nil {
		t.Error("overload: no result")
	} else {
		a := o.Answers
		if a.AcceptedEvents <= 0 || o.Stored != a.AcceptedEvents {
			t.Errorf("overload: stored %d events, accepted %d: want equal and positive", o.Stored, a.AcceptedEvents)
		}
		if a.Unavailable+a.Exhausted == 0 {
			t.Errorf("overload: no request refused of %d: %+v", a.Requests, a)
		}
		if a.Unavailable != a.UnavailableRetry || len(a.Other) > 0 {
			t.Errorf("overload: %d UNAVAILABLE, %d with RetryInfo, other %v", a.Unavailable, a.UnavailableRetry, a.Other)
		}
		if o.PeakRSS <= 0 {
			t.Errorf("overload: peak RSS %d", o.PeakRSS)
		}
	}

	md, err := os.ReadFile(cfg.Markdown)
	if err != nil {
		t.Fatalf("Markdown not written: %v", err)
	}
	for _, s := range []string{"ingest", "reports", "storage", "overload"} {
		if !strings.Contains(string(md), "\n### "+s+" suite\n") {
			t.Errorf("the Markdown has no table of the %s suite", s)
		}
	}

	data, err := os.ReadFile(cfg.Out)
	if err != nil {
		t.Fatalf("results not written: %v", err)
	}
	var written Report
	if err := json.Unmarshal(data, &written); err != nil {
		t.Fatalf("results are not JSON: %v", err)
	}
	if written.Stored != events || len(written.Figures) != len(rep.Figures) || written.Error != "" ||
		len(written.Reports) != len(rep.Reports) || written.Storage == nil || written.Load == nil || written.Overload == nil {
		t.Errorf("written results differ: stored %d, %d figures, %d reports, error %q", written.Stored, len(written.Figures), len(written.Reports), written.Error)
	}
}

// TestParseSuites checks the -suite flag's parsing.
func TestParseSuites(t *testing.T) {
	f := func(list, want, wantErr string) {
		t.Helper()
		got, err := ParseSuites(list)
		switch {
		case wantErr != "":
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("ParseSuites(%q): error %v, want one containing %q", list, err, wantErr)
			}
		case err != nil:
			t.Errorf("ParseSuites(%q): %v", list, err)
		case strings.Join(got, ",") != want:
			t.Errorf("ParseSuites(%q) = %v, want %s", list, got, want)
		}
	}
	f("all", "ingest,reports,storage,overload", "")
	f("", "ingest,reports,storage,overload", "")
	f("storage,reports", "reports,storage", "")
	f("overload,ingest", "ingest,overload", "")
	f(" ingest , ingest", "ingest", "")
	f("reports,all", "ingest,reports,storage,overload", "")
	f("ingest,queries", "", `unknown suite "queries"`)
	// console and collector run only when named; all leaves them out.
	f("console", "console", "")
	f("overload,console,all", "ingest,reports,storage,console,overload", "")
	f("collector,ingest", "ingest,collector", "")
	f("all,collector", "ingest,reports,storage,overload,collector", "")
	f("collector,console", "console,collector", "")
}

// TestConfigValidate checks that the flags' bounds are enforced.
func TestConfigValidate(t *testing.T) {
	f := func(mod func(*Config), wantErr string) {
		t.Helper()
		cfg := DefaultConfig()
		mod(&cfg)
		err := cfg.Validate()
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("unexpected error: %v", err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("error %v, want one containing %q", err, wantErr)
		}
	}
	f(func(*Config) {}, "")
	f(func(c *Config) { c.Batch = 99 }, "batch must be between 100 and 1000")
	f(func(c *Config) { c.Batch = 1001 }, "batch must be between 100 and 1000")
	f(func(c *Config) { c.Events = 0 }, "events must be positive")
	f(func(c *Config) { c.Streams = 0 }, "streams must be positive")
	f(func(c *Config) { c.Suites = nil }, "at least one suite")
	f(func(c *Config) { c.Suites = []string{"nope"} }, `unknown suite "nope"`)
	f(func(c *Config) { c.Suites = []string{SuiteCollector} }, "")
	f(func(c *Config) { c.Suites, c.SkipStore = []string{SuiteCollector}, true }, "cannot run with skip-store")
	f(func(c *Config) { c.FloorBlock = -1 }, "floor.block-events must not be negative")
	f(func(c *Config) { c.ReportEvents = 0 }, "report-events must be positive")
	f(func(c *Config) { c.ReportRuns = 0 }, "report-runs must be positive")
	f(func(c *Config) { c.ReportWarmups = -1 }, "report-warmups must not be negative")
	f(func(c *Config) { c.ReportSpan = 40 * 24 * time.Hour }, "report-span must be between")
	f(func(c *Config) { c.ReportTools = 0 }, "report fleet sizes must be positive")
	f(func(c *Config) { c.Suites, c.ReportEvents = []string{SuiteIngest}, 0 }, "")
	f(func(c *Config) { c.OverloadDuration = 0 }, "overload-duration must be positive")
	f(func(c *Config) { c.OverloadStreams = 0 }, "overload-streams must be positive")
	f(func(c *Config) { c.OverloadMaxPending = c.OverloadBatch - 1 }, "overload-max-pending must be at least overload-batch")
	f(func(c *Config) { c.OverloadSpoolBytes = 1000 }, "overload-spool-bytes must be at least 256 KiB")
	f(func(c *Config) { c.Suites, c.OverloadDuration = []string{SuiteIngest}, 0 }, "")
}

// TestConsoleSuiteSmoke runs the console suite alone on a small load, so
// that `make test` keeps it working: every page must be timed, with as
// many API requests as it has tables and charts and no problem in the
// browser, and its figures must be in the table. It judges no time.
func TestConsoleSuiteSmoke(t *testing.T) {
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB is set: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	if _, err := chromiumPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHROMIUM") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	cfg := DefaultConfig()
	cfg.Suites = []string{SuiteConsole}
	cfg.TempDir = t.TempDir()
	cfg.Out = ""
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.ReportEvents = 30000
	cfg.ReportRuns, cfg.ReportWarmups = 2, 1
	var out strings.Builder
	rep, err := Run(context.Background(), cfg, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	var pages []string
	for _, c := range rep.Console {
		pages = append(pages, c.Page)
		if c.Latency.Runs != 2 || !(c.Latency.P50Ms > 0) || !(c.API.P50Ms > 0) || c.API.P50Ms > c.Latency.P50Ms || c.Requests != c.Want {
			t.Errorf("%s: %+v", c.Page, c)
		}
	}
	if strings.Join(pages, " ") != "adapters adapter tools tool violations audit check" {
		t.Errorf("pages timed: %v", pages)
	}
	for _, f := range rep.Figures {
		if strings.HasPrefix(f.ID, "console.") && !strings.Contains(out.String(), f.Label) {
			t.Errorf("%s is missing from the table", f.Label)
		}
	}
	if n := len(rep.Figures); n != 4*len(pages)+3 {
		t.Errorf("%d figures, want 4 per page and the load's 3", n)
	}
}
