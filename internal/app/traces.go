package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Traces is a tracer provider exporting the process's own spans over
// OTLP (see package internal/selftrace).
type Traces struct {
	tp *sdktrace.TracerProvider
}

// Environment variables that decide whether traces are exported. The
// exporters read the others (endpoints, headers, TLS, timeouts, the batch
// processor's) themselves, and the SDK the sampler (OTEL_TRACES_SAMPLER,
// OTEL_TRACES_SAMPLER_ARG) and the resource (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES).
const (
	envDisabled       = "OTEL_SDK_DISABLED"
	envExporter       = "OTEL_TRACES_EXPORTER"
	envEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
)

// ErrTraceConfig is wrapped by the errors of an unusable trace export
// configuration.
var ErrTraceConfig = errors.New("invalid trace export configuration")

// TracesFromEnv returns a provider configured by the OTLP exporter environment
// variables, or nil — no exporter, no goroutine — unless they ask for
// traces: OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// is set, or OTEL_TRACES_EXPORTER is otlp; and neither OTEL_SDK_DISABLED
// is true nor OTEL_TRACES_EXPORTER none. The protocol is
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL: grpc
// or http/protobuf (the default). service names the binary unless
// OTEL_SERVICE_NAME does; version is its service.version.
func TracesFromEnv(ctx context.Context, service, version string) (*Traces, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv(envDisabled)), "true") {
		return nil, nil
	}
	switch exp := strings.TrimSpace(os.Getenv(envExporter)); exp {
	case "none":
		return nil, nil
	case "":
		if os.Getenv(envEndpoint) == "" && os.Getenv(envTracesEndpoint) == "" {
			return nil, nil
		}
	case "otlp":
	default:
		return nil, fmt.Errorf("%w: %s=%q: mcpdrift exports traces with otlp only (or none)", ErrTraceConfig, envExporter, exp)
	}
	protocol, from := os.Getenv(envTracesProtocol), envTracesProtocol
	if protocol == "" {
		protocol, from = os.Getenv(envProtocol), envProtocol
	}
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch strings.TrimSpace(protocol) {
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	default:
		return nil, fmt.Errorf("%w: %s=%q: use grpc or http/protobuf", ErrTraceConfig, from, protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot create the OTLP trace exporter: %w", err)
	}
	// The environment's attributes win over the defaults: later detectors
	// override earlier ones.
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(service), semconv.ServiceVersion(version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv())
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("cannot build the trace resource: %w", err)
	}
	return &Traces{tp: sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))}, nil
}

// Tracer returns the tracer of the instrumented package name, nil for a
// nil provider: the components trace nothing then.
func (p *Traces) Tracer(name string) trace.Tracer {
	if p == nil {
		return nil
	}
	return p.tp.Tracer(name)
}

// Shutdown exports the spans ended so far and stops the exporter; nil for
// a nil provider.
func (p *Traces) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	if err := p.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("cannot flush the self-traces: %w", err)
	}
	return nil
}
