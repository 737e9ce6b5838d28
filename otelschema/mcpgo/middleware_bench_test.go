package mcpgo

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

type discard struct{}

func (discard) Export(context.Context, []sdklog.Record) error { return nil }
func (discard) Shutdown(context.Context) error                { return nil }
func (discard) ForceFlush(context.Context) error              { return nil }

// BenchmarkMiddleware isolates the server middleware's cost per tools/call:
// the same request through a stub handler, bare and wrapped (current and
// normalised outcomes, arguments recorded, the OpenTelemetry SDK's batch
// processor with a discarding exporter; also without key de-duplication, and
// a no-op provider for the middleware's own share). The added cost is the difference
// of ns/op; the SDK's own cost of a call (BenchmarkCallTool) is far larger
// and too noisy to show it.
func BenchmarkMiddleware(b *testing.B) {
	ctx := context.Background()
	batch := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(discard{})))
	defer batch.Shutdown(ctx)
	nodedup := sdklog.NewLoggerProvider(sdklog.WithAllowKeyDuplication(), sdklog.WithProcessor(sdklog.NewBatchProcessor(discard{})))
	defer nodedup.Shutdown(ctx)
	b.Run("bare", func(b *testing.B) { benchMiddleware(b, nil) })
	b.Run("noop_provider", func(b *testing.B) { benchMiddleware(b, noop.NewLoggerProvider()) })
	b.Run("sdk_batch", func(b *testing.B) { benchMiddleware(b, batch) })
	b.Run("sdk_batch_allow_key_duplication", func(b *testing.B) { benchMiddleware(b, nodedup) })
}

func benchMiddleware(b *testing.B, lp log.LoggerProvider) {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
	d := NewServer(srv, &ServerOptions{LoggerProvider: lp})
	schema := json.RawMessage(`{"type":"object","properties":{"branch":{"type":"string"},"region":{"type":"string"}},"required":["branch","region"]}`)
	ok := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return ok, nil }
	if err := d.AddTool(&mcp.Tool{Name: "deploy_preview", InputSchema: schema}, handler,
		Contract{Revision: "2", Privilege: otelschema.PrivilegeWrite}); err != nil {
		b.Fatal(err)
	}
	if err := d.AddAdapter(ctx, Adapter{ID: "a", Tool: "deploy_preview", From: "1", To: "2", Class: otelschema.ChangeClassAdditive}); err != nil {
		b.Fatal(err)
	}
	next := func(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
		return handler(ctx, req.(*mcp.CallToolRequest))
	}
	args := json.RawMessage(`{"branch":"fix-login","region":"us-east-preview"}`)
	req := func(rev string) *mcp.CallToolRequest {
		return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "deploy_preview", Arguments: args,
			Meta: mcp.Meta{MetaRevision: rev, MetaRequestID: "4f1c2a", MetaRunID: "run-1"}}}
	}
	bench := func(h mcp.MethodHandler, r *mcp.CallToolRequest) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h(ctx, methodCallTool, r); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if lp == nil {
		bench(next, req("2"))(b)
		return
	}
	b.Run("current", bench(d.receive(next), req("2")))
	b.Run("normalized", bench(d.receive(next), req("1")))
	b.Run("rejected_stale", bench(d.receive(next), req("0")))
}
