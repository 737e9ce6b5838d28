package selfmetrics_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/internal/selfmetrics"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a store.Writer that keeps the number of events written.
type recorder struct {
	mu     sync.Mutex
	events int
}

func (r *recorder) Write(_ context.Context, b store.Batch) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events += len(b.Events)
	return nil
}

// logs returns a request of valid call events, calls with an unknown
// outcome, and plain logs.
func logs(valid, unknown, plain int) []byte { return logsNamed(valid, unknown, plain, false) }

// logsNamed is logs, its calls named as earlier releases named them when
// legacy is set (mcp.drift.call, mcp.drift.outcome).
func logsNamed(valid, unknown, plain int, legacy bool) []byte {
	eventName, outcomeKey := otelschema.EventCall.String(), otelschema.AttrOutcome
	if legacy {
		eventName, outcomeKey = "mcp.drift.call", "mcp.drift.outcome"
	}
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	now := pcommon.NewTimestampFromTime(time.Now())
	call := func(i int, outcome string) {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(now)
		lr.SetEventName(eventName)
		a := lr.Attributes()
		a.PutStr(otelschema.AttrToolName, "get_forecast")
		a.PutStr(otelschema.AttrMethodName, "tools/call")
		a.PutStr(outcomeKey, outcome)
		a.PutStr(otelschema.AttrRequestID, fmt.Sprint(i))
		a.PutStr(otelschema.AttrSessionID, "s-1")
	}
	for i := range valid {
		call(i, "current")
	}
	for i := range unknown {
		call(valid+i, "sideways")
	}
	for range plain {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(now)
		lr.Body().SetStr("GET /healthz 200")
	}
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalJSON()
	if err != nil {
		panic(err)
	}
	return b
}

func post(t *testing.T, url, contentType string, body []byte) int {
	t.Helper()
	resp, err := http.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestIngestMetrics sends OTLP requests, accepted and refused, to a real
// ingester on loopback and scrapes /metrics over a real server.
func TestIngestMetrics(t *testing.T) {
	cfg := ingest.DefaultConfig()
	cfg.GRPCListen, cfg.HTTPListen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.BatchMaxDelay = 5 * time.Millisecond
	cfg.Spool.Dir = t.TempDir()
	cfg.Resolve()
	w := &recorder{}
	requests := selfmetrics.NewHTTPRequests()
	in, err := ingest.New(cfg, w, nil, ingest.WithRequestObserver(requests.Listener("otlp_http")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := in.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	reg, err := selfmetrics.NewRegistry(selfmetrics.NewIngestCollector(in), requests, selfmetrics.NewBuildInfo("v1.2.3"))
	if err != nil {
		t.Fatal(err)
	}
	ms := httptest.NewServer(selfmetrics.Handler(reg))
	defer ms.Close()

	base := "http://" + in.HTTPAddr().String()
	steps := []struct {
		path, ct string
		body     []byte
		status   int
	}{
		{"/v1/logs", "application/json", logs(3, 1, 2), 200},
		{"/v1/logs", "application/json", logsNamed(2, 0, 0, true), 200},
		{"/v1/logs", "application/json", []byte(`{"resourceLogs":[`), 400},
		{"/v1/logs", "application/x-protobuf", []byte{0xff, 0xff, 0xff}, 400},
		{"/v1/logs", "text/plain", []byte("hello"), 415},
		{"/v1/metrics", "application/json", []byte("{}"), 404},
		{"/v1/logs/etc/passwd", "application/json", []byte("{}"), 404},
	}
	for i, s := range steps {
		if got := post(t, base+s.path, s.ct, s.body); got != s.status {
			t.Fatalf("step %d: status %d, want %d", i, got, s.status)
		}
	}
	td := ptrace.NewTraces()
	td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("GET /")
	tb, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
	if got := post(t, base+"/v1/traces", "application/json", tb); got != 200 {
		t.Fatalf("traces: status %d", got)
	}

	resp, err := http.Get(ms.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	// The paths no route serves share one series: raw paths never become
	// labels.
	for _, line := range []string{
		`mcpdrift_http_request_duration_seconds_count{code="200",listener="otlp_http",method="POST",route="/v1/logs"} 2`,
		`mcpdrift_http_request_duration_seconds_count{code="400",listener="otlp_http",method="POST",route="/v1/logs"} 2`,
		`mcpdrift_http_request_duration_seconds_count{code="415",listener="otlp_http",method="POST",route="/v1/logs"} 1`,
		`mcpdrift_http_request_duration_seconds_count{code="200",listener="otlp_http",method="POST",route="/v1/traces"} 1`,
		`mcpdrift_http_request_duration_seconds_count{code="404",listener="otlp_http",method="POST",route="unmatched"} 2`,
		`mcpdrift_http_request_duration_seconds_bucket{code="200",listener="otlp_http",method="POST",route="/v1/traces",le="+Inf"} 1`,
		`mcpdrift_build_info{goversion="` + runtime.Version() + `",revision="unknown",version="v1.2.3"} 1`,
		`mcpdrift_spool_limit_bytes ` + strconv.FormatFloat(float64(cfg.Spool.MaxBytes), 'g', -1, 64),
		`mcpdrift_spool_fullest_bytes 0`,
	} {
		if !hasLine(string(text), line) {
			t.Errorf("no line %q in the scrape", line)
		}
	}
	if strings.Contains(string(text), "passwd") {
		t.Error("a raw path is a label")
	}
	for _, line := range []string{
		`mcpdrift_ingest_requests_total 6`,
		`mcpdrift_ingest_records_total{result="accepted",signal="logs"} 5`,
		`mcpdrift_ingest_records_total{result="rejected",signal="logs"} 1`,
		`mcpdrift_ingest_records_total{result="ignored",signal="logs"} 2`,
		`mcpdrift_ingest_records_total{result="ignored",signal="spans"} 1`,
		`mcpdrift_ingest_records_total{result="accepted",signal="spans"} 0`,
		`mcpdrift_ingest_records_rejected_total{reason="unknown_value",signal="logs"} 1`,
		`mcpdrift_ingest_records_rejected_total{reason="unclassified",signal="logs"} 0`,
		`mcpdrift_ingest_legacy_names_total{name="mcp.drift.call"} 2`,
		`mcpdrift_ingest_legacy_names_total{name="mcp.drift.outcome"} 2`,
		`mcpdrift_ingest_requests_refused_total{reason="malformed"} 2`,
		`mcpdrift_ingest_requests_refused_total{reason="media_type"} 1`,
		`mcpdrift_ingest_requests_refused_total{reason="too_large"} 0`,
		`mcpdrift_ingest_batches_total 2`,
		`mcpdrift_ingest_batch_size_events_bucket{le="10"} 2`,
		`mcpdrift_ingest_batch_size_events_sum 5`,
		`mcpdrift_ingest_batch_size_events_count 2`,
		`mcpdrift_store_insert_size_events_sum 5`,
		`mcpdrift_store_insert_size_events_count 2`,
		`mcpdrift_store_insert_seconds_count 2`,
		`mcpdrift_ingest_events_stored_total 5`,
		`mcpdrift_store_write_errors_total 0`,
		`mcpdrift_ingest_dedup_hits_total 0`,
		`mcpdrift_spool_records 0`,
		`mcpdrift_spool_quarantined_total 0`,
		`mcpdrift_spool_replayed_from_memory_total 0`,
		`mcpdrift_auth_failures_total{listener="ingest"} 0`,
		`mcpdrift_redactions_total 0`,
		`# TYPE go_goroutines gauge`,
		`# TYPE process_cpu_seconds_total counter`,
	} {
		if !hasLine(string(text), line) {
			t.Errorf("no line %q in the scrape", line)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", grepPrefix(string(text), "mcpdrift_"))
	}
	if w.events != 5 {
		t.Errorf("stored %d events, want 5", w.events)
	}
}

// hasLine reports whether text has line, or for a comment a line starting
// with it.
func hasLine(text, line string) bool {
	for l := range strings.SplitSeq(text, "\n") {
		if l == line || (strings.HasPrefix(line, "#") && strings.HasPrefix(l, line)) {
			return true
		}
	}
	return false
}

func grepPrefix(text, prefix string) string {
	var b strings.Builder
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// querier answers the migrations query with fixed versions, or an error.
type querier struct {
	versions []int
	err      error
}

func (q querier) Query(_ context.Context, _ store.Query, _ store.Params, dest any) error {
	if q.err != nil {
		return q.err
	}
	rows := dest.(*[]struct {
		Version int `json:"version"`
	})
	for _, v := range q.versions {
		*rows = append(*rows, struct {
			Version int `json:"version"`
		}{v})
	}
	return nil
}

func TestMigrationsApplied(t *testing.T) {
	opts := schema.DefaultOptions()
	all, err := schema.Migrations(opts)
	if err != nil {
		t.Fatal(err)
	}
	var versions []int
	for _, m := range all {
		versions = append(versions, m.Version)
	}
	ctx := context.Background()
	if err := selfmetrics.MigrationsApplied(querier{versions: versions}, opts)(ctx); err != nil {
		t.Errorf("all applied: %v", err)
	}
	err = selfmetrics.MigrationsApplied(querier{versions: versions[:len(versions)-1]}, opts)(ctx)
	want := fmt.Sprintf("versions [%d]", versions[len(versions)-1])
	if !errors.Is(err, selfmetrics.ErrMigrationsPending) || !strings.Contains(err.Error(), want) {
		t.Errorf("last missing: %v, want %q", err, want)
	}
	err = selfmetrics.MigrationsApplied(querier{err: errors.New("table does not exist")}, opts)(ctx)
	if !errors.Is(err, selfmetrics.ErrMigrationsPending) {
		t.Errorf("no table: %v", err)
	}
}

// authCounter is an AuthSource.
type authCounter uint64

func (a authCounter) AuthFailures() uint64 { return uint64(a) }

func TestBothAuthCollectors(t *testing.T) {
	in, err := ingest.New(ingest.DefaultConfig(), &recorder{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Shutdown(context.Background())
	reg, err := selfmetrics.NewRegistry(selfmetrics.NewIngestCollector(in), selfmetrics.NewAPICollector(authCounter(3)))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	selfmetrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range []string{`mcpdrift_auth_failures_total{listener="api"} 3`, `mcpdrift_auth_failures_total{listener="ingest"} 0`} {
		if !hasLine(rec.Body.String(), line) {
			t.Errorf("no line %q", line)
		}
	}
}
