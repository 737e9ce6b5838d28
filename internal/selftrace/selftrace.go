// Package selftrace names what the traces mcpdrift's binaries export of
// their own work carry: the attribute keys of its spans and the store
// backends. It depends on the OpenTelemetry API only; internal/app builds
// the exporter (TracesFromEnv), off unless the environment asks for it.
//
// The spans are per request and per batch, never per event: an ingest
// request (server kind) is the parent of the batch that holds the first of
// its events — a batch gathers several requests' events, and links to the
// other requests — and the batch is the parent of its store insert; a
// report request is the parent of its report query.
package selftrace

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
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
