package ingest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/store"
)

// errSpanExporter is the real OTLP trace exporter, remembering the errors
// its exports return — partial successes among them.
type errSpanExporter struct {
	sdktrace.SpanExporter
	mu   sync.Mutex
	errs []error
}

func (e *errSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		e.mu.Lock()
		e.errs = append(e.errs, err)
		e.mu.Unlock()
	}
	return err
}

// emitMCPSpans creates, through the OpenTelemetry Go SDK, the spans an MCP
// server (and a client) instrumented to the OpenTelemetry MCP conventions
// would, with a few mcp.drift.* attributes on some: 30 that become drift
// events, 3 rejected and 5 ignored. Then it flushes.
func emitMCPSpans(t *testing.T, exp sdktrace.SpanExporter, service string) {
	t.Helper()
	ctx := context.Background()
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Hour)),
		sdktrace.WithResource(resource.NewSchemaless(
			attribute.String("service.name", service),
			attribute.String("service.version", "2.3.0"),
			attribute.String("deployment.environment.name", "test"),
		)),
	)
	tracer := tp.Tracer("github.com/modelcontextprotocol/go-sdk")
	seq := 0
	span := func(name string, kind trace.SpanKind, fail bool, kvs ...attribute.KeyValue) {
		seq++
		method, target, _ := strings.Cut(name, " ")
		attrs := []attribute.KeyValue{attribute.String("mcp.method.name", method), attribute.Int("jsonrpc.request.id", seq)}
		if target != "" {
			attrs = append(attrs, attribute.String("gen_ai.tool.name", target))
		}
		_, sp := tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(append(attrs, kvs...)...))
		if fail {
			sp.SetStatus(otelcodes.Error, "Invalid params")
		}
		sp.End()
	}
	server, client := trace.SpanKindServer, trace.SpanKindClient
	// MCP 2025-06-18: a session, the client identity copied from
	// initialize.clientInfo.
	session := []attribute.KeyValue{
		attribute.String("mcp.protocol.version", "2025-06-18"), attribute.String("mcp.session.id", "191c4850af6c49e0"),
		attribute.String("mcp.client.name", "claude-code"), attribute.String("mcp.client.version", "2.1.0"),
	}
	for range 6 {
		span("tools/call create_ticket", server, false, append(session, attribute.String("mcp.drift.outcome", "current"), attribute.String("mcp.drift.revision.server", "7"))...)
	}
	for range 4 {
		span("tools/call create_ticket", server, false, append(session, attribute.String("mcp.drift.outcome", "normalized"),
			attribute.String("mcp.drift.adapter.id", "ticket-v6-to-v7"), attribute.String("mcp.drift.revision.client", "6"), attribute.String("mcp.drift.revision.server", "7"))...)
	}
	// No drift attributes: the outcome is inferred. Invalid params, once
	// as an int status code (as some SDKs send it), once as a string.
	for range 3 {
		span("tools/call create_ticket", server, true, append(session, attribute.Int("rpc.response.status_code", -32602), attribute.String("error.type", "-32602"))...)
	}
	span("tools/call create_ticket", server, true, append(session, attribute.String("rpc.response.status_code", "-32602"))...)
	for range 2 {
		span("tools/call create_ticket", server, true, append(session, attribute.String("error.type", "tool_error"))...)
	}
	for range 3 {
		span("tools/call create_ticket", server, false, session...)
	}
	// The client re-lists, after the server's notification.
	span("notifications/tools/list_changed", client, false, append(session, attribute.String("mcp.drift.revision.server", "7"))...)
	for range 2 {
		span("tools/list", client, false, append(session, attribute.String("mcp.drift.revision.before", "6"), attribute.String("mcp.drift.revision.after", "7"))...)
	}
	// MCP 2026-07-28: no session; the run keys the calls, the client comes
	// in _meta.
	run := []attribute.KeyValue{attribute.String("mcp.protocol.version", "2026-07-28"), attribute.String("mcp.drift.run.id", "run-"+service)}
	for range 4 {
		span("tools/call create_ticket", server, false, append(run, attribute.String("io.modelcontextprotocol/clientInfo", `{"name":"codex","version":"0.9.1"}`))...)
	}
	for range 4 {
		span("tools/call create_ticket", server, false, append(run, attribute.String("io.modelcontextprotocol/clientInfo.name", "codex"),
			attribute.String("io.modelcontextprotocol/clientInfo.version", "0.9.1"), attribute.String("mcp.drift.outcome", "normalized"),
			attribute.String("mcp.drift.adapter.id", "ticket-v6-to-v7"))...)
	}
	// Rejected: an unknown outcome, an outcome that cannot be inferred.
	for range 2 {
		span("tools/call create_ticket", server, false, attribute.String("mcp.drift.outcome", "sideways"))
	}
	span("tools/call create_ticket", server, false, attribute.String("mcp.drift.revision.client", "6"), attribute.String("mcp.drift.revision.server", "7"))
	// Ignored: other MCP methods, other spans.
	span("initialize", server, false, session...)
	span("ping", client, false)
	span("tools/list", server, false, session...)
	_, sp := tracer.Start(ctx, "POST /mcp", trace.WithSpanKind(server))
	sp.End()
	_, sp = tracer.Start(ctx, "db.query")
	sp.End()

	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := tp.ForceFlush(fctx); err != nil && !strings.Contains(err.Error(), "partial success") {
		t.Fatalf("ForceFlush: %v", err)
	}
	if err := tp.Shutdown(fctx); err != nil && !strings.Contains(err.Error(), "partial success") {
		t.Fatalf("Shutdown of the tracer provider: %v", err)
	}
}

// TestTracesEndToEnd sends MCP spans with the OpenTelemetry SDK's own OTLP
// trace exporters, over gRPC and HTTP, to an ingester backed by the
// embedded store, and reads back what the store holds.
func TestTracesEndToEnd(t *testing.T) {
	st := openStore(t)
	s := newServer(t, testConfig(), st, true)
	ctx := context.Background()

	for _, tc := range []struct {
		name string
		exp  func() (sdktrace.SpanExporter, error)
	}{
		{"grpc", func() (sdktrace.SpanExporter, error) {
			return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(s.GRPCAddr().String()), otlptracegrpc.WithInsecure(),
				otlptracegrpc.WithCompressor("gzip"), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
		}},
		{"http", func() (sdktrace.SpanExporter, error) {
			return otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(s.HTTPAddr().String()), otlptracehttp.WithInsecure(),
				otlptracehttp.WithCompression(otlptracehttp.GzipCompression), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Stats()
			e, err := tc.exp()
			if err != nil {
				t.Fatal(err)
			}
			exp := &errSpanExporter{SpanExporter: e}
			service := "e2e-traces-" + tc.name
			emitMCPSpans(t, exp, service)

			// The SDK saw the partial success: 3 rejected, and why.
			msg := errors.Join(exp.errs...)
			if msg == nil || !strings.Contains(msg.Error(), "3 of 38 spans rejected") || !strings.Contains(msg.Error(), "sideways") ||
				!strings.Contains(msg.Error(), "cannot be inferred") {
				t.Errorf("exporter errors %v: want a partial success of 3 naming the problems", msg)
			}
			after := s.Stats()
			if d := [4]uint64{after.Spans - before.Spans, after.SpansAccepted - before.SpansAccepted, after.SpansRejected - before.SpansRejected,
				after.SpansIgnored - before.SpansIgnored}; d != [4]uint64{38, 30, 3, 5} {
				t.Errorf("Stats counted spans/accepted/rejected/ignored %v, want [38 30 3 5]", d)
			}

			type row struct {
				EventName string `json:"event_name"`
				Outcome   string `json:"outcome"`
				Refresh   string `json:"refresh_result"`
				Client    string `json:"client"`
				Keyed     string `json:"keyed"`
				ErrorCode string `json:"error_code"`
				Inferred  string `json:"inferred"`
				N         uint64 `json:"n"`
			}
			var rows []row
			q := store.Query{Name: "e2e_trace_counts", SQL: `SELECT toString(event_name) AS event_name, toString(outcome) AS outcome,
					toString(refresh_result) AS refresh_result, client_name || '/' || client_version AS client,
					if(session_id != '', 'session', if(run_id != '', 'run', '')) AS keyed,
					error_code, attributes['dev.mcpdrift.outcome.inferred'] AS inferred, count() AS n
				FROM mcpdrift.events WHERE service = {service:String} AND service_version = '2.3.0' AND environment = 'test'
				GROUP BY ALL ORDER BY ALL`}
			if err := st.Query(ctx, q, store.Params{}.String("service", service), &rows); err != nil {
				t.Fatal(err)
			}
			got := map[row]uint64{}
			for _, r := range rows {
				n := r.N
				r.N = 0
				got[r] = n
			}
			want := map[row]uint64{
				{EventName: "mcp.drift.call", Outcome: "current", Client: "claude-code/2.1.0", Keyed: "session"}:                                                 6,
				{EventName: "mcp.drift.call", Outcome: "normalized", Client: "claude-code/2.1.0", Keyed: "session"}:                                              4,
				{EventName: "mcp.drift.call", Outcome: "rejected_invalid", Client: "claude-code/2.1.0", Keyed: "session", ErrorCode: "-32602", Inferred: "true"}: 4,
				{EventName: "mcp.drift.call", Outcome: "failed", Client: "claude-code/2.1.0", Keyed: "session", ErrorCode: "tool_error", Inferred: "true"}:       2,
				{EventName: "mcp.drift.call", Outcome: "current", Client: "claude-code/2.1.0", Keyed: "session", Inferred: "true"}:                               3,
				{EventName: "mcp.drift.list_changed", Client: "claude-code/2.1.0", Keyed: "session"}:                                                             1,
				{EventName: "mcp.drift.refresh", Refresh: "ok", Client: "claude-code/2.1.0", Keyed: "session"}:                                                   2,
				{EventName: "mcp.drift.call", Outcome: "current", Client: "codex/0.9.1", Keyed: "run", Inferred: "true"}:                                         4,
				{EventName: "mcp.drift.call", Outcome: "normalized", Client: "codex/0.9.1", Keyed: "run"}:                                                        4,
			}
			if len(got) != len(want) {
				t.Errorf("stored %d kinds of rows, want %d:\n got %v", len(got), len(want), got)
			}
			for r, n := range want {
				if got[r] != n {
					t.Errorf("stored %d of %+v, want %d", got[r], r, n)
				}
			}
		})
	}
}
