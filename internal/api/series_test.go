package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
)

// TestSeriesEndpoints checks the envelope of a series, its parameters'
// errors, which name the parameter, and its text formats.
func TestSeriesEndpoints(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	h := s.Handler()

	r := get(t, h, "/api/v1/reports/stale-usage/series?tool=deploy_preview&step=90m&group_by=revision_client", "")
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var body apiv1.SeriesBody[apiv1.StaleUsagePoint]
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	// The window starts before the minutely tier's days: whole hours.
	if body.Report != "stale-usage" || body.StepSeconds != 7200 || len(body.GroupBy) != 1 || body.GroupBy[0] != "revision_client" {
		t.Errorf("envelope: report %q step %d group_by %v", body.Report, body.StepSeconds, body.GroupBy)
	}
	var calls uint64
	for _, p := range body.Rows {
		if p.Tool != "" {
			t.Errorf("a point names the tool, not grouped by: %+v", p)
		}
		calls += p.Calls
	}
	// deploy_preview: 42 calls 1→2, 107 2→2 (mixed-revision ones
	// included) and goose's 5 that did not say their revision.
	if calls != 154 {
		t.Errorf("deploy_preview calls = %d, want 154", calls)
	}

	for _, tc := range []struct{ target, param string }{
		{"/api/v1/reports/stale-usage/series?step=-1h", "step"},
		{"/api/v1/reports/stale-usage/series?step=soon", "step"},
		{"/api/v1/reports/stale-usage/series?group_by=kind", ""},
		{"/api/v1/reports/stale-usage/series?step=1m&from=-1h&to=%2B30d", ""},
		{"/api/v1/reports/stale-usage/series?limit=3", "limit"},
	} {
		r := get(t, h, tc.target, "")
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), `"parameter":"`+tc.param+`"`) && tc.param != "" {
			t.Errorf("GET %s: %d %s, want 400 naming %q", tc.target, r.status, r.body, tc.param)
		}
	}
	if r := get(t, h, "/api/v1/reports/no-such/series", ""); r.status != http.StatusNotFound {
		t.Errorf("unknown report's series: %d %s", r.status, r.body)
	}

	r = get(t, h, "/api/v1/reports/violations/series?step=1d&group_by=kind&format=csv", "")
	lines := strings.Split(strings.TrimSpace(string(r.body)), "\n")
	if r.status != http.StatusOK || strings.TrimSpace(lines[0]) != "time,kind,tool,client,service,outcome,violations" || len(lines) != 1+4*8 {
		t.Errorf("CSV: %d, %d lines, header %q", r.status, len(lines), lines[0])
	}
}
