package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// firstLineDiff returns the first line (from 1) where a and b differ,
// and that line of each; 0 when they are equal.
func firstLineDiff(a, b string) (int, string, string) {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || (i >= len(al)) != (i >= len(bl)) {
			return i + 1, x, y
		}
	}
	return 0, "", ""
}

// TestRenderDoc renders a document with both kinds of section from a
// results file written by writeJSON: what lies between the markers is
// replaced (a stale table, an edited figure), what lies outside is kept,
// rendering twice changes nothing, and the malformed cases fail.
func TestRenderDoc(t *testing.T) {
	root := t.TempDir()
	r := &Report{
		Time:    time.Date(2026, 12, 4, 23, 40, 0, 0, time.UTC),
		Command: "go run ./bench -suite ingest -events 1000 -out bench/results/x.json",
		Commit:  "0123456789abcdef0123456789abcdef01234567",
		Machine: Machine{NumCPU: 2, GoVersion: "go1.26.8"},
		Config:  ReportConfig{Suites: []string{SuiteIngest}, Events: 1000, Batch: 500, Streams: 4, Redaction: "default rules"},
		Figures: []Figure{
			{ID: "pdata.cpu_us_per_event", Suite: SuiteIngest, Label: "(a) pdata decode, CPU", Value: 8, Unit: "µs/event"},
			{ID: "ingest_no_store.cpu_us_per_event", Suite: SuiteIngest, Label: "(b) ingest, no store, CPU", Value: 4, Unit: "µs/event", Baseline: "pdata.cpu_us_per_event", BaselineValue: 8, Ratio: 0.5},
			{ID: "floor_raw.cpu_us_per_event", Suite: SuiteIngest, Label: "(c) floor: raw", Value: 2, Unit: "µs/event"},
			{ID: "floor_views.cpu_us_per_event", Suite: SuiteIngest, Label: "(c) floor: views", Value: 5, Unit: "µs/event", Baseline: "floor_raw.cpu_us_per_event", BaselineValue: 2, Ratio: 2.5},
			{ID: "ingest_store.cpu_us_per_event", Suite: SuiteIngest, Label: "(c) ingest → embedded store, CPU", Value: 15, Unit: "µs/event", Baseline: "floor_views.cpu_us_per_event", BaselineValue: 5, Ratio: 3},
		},
	}
	if err := r.writeJSON(filepath.Join(root, "bench", "results", "x.json")); err != nil {
		t.Fatal(err)
	}
	doc := "# Page\n\nBefore.\n\n<!-- bench:summary bench/results/x.json -->\nOn some day, serve took 9.99× the floor.\n<!-- end bench:summary -->\n\nBetween.\n\n" +
		"<!-- bench:tables bench/results/x.json -->\n| stale | table |\n<!-- end bench:tables -->\n\nAfter.\n"
	got, err := renderDoc([]byte(doc), root)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Page\n\nBefore.\n\n<!-- bench:summary bench/results/x.json -->\n" +
		"On 2026-12-04 (`go run ./bench -suite ingest -events 1000 -out bench/results/x.json`, 2 cores):\n" +
		"`serve` as shipped took 3.00× the engine's all-views floor, that floor 2.50× a raw-table insert,\n" +
		"and the ingest path without the store 0.50× a pdata decode.\n<!-- end bench:summary -->\n\nBetween.\n\n" +
		"<!-- bench:tables bench/results/x.json -->\n" + r.markdown() + "<!-- end bench:tables -->\n\nAfter.\n"
	if string(got) != want {
		line, g, w := firstLineDiff(string(got), want)
		t.Fatalf("rendered document differs at line %d:\n got: %s\nwant: %s", line, g, w)
	}
	if !strings.Contains(string(got), "at commit 0123456789ab,") {
		t.Errorf("the tables do not name the results' commit:\n%s", got)
	}
	again, err := renderDoc(got, root)
	if err != nil || string(again) != string(got) {
		t.Errorf("rendering a rendered document changed it (%v)", err)
	}

	for _, tc := range []struct{ name, doc, err string }{
		{"no closing marker", "<!-- bench:tables bench/results/x.json -->\n| t |\n", "has no <!-- end bench:tables -->"},
		{"unknown kind", "<!-- bench:prose bench/results/x.json -->\n<!-- end bench:prose -->\n", `unknown generated section "prose"`},
		{"missing results", "<!-- bench:tables bench/results/none.json -->\n<!-- end bench:tables -->\n", "cannot read the results"},
	} {
		if _, err := renderDoc([]byte(tc.doc), root); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.err)
		}
	}

	// A summary needs the ingest suite's ratios.
	r.Figures = r.Figures[:1]
	if err := r.writeJSON(filepath.Join(root, "bench", "results", "x.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := renderDoc([]byte(doc), root); err == nil || !strings.Contains(err.Error(), "no figure ingest_store.cpu_us_per_event") {
		t.Errorf("a summary without the ingest ratios: error %v", err)
	}
}
