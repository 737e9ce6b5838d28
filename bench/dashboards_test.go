package main

import (
	"strings"
	"testing"
	"time"
)

// TestPanelRequests checks that every panel of the provisioned dashboards
// becomes one request the API serves, and the time series ones the series
// endpoints.
func TestPanelRequests(t *testing.T) {
	to := time.Date(2099, 3, 16, 12, 0, 0, 0, time.UTC)
	reqs, dashboards, err := panelRequests(to.Add(-7*24*time.Hour), to)
	if err != nil {
		t.Fatal(err)
	}
	if dashboards != 6 || len(reqs) < dashboards {
		t.Fatalf("%d dashboards, %d panel requests", dashboards, len(reqs))
	}
	series := 0
	for _, r := range reqs {
		if !strings.HasPrefix(r.path, "/api/v1/") || r.params.Get("from") == "" {
			t.Errorf("%s / %s: %s?%s", r.dashboard, r.panel, r.path, r.params.Encode())
		}
		if strings.HasSuffix(r.path, "/series") {
			series++
			if r.params.Get("step") == "" {
				t.Errorf("%s / %s: a series without a step", r.dashboard, r.panel)
			}
		}
	}
	if series == 0 {
		t.Error("no panel reads a series")
	}
}
