package mcpgo_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// discard is an OpenTelemetry log exporter that drops what it is given.
type discard struct{}

func (discard) Export(context.Context, []sdklog.Record) error { return nil }
func (discard) Shutdown(context.Context) error                { return nil }
func (discard) ForceFlush(context.Context) error              { return nil }

// BenchmarkCallTool measures one tools/call over the SDK's in-memory
// transport, without and with the drift middleware. The instrumented runs
// emit through the real OpenTelemetry SDK (batch processor, a discarding
// exporter), arguments included. The middleware's cost is the difference
// between the sub-benchmarks' ns/op, as `make bench` prints it.
func BenchmarkCallTool(b *testing.B) {
	schema := json.RawMessage(`{"type":"object","properties":{"branch":{"type":"string"},"region":{"type":"string"}},"required":["branch","region"]}`)
	tool := &mcp.Tool{Name: "deploy_preview", InputSchema: schema}
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	args := map[string]any{"branch": "fix-login", "region": "us-east-preview"}

	run := func(b *testing.B, protocol string, server, client bool) {
		ctx := context.Background()
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(discard{})))
		defer lp.Shutdown(ctx)
		srv := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
		if server {
			d := mcpgo.NewServer(srv, &mcpgo.ServerOptions{LoggerProvider: lp})
			if err := d.AddTool(tool, handler, mcpgo.Contract{Revision: "2", Privilege: otelschema.PrivilegeWrite}); err != nil {
				b.Fatal(err)
			}
		} else {
			srv.AddTool(tool, handler)
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "bench-client"}, nil)
		if client {
			mcpgo.NewClient(c, &mcpgo.ClientOptions{LoggerProvider: lp, RunID: "bench"})
		}
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Close()
		cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		params := &mcp.CallToolParams{Name: "deploy_preview", Arguments: args}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	}
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		b.Run(protocol+"/bare", func(b *testing.B) { run(b, protocol, false, false) })
		b.Run(protocol+"/server_middleware", func(b *testing.B) { run(b, protocol, true, false) })
		b.Run(protocol+"/server_and_client_middleware", func(b *testing.B) { run(b, protocol, true, true) })
	}
}
