package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the goldens under testdata/")

// TestMarkdownGolden writes the Markdown of a report with figures of every
// kind — a ratio to a figure of the same run, a target met and one
// missed, a figure of each suite, a pipe in a label — and compares it with
// testdata/markdown.golden (-update rewrites it).
func TestMarkdownGolden(t *testing.T) {
	r := &Report{
		Time:    time.Date(2026, 12, 4, 21, 5, 0, 0, time.UTC),
		Command: "go run ./bench -suite ingest,storage,collector -events 200000 -markdown /tmp/bench.md",
		Commit:  "bb485a4c2f0e5d2f4a6b1c3d5e7f9a0b1c2d3e4f-dirty",
		Machine: Machine{NumCPU: 2, GOMAXPROCS: 2, GoVersion: "go1.26.8", OS: "linux", Arch: "amd64",
			CPUModel: "Example CPU @ 2.00GHz", LoadAvg: "1.50 1.20 0.90"},
		Config: ReportConfig{Suites: []string{SuiteIngest, SuiteStorage, SuiteCollector}, Events: 200000, Batch: 500, Streams: 4,
			IngestBatch: 2000, IngestAck: "spooled", InsertMax: 200000, Redaction: "default rules", Seed: 1,
			ReportEvents: 1000000, ReportBatch: 100000, ReportRuns: 7, ReportWarmups: 2, ReportSpanH: 168,
			ReportTools: 300, ReportSessions: 5000, ReportClients: 60, ReportServers: 12},
		Requests: 400,
		Baseline: &Phase{Events: 200000, CPU: 1.4, Wall: 0.8},
		NoStore:  &Phase{Events: 200000, CPU: 0.6, Wall: 0.5, ClientCPU: 0.3},
		Storage:  &StorageResult{Tables: []TableStorage{{Table: "events", Rows: 1000000, BytesPerEvent: 27.8}, {Table: "calls_1h", Rows: 36001, BytesPerEvent: 3.4}}},
		Collector: &CollectorPhase{Phase: Phase{Events: 200000, CPU: 5.2, Wall: 4, Stored: 5}, CollectorCPU: 3.9, ServerCPU: 1.3,
			StoredEvents: 200000, Version: "otelcol-mcpdrift-bench version 0.165.0", ServerVersion: "26.7.3", BatchEvents: 200000,
			Serve: &Phase{Events: 200000, CPU: 2.0, Wall: 3, Stored: 3.5}},
	}
	r.finish()
	// A label with a pipe, which must not end its cell.
	r.Figures = append(r.Figures, Figure{ID: "storage.x", Suite: SuiteStorage, Label: "(g) a | b", Value: 1, Unit: "B/event"})
	got := r.markdown()
	golden := filepath.Join("testdata", "markdown.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./bench -run TestMarkdownGolden -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("Markdown differs from %s (-update rewrites it):\n%s", golden, got)
	}

	// writeMarkdown writes the same, creating the directory.
	path := filepath.Join(t.TempDir(), "out", "bench.md")
	if err := r.writeMarkdown(path); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != got {
		t.Errorf("writeMarkdown wrote %q (%v), want the golden", b, err)
	}
}
