package app_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/app/embeddedstore"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// requireChDB skips without libchdb, unless MCPDRIFT_REQUIRE_CHDB is set.
func requireChDB(t *testing.T) {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// span is a received span, as the test reads it.
type span struct {
	name, trace, id, parent string
	links                   int
	attrs                   map[string]string
	// status is the span's status code: STATUS_CODE_UNSET unless set.
	status string
}

// receiver is an OTLP trace receiver on loopback: the collector's trace
// service over gRPC, or POST /v1/traces over HTTP with protobuf bodies.
type receiver struct {
	collectortrace.UnimplementedTraceServiceServer
	endpoint string
	conns    atomic.Int64 // connections accepted

	mu       sync.Mutex
	spans    []span
	services []string
}

func startReceiver(t *testing.T, protocol string) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{endpoint: "http://" + ln.Addr().String()}
	cl := &countingListener{Listener: ln, n: &r.conns}
	switch protocol {
	case "grpc":
		srv := grpc.NewServer()
		collectortrace.RegisterTraceServiceServer(srv, r)
		go func() { _ = srv.Serve(cl) }()
		t.Cleanup(srv.Stop)
	default:
		srv := &http.Server{Handler: http.HandlerFunc(r.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(cl) }()
		t.Cleanup(func() { _ = srv.Close() })
	}
	return r
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func (r *receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	var msg collectortrace.ExportTraceServiceRequest
	if err == nil && req.URL.Path == "/v1/traces" && req.Header.Get("Content-Type") == "application/x-protobuf" {
		err = proto.Unmarshal(body, &msg)
	} else if err == nil {
		err = fmt.Errorf("unexpected %s %s of type %s", req.Method, req.URL.Path, req.Header.Get("Content-Type"))
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.record(&msg)
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Export implements the collector's trace service.
func (r *receiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.record(req)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (r *receiver) record(req *collectortrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		r.services = append(r.services, attrMap(rs.GetResource().GetAttributes())["service.name"])
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, span{
					name: s.Name, trace: hex.EncodeToString(s.TraceId), id: hex.EncodeToString(s.SpanId),
					parent: hex.EncodeToString(s.ParentSpanId), links: len(s.Links), attrs: attrMap(s.Attributes),
					status: s.GetStatus().GetCode().String(),
				})
			}
		}
	}
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch {
		case v.GetArrayValue() != nil:
			var parts []string
			for _, e := range v.GetArrayValue().Values {
				parts = append(parts, e.GetStringValue())
			}
			m[kv.Key] = fmt.Sprint(parts)
		case v.GetStringValue() != "":
			m[kv.Key] = v.GetStringValue()
		default:
			if _, ok := v.GetValue().(*commonpb.AnyValue_BoolValue); ok {
				m[kv.Key] = fmt.Sprint(v.GetBoolValue())
			} else {
				m[kv.Key] = fmt.Sprint(v.GetIntValue())
			}
		}
	}
	return m
}

// startServe starts the all-in-one on a fresh data directory, listening
// on loopback ports picked by the system, as `mcpdrift serve` does.
func startServe(t *testing.T, dir string, args ...string) *app.Process {
	t.Helper()
	c := app.DefaultConfig(app.RoleServe, "mcpdrift serve", embeddedstore.New())
	args = append([]string{"-data.dir", dir, "-otlp.grpc.listen", "127.0.0.1:0", "-otlp.http.listen", "127.0.0.1:0",
		"-api.listen", "127.0.0.1:0", "-log.level", "warn"}, args...)
	if err := c.Parse(args, io.Discard); err != nil {
		t.Fatal(err)
	}
	p, err := app.Start(context.Background(), c, "v-test", io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

// exportCalls sends events, of one resource, in one OTLP/HTTP logs export
// and checks that they are acknowledged, none rejected.
func exportCalls(t *testing.T, p *app.Process, events []otelschema.Event) {
	t.Helper()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	otelschema.EncodeResource(&events[0], rl.Resource())
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for i := range events {
		otelschema.EncodeLogRecord(&events[i], lrs.AppendEmpty())
	}
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+p.Ingester().HTTPAddr().String()+"/v1/logs", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/logs: %d %s", resp.StatusCode, out)
	}
	var res plogotlp.ExportResponse
	res = plogotlp.NewExportResponse()
	if err := res.UnmarshalProto(out); err != nil {
		t.Fatal(err)
	}
	if n := res.PartialSuccess().RejectedLogRecords(); n != 0 {
		t.Fatalf("POST /v1/logs: %d records rejected: %s", n, res.PartialSuccess().ErrorMessage())
	}
}

// calls returns n calls of tool search through adapter (none when
// empty), made now.
func calls(n int, adapter string) []otelschema.Event {
	now := time.Now()
	var out []otelschema.Event
	for i := range n {
		out = append(out, otelschema.Event{
			Name: otelschema.EventCall, Time: now.Add(time.Duration(i) * time.Millisecond).UnixNano(),
			Service: "docs", ServiceVersion: "d-3.0", Environment: "prod",
			Tool: "search", SessionID: fmt.Sprintf("s-%d", i), ClientName: "cursor", ClientVersion: "0.48.0",
			RevisionClient: "r1", RevisionServer: "r2", Outcome: otelschema.OutcomeNormalized, AdapterID: adapter,
		})
	}
	return out
}

// scrape returns the text of serve's /metrics at api.
func scrape(t *testing.T, api string) string {
	t.Helper()
	return string(get(t, "http://"+api+"/metrics"))
}

// get returns the body of GET url, failing the test unless it is a 200.
func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return body
}

// storedCalls describes the calls the store of p holds, in the events
// table and in the minutely tier, for a failure's message.
func storedCalls(t *testing.T, p *app.Process) string {
	t.Helper()
	var out strings.Builder
	for _, table := range []string{"events", "recent_calls"} {
		var rows []struct {
			Tenant string    `json:"tenant"`
			Tool   string    `json:"tool"`
			Time   time.Time `json:"time"`
		}
		q := store.Query{Name: "test_stored_calls", SQL: "SELECT tenant, tool, time FROM mcpdrift." + table + " ORDER BY time"}
		if err := p.Store().Query(context.Background(), q, nil, &rows); err != nil {
			fmt.Fprintf(&out, "%s: %v; ", table, err)
			continue
		}
		fmt.Fprintf(&out, "%s: %d rows %+v; ", table, len(rows), rows)
	}
	return out.String()
}

// spanAttributes are every attribute key mcpdrift's spans may carry: none
// holds an argument value, a token or an event's content.
var spanAttributes = []string{
	"mcpdrift.ingest.signal", "mcpdrift.ingest.accepted", "mcpdrift.ingest.rejected", "mcpdrift.ingest.ignored",
	"mcpdrift.batch.events", "mcpdrift.batch.parts", "mcpdrift.batch.spooled", "mcpdrift.insert.replay",
	"mcpdrift.rows", "mcpdrift.store.backend", "db.system.name", "db.operation.name",
	"mcpdrift.report", "mcpdrift.report.query", "mcpdrift.report.tiers",
	"http.request.method", "http.route", "http.response.status_code",
}

// TestSelfTraces runs serve with the OTLP exporter environment pointing at
// a receiver on loopback, over each protocol, sends one logs export and
// asks for one report, and checks the spans received once serve stopped:
// ingest request → batch → store insert, report request → report query,
// their attributes, and the resource's service name.
func TestSelfTraces(t *testing.T) {
	requireChDB(t)
	for _, tc := range []struct{ protocol, ack string }{{"grpc", "stored"}, {"http/protobuf", "spooled"}} {
		t.Run(tc.protocol+"/"+tc.ack, func(t *testing.T) {
			protocol := tc.protocol
			rec := startReceiver(t, protocol)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rec.endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			t.Setenv("OTEL_SERVICE_NAME", "drift-under-test")
			// Acknowledged once stored, a batch is written by the request's
			// own insert; once spooled, by the spool replayer's.
			p := startServe(t, t.TempDir(), "-ingest.ack", tc.ack)
			sent := calls(3, "")
			exportCalls(t, p, sent)
			// Acknowledged once spooled, the events reach the store up to
			// -ingest.insert.max-delay later.
			for deadline := time.Now().Add(30 * time.Second); p.Ingester().Stats().EventsStored < 3; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d of 3 events stored after 30 s", p.Ingester().Stats().EventsStored)
				}
			}
			asked := time.Now()
			body := get(t, "http://"+p.API().Addr()+"/api/v1/tools")
			var tools struct {
				From, To time.Time
				Rows     []json.RawMessage
			}
			if err := json.Unmarshal(body, &tools); err != nil {
				t.Fatalf("GET /api/v1/tools: %v: %s", err, body)
			}
			if len(tools.Rows) != 1 {
				t.Errorf("GET /api/v1/tools at %s: %d rows over [%s, %s), want 1 (the calls were made at %s); the store holds %s",
					asked.UTC().Format(time.RFC3339Nano), len(tools.Rows), tools.From.Format(time.RFC3339Nano), tools.To.Format(time.RFC3339Nano),
					time.Unix(0, sent[0].Time).UTC().Format(time.RFC3339Nano), storedCalls(t, p))
			}
			get(t, "http://"+p.API().Addr()+"/healthz") // a probe: not traced
			if err := p.Shutdown(); err != nil {
				t.Fatal(err)
			}

			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.services) == 0 || slices.ContainsFunc(rec.services, func(s string) bool { return s != "drift-under-test" }) {
				t.Errorf("service.name of the exports: %q, want drift-under-test", rec.services)
			}
			byName := map[string][]span{}
			for _, s := range rec.spans {
				byName[s.name] = append(byName[s.name], s)
				for k := range s.attrs {
					if !slices.Contains(spanAttributes, k) {
						t.Errorf("span %s: unexpected attribute %s=%q", s.name, k, s.attrs[k])
					}
				}
			}
			one := func(name string, want map[string]string) span {
				t.Helper()
				if len(byName[name]) != 1 {
					t.Fatalf("%d spans %q, want 1; received %v", len(byName[name]), name, rec.spans)
				}
				s := byName[name][0]
				if s.status == "STATUS_CODE_ERROR" {
					t.Errorf("span %s has status %s", name, s.status)
				}
				for k, v := range want {
					if s.attrs[k] != v {
						t.Errorf("span %s: %s=%q, want %q (attributes %v)", name, k, s.attrs[k], v, s.attrs)
					}
				}
				return s
			}
			child := func(c, parent span) {
				t.Helper()
				if c.trace != parent.trace || c.parent != parent.id {
					t.Errorf("span %s (trace %s, parent %s) is not the child of %s (trace %s, id %s)", c.name, c.trace, c.parent, parent.name, parent.trace, parent.id)
				}
			}
			if len(rec.spans) != 5 {
				t.Errorf("%d spans, want 5: %v", len(rec.spans), rec.spans)
			}
			req := one("ingest request", map[string]string{"mcpdrift.ingest.signal": "logs", "mcpdrift.ingest.accepted": "3", "mcpdrift.ingest.rejected": "0"})
			if req.parent != "" {
				t.Errorf("ingest request has parent %s, want a root span", req.parent)
			}
			batch := one("ingest batch", map[string]string{"mcpdrift.batch.events": "3", "mcpdrift.batch.parts": "1", "mcpdrift.batch.spooled": "true"})
			child(batch, req)
			wantInsert := map[string]string{"mcpdrift.rows": "3", "mcpdrift.store.backend": "embedded", "db.system.name": "clickhouse", "db.operation.name": "INSERT"}
			if tc.ack == "spooled" {
				wantInsert["mcpdrift.insert.replay"] = "true"
			}
			insert := one("store insert", wantInsert)
			child(insert, batch)
			api := one("GET /api/v1/tools", map[string]string{"mcpdrift.report": "tools", "http.route": "/api/v1/tools", "http.request.method": "GET", "http.response.status_code": "200"})
			query := one("report query", map[string]string{"mcpdrift.report.query": "tools", "mcpdrift.rows": "1", "mcpdrift.store.backend": "embedded", "db.system.name": "clickhouse"})
			child(query, api)
			// The default window, the last 7 days, ends now: its last
			// minutes are read from the minutely tier.
			if tiers := query.attrs["mcpdrift.report.tiers"]; !strings.Contains(tiers, "minute") {
				t.Errorf("report query read tiers %s, want the minutely one among them", tiers)
			}
		})
	}
}

// TestSelfTracesOff checks that serve exports no trace unless the
// environment asks for it: with no OTLP variable, with OTEL_SDK_DISABLED,
// and with OTEL_TRACES_EXPORTER=none, the receiver the endpoint names is
// never dialled.
func TestSelfTracesOff(t *testing.T) {
	requireChDB(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"no endpoint", map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_TRACES_SAMPLER": "always_on"}},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := startReceiver(t, "grpc")
			for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED"} {
				t.Setenv(k, "")
				os.Unsetenv(k)
			}
			for k, v := range tc.env {
				if v == "" {
					v = rec.endpoint // an endpoint to be ignored
				}
				t.Setenv(k, v)
			}
			p := startServe(t, t.TempDir())
			exportCalls(t, p, calls(2, ""))
			get(t, "http://"+p.API().Addr()+"/api/v1/tools")
			if err := p.Shutdown(); err != nil {
				t.Fatal(err)
			}
			if n := rec.conns.Load(); n != 0 {
				t.Errorf("%d connections to the receiver, want none", n)
			}
			if p.Traced() {
				t.Error("the process has a trace exporter")
			}
		})
	}
}
