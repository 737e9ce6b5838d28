package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// checkSelfObservability checks that serve's API listener is ready and
// serves the ingester's and the API's metrics.
func checkSelfObservability(t *testing.T, api string) {
	t.Helper()
	resp, err := http.Get("http://" + api + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get("http://" + api + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		"\nmcpdrift_ingest_events_stored_total ",
		"\nmcpdrift_spool_bytes ",
		"\nmcpdrift_store_insert_seconds_count ",
		"\n" + `mcpdrift_auth_failures_total{listener="api"} 0`,
		"\n" + `mcpdrift_auth_failures_total{listener="ingest"} 0`,
		"\ngo_goroutines ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics: %d, no %q", resp.StatusCode, strings.TrimSpace(want))
		}
	}
	if strings.Contains(string(body), "\nmcpdrift_ingest_events_stored_total 0\n") {
		t.Error("/metrics: no event stored")
	}
}
