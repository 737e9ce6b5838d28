// Command sdk emits drift events with the OpenTelemetry Go SDK, the way an
// instrumented MCP server would: a stale call normalised by an adapter, the
// adapter's registry entry, and a stale call rejected before any side effect.
//
//	go run ./examples/sdk -endpoint 127.0.0.1:4317
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

func main() {
	endpoint := flag.String("endpoint", "127.0.0.1:4317", "OTLP/gRPC endpoint of mcpdrift")
	flag.Parse()
	if err := run(*endpoint); err != nil {
		fmt.Fprintln(os.Stderr, "sdk example:", err)
		os.Exit(1)
	}
	fmt.Println("sent 3 drift events to", *endpoint)
}

func run(endpoint string) error {
	ctx := context.Background()
	exp, err := otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(endpoint), otlploggrpc.WithInsecure())
	if err != nil {
		return err
	}
	provider := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)),
		sdklog.WithResource(resource.NewWithAttributes(semconv.SchemaURL,
			semconv.ServiceName("deployer"),
			semconv.ServiceVersion("2026.11.30-1"),
			semconv.DeploymentEnvironmentName("prod"),
		)),
	)
	logger := provider.Logger("mcpdrift-example")

	emit := func(name string, attrs ...attribute.KeyValue) {
		var r log.Record
		r.SetEventName(name)
		r.SetTimestamp(time.Now())
		r.AddAttributes(attrs...)
		logger.Emit(ctx, r)
	}
	// The server declares its compatibility adapter for deploy_preview 1 → 2.
	emit("dev.mcpdrift.adapter",
		attribute.String("gen_ai.tool.name", "deploy_preview"),
		attribute.String("dev.mcpdrift.adapter.id", "deploy_preview-r1-r2"),
		attribute.String("dev.mcpdrift.adapter.revision.from", "1"),
		attribute.String("dev.mcpdrift.adapter.revision.to", "2"),
		attribute.String("dev.mcpdrift.change.class", "bounded_migration"),
		attribute.String("dev.mcpdrift.adapter.window_end", time.Now().Add(14*24*time.Hour).UTC().Format(time.RFC3339)),
	)
	// An agent that planned with revision 1 calls; the adapter fills region.
	emit("dev.mcpdrift.call",
		attribute.String("gen_ai.tool.name", "deploy_preview"),
		attribute.String("mcp.session.id", "session-7f3a"),
		attribute.String("dev.mcpdrift.client.name", "release-agent"),
		attribute.String("dev.mcpdrift.client.version", "1.4.0"),
		attribute.String("dev.mcpdrift.revision.client", "1"),
		attribute.String("dev.mcpdrift.revision.server", "2"),
		attribute.String("dev.mcpdrift.outcome", "normalized"),
		attribute.String("dev.mcpdrift.adapter.id", "deploy_preview-r1-r2"),
		attribute.String("dev.mcpdrift.privilege", "write"),
		attribute.Int64("dev.mcpdrift.session.age_s", 5400),
	)
	// Another tool gained an approval scope: the stale call is rejected
	// before anything external happens.
	emit("dev.mcpdrift.call",
		attribute.String("gen_ai.tool.name", "run_report"),
		attribute.String("mcp.session.id", "session-9c21"),
		attribute.String("dev.mcpdrift.revision.client", "3"),
		attribute.String("dev.mcpdrift.revision.server", "4"),
		attribute.String("dev.mcpdrift.outcome", "rejected_stale"),
		attribute.String("dev.mcpdrift.change.class", "authority"),
		attribute.String("dev.mcpdrift.error.code", "STALE_TOOL_SCHEMA"),
		attribute.String("dev.mcpdrift.required_action", "refresh_tools"),
		attribute.Bool("dev.mcpdrift.side_effect.started", false),
	)
	return provider.Shutdown(ctx)
}
