package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the result of a run of the suite, as printed and as written to
// JSON.
type Report struct {
	// Time is when the run started.
	Time time.Time `json:"time"`
	// Machine describes where it ran.
	Machine Machine `json:"machine"`
	// Config is the run's configuration.
	Config ReportConfig `json:"config"`
	// Requests and RequestBytes describe the requests sent by every run.
	Requests     int `json:"requests"`
	RequestBytes int `json:"request_bytes"`
	// Baseline, NoStore and Store are the raw measurements of runs (a), (b)
	// and (c); nil when a run did not happen.
	Baseline *Phase `json:"baseline_pdata,omitempty"`
	NoStore  *Phase `json:"ingest_no_store,omitempty"`
	Store    *Phase `json:"ingest_store,omitempty"`
	// Server is run (c) of the ingest role into a ClickHouse server; nil
	// when it did not happen.
	Server *ServerPhase `json:"ingest_server,omitempty"`
	// Floors are the engine's own cost for the rows of run (c); nil when
	// they were not measured.
	Floors *Floors `json:"floors,omitempty"`
	// Stored is the count of events in the store after run (c).
	Stored int64 `json:"stored"`
	// Load, Reports and Storage are the reports and storage suites'
	// measurements; empty when those suites did not run.
	Load    *LoadResult    `json:"report_load,omitempty"`
	Reports []ReportTiming `json:"reports,omitempty"`
	// HTTPReports are the same reports through the HTTP API, on the store
	// as loaded and after OPTIMIZE FINAL.
	HTTPReports []HTTPTiming   `json:"reports_http,omitempty"`
	Storage     *StorageResult `json:"storage,omitempty"`
	// Dashboards is the dashboards refresh (dashboards.go); nil when the
	// reports suite did not run.
	Dashboards *DashboardRefresh `json:"dashboards,omitempty"`
	// Overload is the overload suite's measurement; nil when it did not
	// run.
	Overload *OverloadResult `json:"overload,omitempty"`
	// Console is the console suite's pages (console.go); empty when it
	// did not run.
	Console []ConsoleTiming `json:"console,omitempty"`
	// Collector is the collector suite's measurement (j); nil when it did
	// not run.
	Collector *CollectorPhase `json:"collector,omitempty"`
	// Command is the command line of the run, as the Markdown tables name
	// it; empty when the caller gave none.
	Command string `json:"command,omitempty"`
	// Commit is the commit of the working tree the bench ran from (git
	// rev-parse HEAD), with "-dirty" when tracked files differed from it;
	// empty outside a git checkout. A results file names the code it
	// measured.
	Commit string `json:"commit,omitempty"`
	// Figures are the table's rows.
	Figures []Figure `json:"figures"`
	// Error is why the run failed, empty when it did not.
	Error string `json:"error,omitempty"`
}

// Machine describes the machine and the toolchain.
type Machine struct {
	NumCPU     int    `json:"nproc"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUModel   string `json:"cpu_model,omitempty"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages when the run
	// started: other work on the machine makes the rates unreliable.
	LoadAvg    string `json:"loadavg,omitempty"`
	ClickHouse string `json:"clickhouse,omitempty"`
	// ClickHouseServer is the version of the server run (c) wrote to.
	ClickHouseServer string `json:"clickhouse_server,omitempty"`
}

// ReportConfig is the part of Config that shapes the figures.
type ReportConfig struct {
	Suites      []string `json:"suites"`
	Events      int      `json:"events"`
	Batch       int      `json:"batch"`
	Streams     int      `json:"streams"`
	IngestBatch int      `json:"ingest_batch_events"`
	IngestAck   string   `json:"ingest_ack,omitempty"`
	InsertMax   int      `json:"ingest_insert_events,omitempty"`
	SpoolAfterS float64  `json:"ingest_spool_after_s,omitempty"`
	// Redaction is "default rules", as the commands run, or "off".
	Redaction string `json:"redaction"`
	Seed      uint64 `json:"seed"`

	ReportEvents   int     `json:"report_events,omitempty"`
	ReportBatch    int     `json:"report_batch,omitempty"`
	ReportRuns     int     `json:"report_runs,omitempty"`
	ReportWarmups  int     `json:"report_warmups,omitempty"`
	ReportSpanH    float64 `json:"report_span_h,omitempty"`
	ReportTools    int     `json:"report_tools,omitempty"`
	ReportSessions int     `json:"report_sessions,omitempty"`
	ReportClients  int     `json:"report_clients,omitempty"`
	ReportServers  int     `json:"report_servers,omitempty"`

	OverloadDurationS  float64 `json:"overload_duration_s,omitempty"`
	OverloadStreams    int     `json:"overload_streams,omitempty"`
	OverloadEvents     int     `json:"overload_events,omitempty"`
	OverloadBatch      int     `json:"overload_batch,omitempty"`
	OverloadMaxPending int     `json:"overload_max_pending_events,omitempty"`
	OverloadSpoolBytes int64   `json:"overload_spool_bytes,omitempty"`
}

// Phase is one measured run.
type Phase struct {
	Events int `json:"events"`
	// CPU is the process's user + system seconds during the run.
	CPU float64 `json:"cpu_s"`
	// GoCPU is the part of CPU on the Go runtime's threads, the rest being
	// the engine's (goThreadsCPU); zero when unknown.
	GoCPU float64 `json:"go_cpu_s,omitempty"`
	// GCCPU is the Go garbage collector's part of GoCPU, as the runtime
	// estimates it.
	GCCPU float64 `json:"gc_cpu_s,omitempty"`
	// SysCPU is the part of CPU spent in the kernel, every thread's.
	SysCPU float64 `json:"sys_cpu_s,omitempty"`
	// GoAllocated is the bytes the Go heap allocated during the run, GCs
	// the garbage collections that ran.
	GoAllocated uint64 `json:"go_allocated_bytes,omitempty"`
	GCs         uint64 `json:"gcs,omitempty"`
	// Faults is the minor page faults the process took during the run,
	// every thread's, GoFaults the Go runtime's threads' part of them:
	// mostly memory touched afresh, a page the kernel had to find and zero
	// for it. They count that work whatever the speed of the cores.
	Faults   uint64 `json:"minor_faults,omitempty"`
	GoFaults uint64 `json:"go_minor_faults,omitempty"`
	// Wall is the seconds from the first request to the last answer.
	Wall float64 `json:"wall_s"`
	// Settle is the seconds the store run kept measuring CPU after the last
	// answer, until the process was idle (background merges).
	Settle float64 `json:"settle_s,omitempty"`
	// Stored is the seconds from the first request until the ingester had
	// stored every event (the store run); with exports acknowledged once
	// spooled it trails Wall by the replayer's last inserts.
	Stored float64 `json:"stored_s,omitempty"`
	// Requests is the export requests the ingester received.
	Requests uint64 `json:"requests,omitempty"`
	// Inserts is the store inserts the ingester made (the store run).
	Inserts uint64 `json:"inserts,omitempty"`
	// Replayed is the spooled batches the replayer wrote to the store,
	// FromMemory those it took from the spool's memory rather than
	// reading them back from disk.
	Replayed   uint64 `json:"replayed,omitempty"`
	FromMemory uint64 `json:"replayed_from_memory,omitempty"`
	// PeakAnonRSS is the highest RssAnon of the process sampled during the
	// store run, in bytes: the Go heap and the engine's allocations, not
	// the mapped request file. PeakGoHeap is the highest Go heap in use
	// (runtime/metrics) over the same samples.
	PeakAnonRSS int64 `json:"peak_anon_rss_bytes,omitempty"`
	PeakGoHeap  int64 `json:"peak_go_heap_bytes,omitempty"`
	// ClientCPU and ClientWall are the sender child's own measurements.
	ClientCPU  float64 `json:"client_cpu_s,omitempty"`
	ClientWall float64 `json:"client_wall_s,omitempty"`
}

// CPUPerEvent returns the CPU microseconds per event.
func (p *Phase) CPUPerEvent() float64 { return p.CPU * 1e6 / float64(p.Events) }

// EventsPerSecond returns the events per wall-clock second.
func (p *Phase) EventsPerSecond() float64 { return float64(p.Events) / p.Wall }

// ClientCPUPerEvent returns the sender's CPU microseconds per event.
func (p *Phase) ClientCPUPerEvent() float64 { return p.ClientCPU * 1e6 / float64(p.Events) }

// faultsPerKEvents returns n page faults per thousand of the run's events.
func (p *Phase) faultsPerKEvents(n uint64) float64 { return float64(n) * 1e3 / float64(p.Events) }

func phaseOf(u usage, events int, cl *clientResult) *Phase {
	p := &Phase{Events: events, CPU: u.CPU.Seconds(), Wall: u.Wall.Seconds(), GoCPU: u.GoCPU.Seconds(), GCCPU: u.GCCPU.Seconds(), SysCPU: u.SysCPU.Seconds(),
		GoAllocated: u.Allocated, GCs: u.GCs, Faults: u.Faults, GoFaults: u.GoFaults}
	if cl != nil {
		p.ClientCPU = time.Duration(cl.CPU).Seconds()
		p.ClientWall = time.Duration(cl.Wall).Seconds()
	}
	return p
}

// Figure is one row of the table.
type Figure struct {
	// ID names the figure in the JSON, such as "ingest_store.cpu_us_per_event".
	ID string `json:"id"`
	// Suite is the suite that measured it, which the Markdown output
	// groups the figures by.
	Suite string `json:"suite"`
	// Label is the row's text in the table.
	Label string  `json:"label"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Baseline is the figure Ratio is relative to, measured in the same run;
	// empty for the baselines themselves.
	Baseline      string  `json:"baseline,omitempty"`
	BaselineValue float64 `json:"baseline_value,omitempty"`
	// Ratio is Value / BaselineValue.
	Ratio float64 `json:"ratio,omitempty"`
	// Target is the design's target, empty when there is none; Met tells
	// whether the figure meets it.
	Target string `json:"target,omitempty"`
	Met    *bool  `json:"met,omitempty"`
}

func newReport(cfg Config) *Report {
	return &Report{
		Time: time.Now().UTC(),
		Machine: Machine{
			NumCPU:     runtime.NumCPU(),
			GOMAXPROCS: runtime.GOMAXPROCS(0),
			GoVersion:  runtime.Version(),
			OS:         runtime.GOOS,
			Arch:       runtime.GOARCH,
			CPUModel:   cpuModel(),
			LoadAvg:    loadAvg(),
		},
		Config:  reportConfig(cfg),
		Command: cfg.Command,
		Commit:  gitCommit(),
	}
}

// gitCommit returns the working tree's commit, with "-dirty" when a
// tracked file differs from it, or "" when git cannot tell (no git, no
// checkout).
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	commit := strings.TrimSpace(string(out))
	status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	if err == nil && len(bytes.TrimSpace(status)) > 0 {
		commit += "-dirty"
	}
	return commit
}

func reportConfig(cfg Config) ReportConfig {
	rc := ReportConfig{
		Suites: cfg.Suites, Events: cfg.Events, Batch: cfg.Batch, Streams: cfg.Streams,
		IngestBatch: cfg.IngestBatch, Seed: cfg.Seed,
		IngestAck: cfg.Ack, SpoolAfterS: cfg.SpoolAfter.Seconds(),
		Redaction: map[bool]string{true: "default rules", false: "off"}[cfg.Redact],
	}
	if cfg.Ack == "spooled" {
		rc.InsertMax = cfg.InsertEvents
	}
	if cfg.loadsReports() {
		rc.ReportEvents, rc.ReportBatch = cfg.ReportEvents, cfg.ReportBatch
		rc.ReportRuns, rc.ReportWarmups = cfg.ReportRuns, cfg.ReportWarmups
		rc.ReportSpanH = cfg.ReportSpan.Hours()
		rc.ReportTools, rc.ReportSessions = cfg.ReportTools, cfg.ReportSessions
		rc.ReportClients, rc.ReportServers = cfg.ReportClients, cfg.ReportServers
	}
	if cfg.has(SuiteOverload) {
		rc.OverloadDurationS, rc.OverloadStreams = cfg.OverloadDuration.Seconds(), cfg.OverloadStreams
		rc.OverloadEvents, rc.OverloadBatch = cfg.OverloadEvents, cfg.OverloadBatch
		rc.OverloadMaxPending, rc.OverloadSpoolBytes = cfg.OverloadMaxPending, cfg.OverloadSpoolBytes
	}
	return rc
}

// cpuModel returns the first "model name" of /proc/cpuinfo, or "".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// loadAvg returns the load averages of /proc/loadavg, or "".
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(data)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

// finish derives the figures from the phases measured.
func (r *Report) finish() {
	r.Figures = r.Figures[:0]
	suite := SuiteIngest
	add := func(f Figure) {
		f.Suite = suite
		r.Figures = append(r.Figures, f)
	}
	ratio := func(f Figure, baseID string, base float64) Figure {
		f.Baseline, f.BaselineValue = baseID, base
		if base > 0 {
			f.Ratio = f.Value / base
		}
		return f
	}
	met := func(ok bool) *bool { return &ok }

	r.ingestFigures(add, ratio, met)
	suite = SuiteReports
	r.reportFigures(add, ratio, met)
	r.dashboardFigures(add)
	suite = SuiteConsole
	r.consoleFigures(add, met)
	suite = SuiteOverload
	r.overloadFigures(add, ratio, met)
	suite = SuiteCollector
	r.collectorFigures(add, ratio, met)
	// The storage suite's figures come out of reportFigures.
	for i := range r.Figures {
		if strings.HasPrefix(r.Figures[i].ID, "storage.") {
			r.Figures[i].Suite = SuiteStorage
		}
	}
}

// overloadFigures derives the overload suite's figures: (h) the events
// offered and accepted per second, the share of requests refused and the
// ingester process's peak RSS.
func (r *Report) overloadFigures(add func(Figure), ratio func(Figure, string, float64) Figure, met func(bool) *bool) {
	o := r.Overload
	if o == nil || o.Wall <= 0 {
		return
	}
	const offered = "overload.offered_events_per_s"
	add(Figure{ID: offered, Label: "(h) overload: offered", Value: o.OfferedPerSecond(), Unit: "events/s"})
	add(ratio(Figure{ID: "overload.accepted_events_per_s", Label: "(h) overload: accepted", Value: o.AcceptedPerSecond(), Unit: "events/s"}, offered, o.OfferedPerSecond()))
	add(Figure{ID: "overload.refused_pct", Label: "(h) overload: requests refused (503/429)", Value: o.RefusedShare(), Unit: "%",
		Target: "> 0 (sheds load)", Met: met(o.RefusedShare() > 0)})
	if o.PeakRSS > 0 {
		f := Figure{ID: "overload.peak_rss_mib", Label: "(h) overload: ingester peak RSS", Value: float64(o.PeakRSS) / (1 << 20), Unit: "MiB"}
		if o.RSSBefore > 0 {
			f = ratio(f, "overload.rss_before_mib", float64(o.RSSBefore)/(1<<20))
		}
		add(f)
	}
}

// ingestFigures derives the figures of runs (a) to (d).
func (r *Report) ingestFigures(add func(Figure), ratio func(Figure, string, float64) Figure, met func(bool) *bool) {
	b := r.Baseline
	if b == nil {
		return
	}
	const (
		baseCPU    = "pdata.cpu_us_per_event"
		baseRate   = "pdata.events_per_s"
		noStoreCPU = "ingest_no_store.cpu_us_per_event"
		storeCPU   = "ingest_store.cpu_us_per_event"
	)
	add(Figure{ID: baseCPU, Label: "(a) pdata decode, CPU", Value: b.CPUPerEvent(), Unit: "µs/event"})
	add(Figure{ID: baseRate, Label: "(a) pdata decode, rate", Value: b.EventsPerSecond(), Unit: "events/s"})
	if p := r.NoStore; p != nil {
		f := ratio(Figure{ID: noStoreCPU, Label: "(b) ingest, no store, CPU", Value: p.CPUPerEvent(), Unit: "µs/event"}, baseCPU, b.CPUPerEvent())
		f.Target, f.Met = fmt.Sprintf("≤ %.1f× baseline", targetIngestRatio), met(f.Ratio <= targetIngestRatio)
		add(f)
		add(ratio(Figure{ID: "ingest_no_store.events_per_s", Label: "(b) ingest, no store, rate", Value: p.EventsPerSecond(), Unit: "events/s"}, baseRate, b.EventsPerSecond()))
	}
	// The floors, and every store figure's ratio to the all-views one.
	const (
		floorRaw    = "floor_raw.cpu_us_per_event"
		floorViews  = "floor_views.cpu_us_per_event"
		floorFaults = "floor_views.minor_faults_per_kevent"
		faultUnit   = "/1000 events"
	)
	toFloor := func(f Figure) Figure { return f }
	if fl := r.Floors; fl != nil {
		blocks := fmt.Sprintf("Native blocks of %d", fl.Block)
		if fl.SubBlock > 0 {
			blocks = fmt.Sprintf("inserts of %d in Native blocks of %d", fl.Block, fl.SubBlock)
		}
		add(Figure{ID: floorRaw, Label: "(c) floor: " + blocks + " → the raw table alone, CPU", Value: fl.Raw.CPUPerEvent(), Unit: "µs/event"})
		f := ratio(Figure{ID: floorViews, Label: fmt.Sprintf("(c) floor: the same → events_in and its %d views, CPU", fl.ViewCount), Value: fl.Views.CPUPerEvent(), Unit: "µs/event"}, floorRaw, fl.Raw.CPUPerEvent())
		f.Target, f.Met = fmt.Sprintf("≤ %.0f× baseline", targetViewsRatio), met(f.Ratio <= targetViewsRatio)
		add(f)
		add(Figure{ID: "floor_views.sys_cpu_us_per_event", Label: "(c) floor: … of which system time (the kernel's)", Value: fl.Views.SysCPU * 1e6 / float64(fl.Views.Events), Unit: "µs/event"})
		add(Figure{ID: floorFaults, Label: "(c) floor: … minor page faults", Value: fl.Views.faultsPerKEvents(fl.Views.Faults), Unit: faultUnit})
		toFloor = func(f Figure) Figure { return ratio(f, floorViews, fl.Views.CPUPerEvent()) }
	}
	if p := r.Store; p != nil {
		f := toFloor(Figure{ID: storeCPU, Label: "(c) ingest → embedded store, CPU", Value: p.CPUPerEvent(), Unit: "µs/event"})
		if r.Floors != nil {
			f.Target, f.Met = fmt.Sprintf("≤ %.1f× baseline", targetStoreRatio), met(f.Ratio <= targetStoreRatio)
		}
		add(f)
		add(ratio(Figure{ID: "ingest_store.events_per_s", Label: "(c) ingest → embedded store, rate acknowledged", Value: p.EventsPerSecond(), Unit: "events/s"}, baseRate, b.EventsPerSecond()))
		if p.Stored > 0 {
			add(ratio(Figure{ID: "ingest_store.stored_events_per_s", Label: "(c) ingest → embedded store, rate stored", Value: float64(p.Events) / p.Stored, Unit: "events/s"}, baseRate, b.EventsPerSecond()))
		}
		if p.GoCPU > 0 {
			g := Figure{ID: "ingest_store.go_cpu_us_per_event", Label: "(c) … of which Go's threads", Value: p.GoCPU * 1e6 / float64(p.Events), Unit: "µs/event"}
			if nb := r.NoStore; nb != nil {
				g = ratio(g, noStoreCPU, nb.CPUPerEvent())
				g.Target, g.Met = fmt.Sprintf("≤ %.0f× baseline", targetGoRatio), met(g.Ratio <= targetGoRatio)
			}
			add(g)
			add(Figure{ID: "ingest_store.gc_cpu_us_per_event", Label: "(c) … of which Go's garbage collector", Value: p.GCCPU * 1e6 / float64(p.Events), Unit: "µs/event"})
			add(Figure{ID: "ingest_store.go_allocated_bytes_per_event", Label: "(c) … Go heap allocated", Value: float64(p.GoAllocated) / float64(p.Events), Unit: "B/event"})
			add(Figure{ID: "ingest_store.gcs", Label: "(c) … garbage collections", Value: float64(p.GCs), Unit: "cycles"})
			add(toFloor(Figure{ID: "ingest_store.engine_cpu_us_per_event", Label: "(c) … of which the engine's threads", Value: (p.CPU - p.GoCPU) * 1e6 / float64(p.Events), Unit: "µs/event"}))
		}
		add(Figure{ID: "ingest_store.sys_cpu_us_per_event", Label: "(c) … of which system time (the kernel's, every thread's)", Value: p.SysCPU * 1e6 / float64(p.Events), Unit: "µs/event"})
		faults := Figure{ID: "ingest_store.minor_faults_per_kevent", Label: "(c) … minor page faults, every thread's", Value: p.faultsPerKEvents(p.Faults), Unit: faultUnit}
		if fl := r.Floors; fl != nil {
			faults = ratio(faults, floorFaults, fl.Views.faultsPerKEvents(fl.Views.Faults))
			faults.Target, faults.Met = fmt.Sprintf("≤ %.1f× baseline", targetFaultsRatio), met(faults.Ratio <= targetFaultsRatio)
		}
		add(faults)
		if p.GoCPU > 0 {
			add(Figure{ID: "ingest_store.go_minor_faults_per_kevent", Label: "(c) … of which Go's threads", Value: p.faultsPerKEvents(p.GoFaults), Unit: faultUnit})
		}
		if p.Replayed > 0 {
			add(Figure{ID: "ingest_store.replayed_from_memory_pct", Label: "(c) spooled batches replayed from memory", Value: 100 * float64(p.FromMemory) / float64(p.Replayed), Unit: "%"})
		}
		if p.Inserts > 0 {
			add(Figure{ID: "ingest_store.rows_per_insert", Label: "(c) ingest → embedded store: rows per INSERT", Value: float64(p.Events) / float64(p.Inserts), Unit: "rows"})
		}
		if p.PeakAnonRSS > 0 {
			add(Figure{ID: "ingest_store.peak_anon_rss_mib", Label: "(c) peak anonymous RSS (Go heap + engine)", Value: float64(p.PeakAnonRSS) / (1 << 20), Unit: "MiB"})
			add(Figure{ID: "ingest_store.peak_go_heap_mib", Label: "(c) peak Go heap in use", Value: float64(p.PeakGoHeap) / (1 << 20), Unit: "MiB"})
		}
	}
	if p := r.Server; p != nil {
		f := Figure{ID: "ingest_server.cpu_us_per_event", Label: "(c) ingest role → ClickHouse server, CPU (both processes)", Value: p.CPUPerEvent(), Unit: "µs/event"}
		if s := r.Store; s != nil {
			f = ratio(f, storeCPU, s.CPUPerEvent())
			f.Target, f.Met = fmt.Sprintf("≤ %.1f× (c) embedded", targetServerRatio), met(f.Ratio <= targetServerRatio)
		}
		add(f)
		if r.Floors != nil {
			add(toFloor(Figure{ID: "ingest_server.cpu_us_per_event_vs_floor", Label: "(c) ingest role → ClickHouse server, CPU, against the floor", Value: p.CPUPerEvent(), Unit: "µs/event"}))
		}
		add(Figure{ID: "ingest_server.ingest_cpu_us_per_event", Label: "(c) ingest role → server: the ingest process", Value: p.IngestCPU * 1e6 / float64(p.Events), Unit: "µs/event"})
		add(Figure{ID: "ingest_server.server_cpu_us_per_event", Label: "(c) ingest role → server: the server process", Value: p.ServerCPU * 1e6 / float64(p.Events), Unit: "µs/event"})
		add(Figure{ID: "ingest_server.rows_per_insert", Label: "(c) ingest role → server: rows per INSERT", Value: p.RowsPerInsert(), Unit: "rows",
			Target: fmt.Sprintf("≥ %d", targetServerInsertRows), Met: met(p.RowsPerInsert() >= targetServerInsertRows)})
		if p.Phase.Stored > 0 {
			add(ratio(Figure{ID: "ingest_server.stored_events_per_s", Label: "(c) ingest role → server, rate stored", Value: float64(p.Events) / p.Phase.Stored, Unit: "events/s"}, baseRate, b.EventsPerSecond()))
		}
	}
	if p := r.NoStore; p != nil {
		add(ratio(Figure{ID: "client_no_store.cpu_us_per_event", Label: "(d) sender during (b), CPU", Value: p.ClientCPUPerEvent(), Unit: "µs/event"}, noStoreCPU, p.CPUPerEvent()))
	}
	if p := r.Store; p != nil {
		add(ratio(Figure{ID: "client_store.cpu_us_per_event", Label: "(d) sender during (c), CPU", Value: p.ClientCPUPerEvent(), Unit: "µs/event"}, storeCPU, p.CPUPerEvent()))
	}
}

// reportFigures derives the figures of the reports and storage suites: (e)
// the load, (f) each report's latency (against its raw version where it
// has one), (g) the bytes on disk per event of each table.
func (r *Report) reportFigures(add func(Figure), ratio func(Figure, string, float64) Figure, met func(bool) *bool) {
	if l := r.Load; l != nil && l.Wall > 0 {
		add(Figure{ID: "report_load.events_per_s", Label: "(e) load → embedded store, 100k-event Writes, rate", Value: l.EventsPerSecond(), Unit: "events/s"})
		add(Figure{ID: "report_load.store_cpu_us_per_event", Label: "(e) load → embedded store, CPU (simulator excluded)", Value: l.StoreCPUPerEvent(), Unit: "µs/event"})
		if l.Optimize > 0 {
			add(Figure{ID: "report_load.optimize_s", Label: "(e) OPTIMIZE FINAL, every table", Value: l.Optimize + l.Settle, Unit: "s"})
		}
	}
	target := fmt.Sprintf("≤ %.0f ms", targetReportMs)
	for _, t := range r.Reports {
		id := "reports." + t.ID
		lat := func(q string, v float64, raw *Latency, rawV float64) Figure {
			f := Figure{ID: id + "." + q + "_ms", Label: fmt.Sprintf("(f) %s %s", t.Name, q), Value: v, Unit: "ms",
				Target: target, Met: met(v <= targetReportMs)}
			if raw != nil {
				f = ratio(f, id+"_raw."+q+"_ms", rawV)
			}
			return f
		}
		if t.Raw == nil {
			add(lat("p50", t.Latency.P50Ms, nil, 0))
			add(lat("p95", t.Latency.P95Ms, nil, 0))
			continue
		}
		add(lat("p50", t.Latency.P50Ms, t.Raw, t.Raw.P50Ms))
		add(lat("p95", t.Latency.P95Ms, t.Raw, t.Raw.P95Ms))
		add(Figure{ID: id + "_raw.p50_ms", Label: fmt.Sprintf("(f) %s from raw events p50", t.Name), Value: t.Raw.P50Ms, Unit: "ms"})
		add(Figure{ID: id + "_raw.p95_ms", Label: fmt.Sprintf("(f) %s from raw events p95", t.Name), Value: t.Raw.P95Ms, Unit: "ms"})
		if t.Latency.P50Ms > 0 {
			s := t.Raw.P50Ms / t.Latency.P50Ms
			add(Figure{ID: id + ".speedup_p50", Label: fmt.Sprintf("(f) %s raw/rollup p50", t.Name), Value: s, Unit: "×",
				Target: fmt.Sprintf("≥ %.0f×", targetReportSpeedup), Met: met(s >= targetReportSpeedup)})
		}
	}
	for _, t := range r.HTTPReports {
		id := "reports_http." + t.ID
		if l := t.AsLoaded; l != nil {
			add(Figure{ID: id + ".as_loaded.p50_ms", Label: fmt.Sprintf("(f) %s over HTTP, store as loaded, p50", t.Name), Value: l.P50Ms, Unit: "ms",
				Target: target, Met: met(l.P50Ms <= targetReportMs)})
		}
		if l := t.Optimized; l != nil {
			f := Figure{ID: id + ".optimized.p50_ms", Label: fmt.Sprintf("(f) %s over HTTP, after OPTIMIZE FINAL, p50", t.Name), Value: l.P50Ms, Unit: "ms",
				Target: target, Met: met(l.P50Ms <= targetReportMs)}
			if t.AsLoaded != nil {
				f = ratio(f, id+".as_loaded.p50_ms", t.AsLoaded.P50Ms)
			}
			add(f)
		}
	}
	if s := r.Storage; s != nil {
		var total float64
		args := float64(s.AuditArgsBytes) / float64(s.Events)
		for _, t := range s.Tables {
			f := Figure{ID: "storage." + t.Table + ".bytes_per_event", Label: "(g) on disk: " + t.Table, Value: t.BytesPerEvent, Unit: "B/event"}
			if t.Table == "events" && s.AuditArgsBytes > 0 {
				// The target is the raw events': the audit's arguments, kept
				// in events on their own retention, are a figure apart. Their
				// size is known for Wide parts only (as the columns' table
				// says); with Compact parts the events' figure holds them.
				raw := t.BytesPerEvent - args
				f.Label, f.Value = "(g) on disk: events, the audit's arguments apart", raw
				f.Target, f.Met = fmt.Sprintf("≤ %.0f B/event", targetBytesPerEvent), met(raw <= targetBytesPerEvent)
				add(f)
				add(Figure{ID: "storage.audit_args.bytes_per_event", Label: "(g) on disk: the audit's arguments (events.args_raw, args_normalized)", Value: args, Unit: "B/event"})
			} else {
				if t.Table == "events" {
					f.Target, f.Met = fmt.Sprintf("≤ %.0f B/event", targetBytesPerEvent), met(t.BytesPerEvent <= targetBytesPerEvent)
				}
				add(f)
			}
			total += t.BytesPerEvent
		}
		add(Figure{ID: "storage.total.bytes_per_event", Label: "(g) on disk: every table", Value: total, Unit: "B/event"})
	}
}

// header describes the machine and the run.
func (r *Report) header() string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "mcpdrift bench — %s\n", r.Time.Format(time.RFC3339))
	fmt.Fprintf(&b, "machine: nproc %d, GOMAXPROCS %d, %s %s/%s", m.NumCPU, m.GOMAXPROCS, m.GoVersion, m.OS, m.Arch)
	if m.CPUModel != "" {
		fmt.Fprintf(&b, ", %s", m.CPUModel)
	}
	if m.LoadAvg != "" {
		fmt.Fprintf(&b, ", load average %s", m.LoadAvg)
	}
	c := r.Config
	fmt.Fprintf(&b, "\nsuites: %s; seed %d\n", strings.Join(c.Suites, ", "), c.Seed)
	if slices.Contains(c.Suites, SuiteIngest) {
		fmt.Fprintf(&b, "ingest: %d events, %d records per request, %d streams, ingester BatchMaxEvents %d",
			c.Events, c.Batch, c.Streams, c.IngestBatch)
		switch {
		case c.IngestAck == "spooled":
			fmt.Fprintf(&b, "; (c) acknowledged once spooled, the store written in grouped inserts of up to %d events", c.InsertMax)
		case c.SpoolAfterS > 0:
			fmt.Fprintf(&b, "; (c) with a spool after %gs of store latency", c.SpoolAfterS)
		}
		fmt.Fprintf(&b, "; redaction: %s\n", c.Redaction)
	}
	if slices.Contains(c.Suites, SuiteCollector) {
		fmt.Fprintf(&b, "collector: %d events, %d records per request, %d streams, into the Collector of %s and into (c) `serve`; redaction in (c): %s\n",
			c.Events, c.Batch, c.Streams, collectorManifest, c.Redaction)
	}
	if slices.Contains(c.Suites, SuiteOverload) {
		fmt.Fprintf(&b, "overload: %gs flood on %d streams, %d events in requests of %d, MaxPendingEvents %d, spool %d bytes\n",
			c.OverloadDurationS, c.OverloadStreams, c.OverloadEvents, c.OverloadBatch, c.OverloadMaxPending, c.OverloadSpoolBytes)
	}
	if c.ReportEvents > 0 {
		fmt.Fprintf(&b, "reports: %d events in Writes of %d, %d tools, %d sessions, %d clients, %d servers over %gh; %d runs per report after %d warm-ups\n",
			c.ReportEvents, c.ReportBatch, c.ReportTools, c.ReportSessions, c.ReportClients, c.ReportServers, c.ReportSpanH, c.ReportRuns, c.ReportWarmups)
	}
	return b.String()
}

// table prints the figures, then how they were measured.
func (r *Report) table() string {
	var out strings.Builder
	tw := newTabWriter(&out)
	fmt.Fprintln(tw, "figure\tvalue\tbaseline (same run)\tratio\ttarget")
	for _, f := range r.Figures {
		base, ratio := "", ""
		if f.Baseline != "" {
			base, ratio = formatValue(f.BaselineValue, f.Unit), fmt.Sprintf("%.2f×", f.Ratio)
		}
		target := f.Target
		if f.Met != nil {
			if *f.Met {
				target += " (met)"
			} else {
				target += " (MISSED)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Label, formatValue(f.Value, f.Unit), base, ratio, target)
	}
	_ = tw.Flush()

	if p := r.Store; p != nil {
		fmt.Fprintf(&out, "\nstored %d events of %d sent", r.Stored, p.Events)
		if p.Settle > 0 {
			fmt.Fprintf(&out, "; (c) CPU includes %.2f s after the last answer until the process was idle (background merges)", p.Settle)
		}
		out.WriteString("\n")
	}
	if f := r.Floors; f != nil {
		blocks := "one Native block per file"
		if f.SubBlock > 0 {
			blocks = fmt.Sprintf("Native blocks of %d events (-floor.block-events)", f.SubBlock)
		}
		fmt.Fprintf(&out, "(c) floors: the same rows, decoded and redacted as (c) stores them, encoded beforehand into %d files of ≤ %d events,\n"+
			"    %s, each inserted by the engine itself (INSERT … SELECT FROM file(…, 'Native')) into a fresh store;\n"+
			"    CPU until idle (%.2f s and %.2f s of merges after the last insert)\n", f.Inserts, f.Block, blocks, f.Raw.Settle, f.Views.Settle)
	}
	if p := r.Server; p != nil {
		fmt.Fprintf(&out, "(c) ingest role → ClickHouse %s server (libchdb run as a server, its own process): %d of %d events stored in %d INSERTs;\n"+
			"    CPU %.2f s in the ingest process + %.2f s in the server, %.2f s of it after the last answer until both were idle\n",
			r.Machine.ClickHouseServer, p.StoredEvents, p.Events, p.Inserts, p.IngestCPU, p.ServerCPU, p.Settle)
		if p.InsertCPU > 0 {
			fmt.Fprintf(&out, "    the server's INSERTs took %.2f s of its CPU, views included, and at most %.0f MiB of memory each; %d merges read %d rows (%.1f× the events)\n",
				p.InsertCPU, float64(p.InsertPeakBytes)/(1<<20), p.Merges, p.MergedRows, float64(p.MergedRows)/float64(max(p.Events, 1)))
		}
		writeViewCosts(&out, p.Views, p.Events, p.ServerCPU)
	}
	if p := r.Collector; p != nil {
		fmt.Fprintf(&out, "(j) %s → ClickHouse %s server (libchdb run as a server, its own process): %d of %d events in its %s.%s table;\n"+
			"    CPU %.2f s in the Collector + %.2f s in the server, %.2f s of it after the last answer until both were idle;\n"+
			"    its configuration: the OTLP receiver, the batch processor (batches of up to %d, (c)'s most events per INSERT), the ClickHouse exporter's defaults but a 120 s timeout\n",
			p.Version, p.ServerVersion, p.StoredEvents, p.Events, collectorDatabase, collectorLogsTable,
			p.CollectorCPU, p.ServerCPU, p.Settle, p.BatchEvents)
	}
	if r.Store != nil || r.NoStore != nil {
		out.WriteString("CPU is the ingester's whole process (getrusage user+system, chDB threads included);\n" +
			"the sender is a separate process, (d). Rates are wall-clock and depend on the machine's load.\n")
	}
	if l := r.Load; l != nil {
		fmt.Fprintf(&out, "\n(e) %d events in %d Writes, stored %d (%d calls); the simulator ran alongside on its own thread (%.1f CPU-s, excluded from the store's CPU).\n",
			l.Events, l.Batches, l.Stored, l.Calls, l.GeneratorCPU)
		fmt.Fprintf(&out, "(f) window [%s, %s), clock fixed there (simulated %s to %s, last event %s);\n"+
			"    p50/p95 by nearest rank over the measured runs, the rollup runs first, then the raw ones.\n",
			l.From.Format(time.RFC3339), l.To.Format(time.RFC3339), l.Start.Format(time.RFC3339), l.End.Format(time.RFC3339), l.LastEvent.Format(time.RFC3339))
	}
	if len(r.Reports) > 0 {
		tw := newTabWriter(&out)
		fmt.Fprintln(tw, "report\tserved from\tanswer rows\tp50\tp95\tCPU p50\trows read\tMiB read\traw p50\traw p95\traw CPU p50\traw rows read\trollup = raw")
		for _, t := range r.Reports {
			l := t.Latency
			var raw [4]string
			eq := ""
			if x := t.Raw; x != nil {
				raw = [4]string{fmt.Sprintf("%.1f ms", x.P50Ms), fmt.Sprintf("%.1f ms", x.P95Ms), fmt.Sprintf("%.1f ms", x.CPUP50Ms), fmt.Sprint(x.Read.Rows)}
			}
			if t.Equal != nil {
				eq = map[bool]string{true: "equal", false: "DIFFERENT"}[*t.Equal]
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f ms\t%.1f ms\t%.1f ms\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\n",
				t.Name, t.Source, l.Rows, l.P50Ms, l.P95Ms, l.CPUP50Ms, l.Read.Rows, float64(l.Read.Compressed)/(1<<20),
				raw[0], raw[1], raw[2], raw[3], eq)
		}
		_ = tw.Flush()
		out.WriteString("CPU is the process's (chDB threads and the Go decoding of the answer included); rows read and MiB read\n" +
			"(compressed) are one more run's, from system.events. Wall times depend on the machine's load.\n")
	}
	if len(r.HTTPReports) > 0 {
		tw := newTabWriter(&out)
		fmt.Fprintln(tw, "\nreport over HTTP\tpath\tanswer bytes\tas loaded p50\tp95\tCPU p50\toptimised p50\tp95\tCPU p50")
		cells := func(l *Latency) string {
			if l == nil {
				return "\t\t"
			}
			return fmt.Sprintf("%.1f ms\t%.1f ms\t%.1f ms", l.P50Ms, l.P95Ms, l.CPUP50Ms)
		}
		for _, t := range r.HTTPReports {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", t.Name, t.Path, t.Bytes, cells(t.AsLoaded), cells(t.Optimized))
		}
		_ = tw.Flush()
		settle := 0.0
		if r.Load != nil {
			settle = r.Load.AsLoadedSettle
		}
		fmt.Fprintf(&out, "Over HTTP: the API (its default configuration) on loopback, the client reading and decoding the whole JSON answer;\n"+
			"as loaded: after the load and %.1f s of background merges, before OPTIMIZE FINAL. CPU is the process's (server and client).\n", settle)
	}
	if r.Storage != nil {
		out.WriteString(r.Storage.text())
	}
	r.consoleNote(&out)
	if o := r.Overload; o != nil {
		a := o.Answers
		fmt.Fprintf(&out, "\n(h) %d streams flooded for %.1f s (of %.0f s%s), honouring no retry hint, into MaxPendingEvents %d, BatchMaxEvents %d, spool %.1f MiB (peak %.1f MiB):\n",
			o.Streams, o.Wall, o.Duration, map[bool]string{true: "; every request accepted early", false: ""}[a.RanOut],
			o.MaxPendingEvents, o.BatchMaxEvents, float64(o.SpoolMaxBytes)/(1<<20), float64(o.SpoolPeakBytes)/(1<<20))
		fmt.Fprintf(&out, "    %d requests: %d OK (200), %d UNAVAILABLE (503; %d with RetryInfo), %d RESOURCE_EXHAUSTED (429), other %v;\n",
			a.Requests, a.OK, a.Unavailable, a.UnavailableRetry, a.Exhausted, a.Other)
		fmt.Fprintf(&out, "    ingester refused %d overloaded, %d spool full, %d store retryable; %d events spooled;\n",
			o.Refused.Overloaded, o.Refused.SpoolFull, o.Refused.StoreRetryable, o.Spooled)
		fmt.Fprintf(&out, "    %d events offered, %d accepted, %d stored after a %.2f s drain; RSS %.0f MiB before, peak %.0f MiB (%s).\n",
			a.OfferedEvents, a.AcceptedEvents, o.Stored, o.Drain, float64(o.RSSBefore)/(1<<20), float64(o.PeakRSS)/(1<<20),
			map[bool]string{true: "VmHWM reset before the flood", false: "VmHWM since the process started"}[o.PeakReset])
	}
	return out.String()
}

// newTabWriter returns the tab writer of every table printed.
func newTabWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

func formatValue(v float64, unit string) string {
	switch {
	case unit == "events/s", unit == "cycles":
		return fmt.Sprintf("%.0f %s", v, unit)
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	default:
		return fmt.Sprintf("%.2f %s", v, unit)
	}
}

// writeJSON writes the report to path, creating its directory.
func (r *Report) writeJSON(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cannot create results directory: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode results: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("cannot write results: %w", err)
	}
	return nil
}
