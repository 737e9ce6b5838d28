package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TestClientViewsCountOnce sends serve the spans of an agent and of the
// MCP server it calls, both traced as the Python SDK v2 traces them (the
// client's `MCP send tools/call {tool}` CLIENT spans over OTLP/gRPC, the
// server's `tools/call {tool}` SERVER spans, children of the client's,
// over OTLP/HTTP): 3 calls seen from both sides, 1 seen by the server
// only and 1 by the client only, to a tool the server does not have. The
// stale-usage report counts each call once: search_books 4 times, as the
// server saw them, and reserve_book once, removed, under the server the
// client span names, once the hold is over.
func TestClientViewsCountOnce(t *testing.T) {
	requireChDB(t)
	p := startServe(t, t.TempDir(), "-ingest.ack", "stored", "-client-views.hold", "1s", "-client-views.interval", "1s")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	clientExp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(p.Ingester().GRPCAddr().String()), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	serverExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(p.Ingester().HTTPAddr().String()), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	provider := func(exp sdktrace.SpanExporter, service, version string) *sdktrace.TracerProvider {
		return sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(resource.NewSchemaless(
			attribute.String("service.name", service), attribute.String("service.version", version),
			attribute.String("deployment.environment.name", "test"))))
	}
	agent, server := provider(clientExp, "librarian-agent", "0.3.0"), provider(serverExp, "books-mcp", "2.0.0")
	clientTracer, serverTracer := agent.Tracer("mcp-python-sdk"), server.Tracer("mcp-python-sdk")

	// call traces one call: the client's span when client, the server's,
	// its child, when served; fail is the MCP error the client raises.
	call := func(id, tool string, client, served bool, fail string) {
		cctx := ctx
		if client {
			var sp trace.Span
			cctx, sp = clientTracer.Start(ctx, "MCP send tools/call "+tool, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
				attribute.String("mcp.method.name", "tools/call"), attribute.String("jsonrpc.request.id", id),
				attribute.String("server.address", "books.example"), attribute.Int("server.port", 443)))
			defer func() {
				if fail != "" {
					sp.RecordError(errString(fail))
					sp.SetStatus(otelcodes.Error, fail)
				}
				sp.End()
			}()
		}
		if served {
			_, sp := serverTracer.Start(cctx, "tools/call "+tool, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
				attribute.String("mcp.method.name", "tools/call"), attribute.String("jsonrpc.request.id", id),
				attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", tool),
				attribute.String("mcp.protocol.version", "2025-11-25")))
			sp.End()
		}
	}
	for _, id := range []string{"1", "2", "3"} {
		call(id, "search_books", true, true, "")
	}
	call("4", "search_books", false, true, "")
	call("5", "reserve_book", true, false, "Unknown tool: reserve_book")
	for _, tp := range []*sdktrace.TracerProvider{agent, server} {
		if err := tp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}

	type row struct {
		Tool    string `json:"tool"`
		Calls   int    `json:"calls"`
		Current int    `json:"current"`
		Removed int    `json:"removed"`
	}
	report := func() map[string]row {
		t.Helper()
		var r struct {
			Rows []row `json:"rows"`
		}
		if err := json.Unmarshal(get(t, "http://"+p.API().Addr()+"/api/v1/reports/stale-usage"), &r); err != nil {
			t.Fatal(err)
		}
		m := map[string]row{}
		for _, x := range r.Rows {
			m[x.Tool] = x
		}
		return m
	}
	// Before the hold is over, the client views are held: the report
	// counts the server's spans only.
	if got := report(); got["search_books"].Calls != 4 || got["reserve_book"].Calls != 0 {
		t.Errorf("before the release: %+v, want search_books 4 calls, reserve_book none", got)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		got := report()
		if got["reserve_book"].Calls > 0 || time.Now().After(deadline) {
			if want := (row{"search_books", 4, 4, 0}); got["search_books"] != want {
				t.Errorf("search_books: %+v, want %+v (each call once, the server's span)", got["search_books"], want)
			}
			if want := (row{"reserve_book", 1, 0, 1}); got["reserve_book"] != want {
				t.Errorf("reserve_book: %+v, want %+v (the client's view alone, after the hold)", got["reserve_book"], want)
			}
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var services struct {
		Rows []struct {
			Service string `json:"service"`
			Tool    string `json:"tool"`
		} `json:"rows"`
	}
	resp, err := http.Get("http://" + p.API().Addr() + "/api/v1/reports/stale-usage?service=books.example:443")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&services); err != nil {
		t.Fatal(err)
	}
	if len(services.Rows) != 1 || services.Rows[0].Tool != "reserve_book" {
		t.Errorf("stale usage of service books.example:443: %+v, want reserve_book alone", services.Rows)
	}
	// The releaser counts what it released once its INSERT has returned,
	// a moment after the report can see it.
	released := func() string {
		for line := range strings.Lines(scrape(t, p.API().Addr())) {
			if v, ok := strings.CutPrefix(line, "mcpdrift_client_views_released_total "); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	for got := released(); got != "1"; got = released() {
		if time.Now().After(deadline) {
			t.Errorf("mcpdrift_client_views_released_total %s, want 1", got)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// errString is an error with a message.
type errString string

func (e errString) Error() string { return string(e) }
