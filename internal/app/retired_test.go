package app_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// adapterDeclared is the declaration of adapter id for tool search, its
// window ending at end.
func adapterDeclared(id string, at, end time.Time) otelschema.Event {
	return otelschema.Event{
		Name: otelschema.EventAdapter, Time: at.UnixNano(), Service: "docs", ServiceVersion: "d-3.0", Environment: "prod",
		Tool: "search", AdapterID: id, AdapterRevisionFrom: "r1", AdapterRevisionTo: "r2",
		ChangeClass: otelschema.ChangeClassBoundedMigration, AdapterWindowEnd: end.Unix(),
	}
}

// TestAdapterUsedAfterRetirement sends serve, over OTLP/HTTP, the
// declarations of an adapter whose window has ended and of one whose
// window has not, and calls through both and through an undeclared one:
// mcpdrift_adapter_calls_after_window_total counts the calls through the
// first only. After a restart on the same data directory, the window is
// restored from the store: calls through the retired adapter are counted
// again without a new declaration; a later declaration that extends the
// window stops the count.
func TestAdapterUsedAfterRetirement(t *testing.T) {
	requireChDB(t)
	dir := t.TempDir()
	now := time.Now()
	metric := func(api string) string {
		t.Helper()
		for line := range strings.Lines(scrape(t, api)) {
			if v, ok := strings.CutPrefix(line, "mcpdrift_adapter_calls_after_window_total "); ok {
				return strings.TrimSpace(v)
			}
		}
		t.Fatal("/metrics has no mcpdrift_adapter_calls_after_window_total")
		return ""
	}

	p := startServe(t, dir, "-ingest.ack", "stored")
	exportCalls(t, p, []otelschema.Event{
		adapterDeclared("search-r1-r2", now.Add(-48*time.Hour), now.Add(-time.Hour)),
		adapterDeclared("search-r1-r3", now.Add(-48*time.Hour), now.Add(24*time.Hour)),
	})
	if got := metric(p.API().Addr()); got != "0" {
		t.Fatalf("after the declarations: %s calls after their window, want 0", got)
	}
	exportCalls(t, p, append(append(calls(3, "search-r1-r2"), calls(2, "search-r1-r3")...), calls(2, "undeclared")...))
	if got := metric(p.API().Addr()); got != "3" {
		t.Errorf("after 3 calls through the retired adapter, 2 through one in its window and 2 through an undeclared one: %s, want 3", got)
	}
	if err := p.Shutdown(); err != nil {
		t.Fatal(err)
	}

	p = startServe(t, dir, "-ingest.ack", "stored")
	exportCalls(t, p, calls(2, "search-r1-r2"))
	if got := metric(p.API().Addr()); got != "2" {
		t.Errorf("after a restart and 2 calls through the retired adapter: %s, want 2 (the window restored from the store)", got)
	}
	exportCalls(t, p, []otelschema.Event{adapterDeclared("search-r1-r2", now.Add(-time.Minute), now.Add(24*time.Hour))})
	exportCalls(t, p, calls(4, "search-r1-r2"))
	if got := metric(p.API().Addr()); got != "2" {
		t.Errorf("after the window was extended and 4 calls: %s, want still 2", got)
	}
}
