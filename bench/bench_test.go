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

// TestSuiteSmoke runs the whole suite on a few events, so that `make test`
// and CI keep it working: every run must succeed, every event sent must be
// stored, every figure must be positive and the JSON must be written. It
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
	cfg.TempDir = t.TempDir()
	cfg.Out = filepath.Join(t.TempDir(), "results", "latest.json")
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	var out strings.Builder
	rep, err := Run(context.Background(), cfg, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stored != events {
		t.Errorf("stored %d events, want %d", rep.Stored, events)
	}
	wantFigures := []string{
		"pdata.cpu_us_per_event", "pdata.events_per_s",
		"ingest_no_store.cpu_us_per_event", "ingest_no_store.events_per_s",
		"ingest_store.cpu_us_per_event", "ingest_store.events_per_s",
		"client_no_store.cpu_us_per_event", "client_store.cpu_us_per_event",
	}
	got := map[string]Figure{}
	for _, f := range rep.Figures {
		got[f.ID] = f
		if !(f.Value > 0) {
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

	data, err := os.ReadFile(cfg.Out)
	if err != nil {
		t.Fatalf("results not written: %v", err)
	}
	var written Report
	if err := json.Unmarshal(data, &written); err != nil {
		t.Fatalf("results are not JSON: %v", err)
	}
	if written.Stored != events || len(written.Figures) != len(rep.Figures) || written.Error != "" {
		t.Errorf("written results differ: stored %d, %d figures, error %q", written.Stored, len(written.Figures), written.Error)
	}
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
}
