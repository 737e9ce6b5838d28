package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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
	// Stored is the count of events in the store after run (c).
	Stored int64 `json:"stored"`
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
}

// ReportConfig is the part of Config that shapes the figures.
type ReportConfig struct {
	Events      int    `json:"events"`
	Batch       int    `json:"batch"`
	Streams     int    `json:"streams"`
	IngestBatch int    `json:"ingest_batch_events"`
	Seed        uint64 `json:"seed"`
}

// Phase is one measured run.
type Phase struct {
	Events int `json:"events"`
	// CPU is the process's user + system seconds during the run.
	CPU float64 `json:"cpu_s"`
	// Wall is the seconds from the first request to the last answer.
	Wall float64 `json:"wall_s"`
	// Settle is the seconds the store run kept measuring CPU after the last
	// answer, until the process was idle (background merges).
	Settle float64 `json:"settle_s,omitempty"`
	// Requests is the export requests the ingester received.
	Requests uint64 `json:"requests,omitempty"`
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

func phaseOf(u usage, events int, cl *clientResult) *Phase {
	p := &Phase{Events: events, CPU: u.CPU.Seconds(), Wall: u.Wall.Seconds()}
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
		Config: ReportConfig{
			Events: cfg.Events, Batch: cfg.Batch, Streams: cfg.Streams,
			IngestBatch: cfg.IngestBatch, Seed: cfg.Seed,
		},
	}
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
	add := func(f Figure) { r.Figures = append(r.Figures, f) }
	ratio := func(f Figure, baseID string, base float64) Figure {
		f.Baseline, f.BaselineValue = baseID, base
		if base > 0 {
			f.Ratio = f.Value / base
		}
		return f
	}
	met := func(ok bool) *bool { return &ok }

	b := r.Baseline
	if b == nil {
		return
	}
	const (
		baseCPU  = "pdata.cpu_us_per_event"
		baseRate = "pdata.events_per_s"
	)
	add(Figure{ID: baseCPU, Label: "(a) pdata decode, CPU", Value: b.CPUPerEvent(), Unit: "µs/event"})
	add(Figure{ID: baseRate, Label: "(a) pdata decode, rate", Value: b.EventsPerSecond(), Unit: "events/s"})
	if p := r.NoStore; p != nil {
		f := ratio(Figure{ID: "ingest_no_store.cpu_us_per_event", Label: "(b) ingest, no store, CPU", Value: p.CPUPerEvent(), Unit: "µs/event"}, baseCPU, b.CPUPerEvent())
		f.Target, f.Met = fmt.Sprintf("≤ %.0f× baseline", targetIngestRatio), met(f.Ratio <= targetIngestRatio)
		add(f)
		add(ratio(Figure{ID: "ingest_no_store.events_per_s", Label: "(b) ingest, no store, rate", Value: p.EventsPerSecond(), Unit: "events/s"}, baseRate, b.EventsPerSecond()))
	}
	if p := r.Store; p != nil {
		f := ratio(Figure{ID: "ingest_store.cpu_us_per_event", Label: "(c) ingest → embedded store, CPU", Value: p.CPUPerEvent(), Unit: "µs/event"}, baseCPU, b.CPUPerEvent())
		f.Target, f.Met = fmt.Sprintf("≤ %.0f µs/event", targetStoreCPUUsEv), met(f.Value <= targetStoreCPUUsEv)
		add(f)
		add(ratio(Figure{ID: "ingest_store.events_per_s", Label: "(c) ingest → embedded store, rate", Value: p.EventsPerSecond(), Unit: "events/s"}, baseRate, b.EventsPerSecond()))
	}
	if p := r.NoStore; p != nil {
		add(ratio(Figure{ID: "client_no_store.cpu_us_per_event", Label: "(d) sender during (b), CPU", Value: p.ClientCPUPerEvent(), Unit: "µs/event"}, "ingest_no_store.cpu_us_per_event", p.CPUPerEvent()))
	}
	if p := r.Store; p != nil {
		add(ratio(Figure{ID: "client_store.cpu_us_per_event", Label: "(d) sender during (c), CPU", Value: p.ClientCPUPerEvent(), Unit: "µs/event"}, "ingest_store.cpu_us_per_event", p.CPUPerEvent()))
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
	fmt.Fprintf(&b, "\nrun: %d events, %d records per request, %d streams, ingester BatchMaxEvents %d, seed %d\n",
		c.Events, c.Batch, c.Streams, c.IngestBatch, c.Seed)
	return b.String()
}

// table prints the figures, then how they were measured.
func (r *Report) table() string {
	var out strings.Builder
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
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
	out.WriteString("CPU is the ingester's whole process (getrusage user+system, chDB threads included);\n" +
		"the sender is a separate process, (d). Rates are wall-clock and depend on the machine's load.\n")
	return out.String()
}

func formatValue(v float64, unit string) string {
	switch {
	case unit == "events/s":
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
