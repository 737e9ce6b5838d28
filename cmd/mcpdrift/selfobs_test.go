package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// checkSelfObservability checks that serve's API listener is ready and
// serves the ingester's and the API's metrics, the build information and
// the requests of both HTTP listeners.
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
		"\nmcpdrift_build_info{goversion=\"go",
		"\n" + `mcpdrift_http_request_duration_seconds_count{code="200",listener="api",method="GET",route="/readyz"} `,
		"\n" + `mcpdrift_http_request_duration_seconds_count{code="200",listener="otlp_http",method="POST",route="/v1/logs"} `,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics: %d, no %q", resp.StatusCode, strings.TrimSpace(want))
		}
	}
	if strings.Contains(string(body), "\nmcpdrift_ingest_events_stored_total 0\n") {
		t.Error("/metrics: no event stored")
	}
}

// waitStored waits until serve's metrics say that every log record it
// accepted is stored: exports are acknowledged once spooled, and the store
// is written up to -ingest.insert.max-delay later.
func waitStored(t *testing.T, api string) {
	t.Helper()
	metric := func(body, name string) string {
		for line := range strings.Lines(body) {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	var accepted, stored string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + api + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		accepted = metric(string(body), `mcpdrift_ingest_records_total{result="accepted",signal="logs"}`)
		stored = metric(string(body), "mcpdrift_ingest_events_stored_total")
		if accepted != "" && accepted == stored {
			return
		}
	}
	t.Fatalf("%s of %s accepted events stored after 30 s", stored, accepted)
}
