// Package selftrace is the traces mcpdrift's binaries export of their own
// work: an OpenTelemetry tracer provider configured by the standard OTLP
// exporter environment variables, off unless they ask for it, and the
// attribute keys of mcpdrift's spans.
//
// The spans are per request and per batch, never per event: an ingest
// request (server kind) is the parent of the batch that holds the first of
// its events — a batch gathers several requests' events, and links to the
// other requests — and the batch is the parent of its store insert; a
// report request is the parent of its report query.
package selftrace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of mcpdrift's spans. None holds an argument value, a
// token or an event's content.
const (
	// KeyReport is the report a request asked for (stale-usage).
	KeyReport = attribute.Key("mcpdrift.report")
	// KeyQuery is the report query run (stale_usage, its .sql file).
	KeyQuery = attribute.Key("mcpdrift.report.query")
	// KeyTiers lists the rollup tiers a report query reads (minute, hour,
	// day); absent for a query of the events or of a narrow table.
	KeyTiers = attribute.Key("mcpdrift.report.tiers")
	// KeyRows is how many rows a report query returned, or a store insert
	// wrote.
	KeyRows = attribute.Key("mcpdrift.rows")
	// KeyBackend is the store backend: embedded (chDB in the process) or
	// server (a ClickHouse server or cluster).
	KeyBackend = attribute.Key("mcpdrift.store.backend")
	// KeySignal is the OTLP signal of an ingest request: logs or traces.
	KeySignal = attribute.Key("mcpdrift.ingest.signal")
	// KeyAccepted, KeyRejected and KeyIgnored count what became of an
	// ingest request's records or spans.
	KeyAccepted = attribute.Key("mcpdrift.ingest.accepted")
	KeyRejected = attribute.Key("mcpdrift.ingest.rejected")
	KeyIgnored  = attribute.Key("mcpdrift.ingest.ignored")
	// KeyEvents and KeyParts are a batch's events and parts (a part is one
	// request's events, or a chunk of them).
	KeyEvents = attribute.Key("mcpdrift.batch.events")
	KeyParts  = attribute.Key("mcpdrift.batch.parts")
	// KeySpooled says that a batch was appended to the spool.
	KeySpooled = attribute.Key("mcpdrift.batch.spooled")
	// KeyReplay says that a store insert writes spooled records, outside
	// any request.
	KeyReplay = attribute.Key("mcpdrift.insert.replay")
)

// Backends of KeyBackend.
const (
	BackendEmbedded = "embedded"
	BackendServer   = "server"
)

// StoreAttributes are the attributes of every span of a store operation
// on backend (BackendEmbedded or BackendServer): both are ClickHouse.
func StoreAttributes(backend string) []attribute.KeyValue {
	return []attribute.KeyValue{semconv.DBSystemNameClickHouse, KeyBackend.String(backend)}
}

// Provider is a tracer provider exporting over OTLP.
type Provider struct {
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

// ErrConfig is wrapped by the errors of an unusable configuration.
var ErrConfig = errors.New("invalid trace export configuration")

// FromEnv returns a provider configured by the OTLP exporter environment
// variables, or nil — no exporter, no goroutine — unless they ask for
// traces: OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// is set, or OTEL_TRACES_EXPORTER is otlp; and neither OTEL_SDK_DISABLED
// is true nor OTEL_TRACES_EXPORTER none. The protocol is
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL: grpc
// or http/protobuf (the default). service names the binary unless
// OTEL_SERVICE_NAME does; version is its service.version.
func FromEnv(ctx context.Context, service, version string) (*Provider, error) {
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
		return nil, fmt.Errorf("%w: %s=%q: mcpdrift exports traces with otlp only (or none)", ErrConfig, envExporter, exp)
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
		return nil, fmt.Errorf("%w: %s=%q: use grpc or http/protobuf", ErrConfig, from, protocol)
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
	return &Provider{tp: sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))}, nil
}

// Tracer returns the tracer of the instrumented package name, nil for a
// nil provider: the components trace nothing then.
func (p *Provider) Tracer(name string) trace.Tracer {
	if p == nil {
		return nil
	}
	return p.tp.Tracer(name)
}

// Shutdown exports the spans ended so far and stops the exporter; nil for
// a nil provider.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	if err := p.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("cannot flush the self-traces: %w", err)
	}
	return nil
}
