package ingest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/mcpdrift/mcpdrift/internal/redact"
	"github.com/mcpdrift/mcpdrift/internal/selfmetrics"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// hostileLimit is the request limit of the hostile corpus's ingester.
const hostileLimit = 8 << 20

// countingWriter is a store.Writer that counts the events written.
type countingWriter struct {
	mu     sync.Mutex
	events int
}

func (w *countingWriter) Write(_ context.Context, b store.Batch) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events += len(b.Events)
	return nil
}

func (w *countingWriter) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.events
}

// record describes one log record of a hostile request.
type record struct {
	event     string // event name; "" for a plain log
	tool      string
	outcome   string
	args      string // mcp.drift.args.raw, when set
	time      time.Time
	extraAttr int // attributes added beyond the event's own
}

// call returns a valid call event, to be altered.
func call() record {
	return record{event: otelschema.EventCall.String(), tool: "get_forecast", outcome: "current", time: time.Now()}
}

// logsBody encodes records as an OTLP/HTTP protobuf logs request.
func logsBody(recs ...record) []byte {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(otelschema.AttrServiceName, "hostile-mcp")
	sl := rl.ScopeLogs().AppendEmpty()
	lrs := sl.LogRecords()
	lrs.EnsureCapacity(len(recs))
	for i, r := range recs {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(r.time))
		if r.event == "" {
			lr.Body().SetStr("plain")
			continue
		}
		lr.SetEventName(r.event)
		a := lr.Attributes()
		if r.tool != "" {
			a.PutStr(otelschema.AttrToolName, r.tool)
			a.PutStr(otelschema.AttrMethodName, "tools/call")
			a.PutStr(otelschema.AttrOutcome, r.outcome)
			a.PutStr(otelschema.AttrRequestID, strconv.Itoa(i))
			a.PutStr(otelschema.AttrSessionID, "s-1")
		}
		if r.args != "" {
			a.PutStr(otelschema.AttrArgsRaw, r.args)
		}
		for j := range r.extraAttr {
			a.PutStr("x.attr."+strconv.Itoa(j), "v")
		}
	}
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		panic(err)
	}
	return b
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

func repeat(n int, f func(int) record) []record {
	out := make([]record, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// hostileCase is one request of the corpus and its documented answer.
type hostileCase struct {
	name      string
	method    string // POST when empty
	ct, ce    string // Content-Type ("-" for none), Content-Encoding
	body      []byte
	chunked   bool // send without Content-Length
	status    int
	rejected  int64 // partial success's rejected count, on a 200
	refused   string
	accepted  uint64
	reasons   map[string]uint64 // record rejections by reason
	ignored   uint64
	redaction bool // at least one value redacted
}

func hostileCorpus() []hostileCase {
	proto := "application/x-protobuf"
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	past, future := call(), call()
	past.time = time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC)
	future.time = time.Now().Add(100 * 365 * 24 * time.Hour)
	unknownEnum := call()
	unknownEnum.outcome = "sideways"
	hugeValue := call()
	hugeValue.tool = strings.Repeat("t", 2<<20)
	hugeArgs := call()
	hugeArgs.args = `{"q":"` + strings.Repeat("a", 3<<20) + `"}`
	manyAttrs := call()
	manyAttrs.extraAttr = 5000
	nested := call()
	nested.args = deep
	secret := call()
	secret.args = `{"password":"hunter2","q":"x"}`
	badUTF8 := call()
	badUTF8.tool = "get_\xff\xfeforecast"
	bomb := gzipped(make([]byte, 16<<20))
	over := bytes.Repeat([]byte{0}, hostileLimit+1)
	return []hostileCase{
		{name: "malformed protobuf", ct: proto, body: []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, status: 400, refused: "malformed"},
		{name: "truncated protobuf", ct: proto, body: logsBody(call())[:20], status: 400, refused: "malformed"},
		{name: "malformed JSON", ct: "application/json", body: []byte(`{"resourceLogs":[{`), status: 400, refused: "malformed"},
		{name: "JSON of the wrong shape", ct: "application/json", body: []byte(`{"resourceLogs":"nope"}`), status: 400, refused: "malformed"},
		{name: "protobuf sent as JSON", ct: "application/json", body: logsBody(call()), status: 400, refused: "malformed"},
		{name: "wrong content type", ct: "text/plain", body: logsBody(call()), status: 415, refused: "media_type"},
		{name: "missing content type", ct: "-", body: logsBody(call()), status: 415, refused: "media_type"},
		{name: "unsupported content encoding", ct: proto, ce: "br", body: logsBody(call()), status: 415, refused: "media_type"},
		{name: "corrupt gzip", ct: proto, ce: "gzip", body: logsBody(call()), status: 400, refused: "malformed"},
		{name: "gzip bomb", ct: proto, ce: "gzip", body: bomb, status: 413, refused: "too_large"},
		{name: "body over the limit", ct: proto, body: over, status: 413, refused: "too_large"},
		{name: "chunked body over the limit", ct: proto, body: over, chunked: true, status: 413, refused: "too_large"},
		{name: "method not POST", method: http.MethodPut, ct: proto, body: logsBody(call()), status: 405, refused: "method"},
		{name: "args nested 10k deep", ct: proto, body: logsBody(nested), status: 200, accepted: 1},
		{name: "secret in args", ct: proto, body: logsBody(secret), status: 200, accepted: 1, redaction: true},
		{name: "invalid UTF-8", ct: proto, body: logsBody(badUTF8), status: 200, rejected: 1, reasons: map[string]uint64{"invalid_utf8": 1}},
		{name: "attribute value of 2 MiB", ct: proto, body: logsBody(hugeValue), status: 200, rejected: 1, reasons: map[string]uint64{"too_long": 1}},
		{name: "args of 3 MiB", ct: proto, body: logsBody(hugeArgs), status: 200, rejected: 1, reasons: map[string]uint64{"too_long": 1}},
		{name: "5000 attributes", ct: proto, body: logsBody(manyAttrs), status: 200, rejected: 1, reasons: map[string]uint64{"too_many_attributes": 1}},
		{name: "unknown event name", ct: proto, body: logsBody(record{event: "mcp.drift.bogus", time: time.Now()}, call()), status: 200, rejected: 1, accepted: 1, reasons: map[string]uint64{"unknown_event": 1}},
		{name: "unknown enum value", ct: proto, body: logsBody(unknownEnum), status: 200, rejected: 1, reasons: map[string]uint64{"unknown_value": 1}},
		{name: "timestamp in 1971", ct: proto, body: logsBody(past), status: 200, rejected: 1, reasons: map[string]uint64{"time_range": 1}},
		{name: "timestamp a century ahead", ct: proto, body: logsBody(future), status: 200, rejected: 1, reasons: map[string]uint64{"time_range": 1}},
		{name: "200k unknown events in one request", ct: proto,
			body:   logsBody(repeat(200000, func(int) record { return record{event: "mcp.drift.x", time: time.Now()} })...),
			status: 200, rejected: 200000,
			reasons: map[string]uint64{"unknown_event": 200000}},
		{name: "200k plain logs in one request", ct: proto, body: logsBody(repeat(200000, func(int) record { return record{} })...), status: 200, ignored: 200000},
		{name: "gzipped valid request", ct: proto, ce: "gzip", body: gzipped(logsBody(call(), call())), status: 200, accepted: 2},
	}
}

// TestHostileCorpus sends the corpus to a real ingester on loopback. Each
// request gets its documented answer and is counted in /metrics under its
// reason; afterwards a valid request is still stored and /healthz answers.
func TestHostileCorpus(t *testing.T) {
	cfg := ingest.DefaultConfig()
	cfg.GRPCListen, cfg.HTTPListen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.BatchMaxDelay = 5 * time.Millisecond
	cfg.MaxRequestBytes = hostileLimit
	w := &countingWriter{}
	red, err := redact.New(redact.Config{Key: []byte("hostile-test-key")})
	if err != nil {
		t.Fatal(err)
	}
	in, err := ingest.New(cfg, w, nil, ingest.WithRedactor(red))
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
	reg, err := selfmetrics.NewRegistry(selfmetrics.NewIngestCollector(in))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", selfmetrics.Handler(reg))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"status":"ok"}`) })
	health := httptest.NewServer(mux)
	defer health.Close()
	url := "http://" + in.HTTPAddr().String() + "/v1/logs"
	client := &http.Client{Timeout: 30 * time.Second}

	// want holds the expected value of every series checked, updated case
	// by case.
	want := map[string]uint64{}
	for _, r := range []string{"method", "media_type", "too_large", "malformed", "overloaded", "spool_full", "shutting_down", "store_retryable", "invalid_data", "internal", "canceled"} {
		want[`mcpdrift_ingest_requests_refused_total{reason="`+r+`"}`] = 0
	}
	for _, r := range receiver.RejectReasons() {
		want[`mcpdrift_ingest_records_rejected_total{reason="`+r+`",signal="logs"}`] = 0
	}
	for _, r := range []string{"accepted", "rejected", "ignored"} {
		want[`mcpdrift_ingest_records_total{result="`+r+`",signal="logs"}`] = 0
	}
	want["mcpdrift_ingest_requests_total"] = 0
	want["mcpdrift_ingest_events_stored_total"] = 0
	redactions := uint64(0)

	for _, tc := range hostileCorpus() {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = bytes.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // hides the length: chunked
			}
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			req, err := http.NewRequest(method, url, body)
			if err != nil {
				t.Fatal(err)
			}
			if tc.ct != "-" {
				req.Header.Set("Content-Type", tc.ct)
			}
			if tc.ce != "" {
				req.Header.Set("Content-Encoding", tc.ce)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			respBody, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tc.status, respBody)
			}
			want["mcpdrift_ingest_requests_total"]++
			if tc.refused != "" {
				want[`mcpdrift_ingest_requests_refused_total{reason="`+tc.refused+`"}`]++
			}
			if tc.status == http.StatusOK {
				er := plogotlp.NewExportResponse()
				if err := er.UnmarshalProto(respBody); err != nil {
					t.Fatalf("cannot decode the answer: %v", err)
				}
				if got := er.PartialSuccess().RejectedLogRecords(); got != tc.rejected {
					t.Errorf("partial success rejected %d, want %d (%q)", got, tc.rejected, er.PartialSuccess().ErrorMessage())
				}
				if tc.rejected > 0 && er.PartialSuccess().ErrorMessage() == "" {
					t.Error("partial success without a message")
				}
				want[`mcpdrift_ingest_records_total{result="accepted",signal="logs"}`] += tc.accepted
				want[`mcpdrift_ingest_records_total{result="rejected",signal="logs"}`] += uint64(tc.rejected)
				want[`mcpdrift_ingest_records_total{result="ignored",signal="logs"}`] += tc.ignored
				want["mcpdrift_ingest_events_stored_total"] += tc.accepted
				for r, n := range tc.reasons {
					want[`mcpdrift_ingest_records_rejected_total{reason="`+r+`",signal="logs"}`] += n
				}
			}
			got := scrape(t, health.URL+"/metrics")
			for series, v := range want {
				if g, ok := got[series]; !ok || g != float64(v) {
					t.Errorf("%s = %v (present %v), want %d", series, g, ok, v)
				}
			}
			r := got["mcpdrift_redactions_total"]
			if tc.redaction && r <= float64(redactions) {
				t.Errorf("mcpdrift_redactions_total %v, want more than %d", r, redactions)
			}
			redactions = uint64(r)
		})
	}

	// The process is unharmed: a valid request is stored, /healthz answers.
	before := w.total()
	resp, err := client.Post(url, "application/x-protobuf", bytes.NewReader(logsBody(call(), call(), call())))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || w.total() != before+3 {
		t.Fatalf("valid request after the corpus: %d, stored %d, want %d", resp.StatusCode, w.total(), before+3)
	}
	resp, err = client.Get(health.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %d", resp.StatusCode)
	}
}

// scrape reads the samples of a Prometheus text exposition, by series.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for line := range strings.SplitSeq(string(text), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	if len(out) == 0 {
		t.Fatal(fmt.Errorf("empty scrape"))
	}
	return out
}
