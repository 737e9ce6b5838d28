// Package otelschema defines the mcpdrift semantic conventions: the drift
// event names, the attribute names and their enumerations, the typed Event,
// and its decoding and validation from OTLP.
//
// The Registry (registry.go) is the single source of the conventions: the
// decoder, the validation messages and the generated reference
// (CONVENTIONS.md, `go generate ./otelschema`) are all derived from it. Every
// Attr constant below has exactly one Registry entry; a test enforces it.
package otelschema

// EventName is the OTLP LogRecord EventName of a drift event.
type EventName uint8

// Drift event names. The zero value is not an event.
const (
	EventUnspecified   EventName = iota
	EventCall                    // one tools/call, with its drift outcome
	EventListChanged             // a notifications/tools/list_changed, sent or received
	EventRefresh                 // the client re-listed tools
	EventRepair                  // what the client did after a stale rejection
	EventContractError           // an output-shape mismatch stopped a dependent call
	EventAdapter                 // an entry of the server's adapter registry
	EventAdvertised              // a tool definition the server advertises
)

var eventNames = [...]string{
	EventUnspecified:   "",
	EventCall:          "dev.mcpdrift.call",
	EventListChanged:   "dev.mcpdrift.list_changed",
	EventRefresh:       "dev.mcpdrift.refresh",
	EventRepair:        "dev.mcpdrift.repair",
	EventContractError: "dev.mcpdrift.contract_error",
	EventAdapter:       "dev.mcpdrift.adapter",
	EventAdvertised:    "dev.mcpdrift.advertised",
}

// String returns the wire name, such as "dev.mcpdrift.call".
func (e EventName) String() string {
	if int(e) < len(eventNames) {
		return eventNames[e]
	}
	return ""
}

// EventNamePrefix prefixes every drift event name and mcpdrift's own
// attributes: a reverse-DNS namespace that no OpenTelemetry convention
// claims (the conventions reserve mcp.*), the one the _meta keys of
// otelschema/mcpgo already use. Records named under it, or under
// LegacyPrefix, but not listed above are rejected; records under other
// names are ignored.
const EventNamePrefix = "dev.mcpdrift."

// Stored returns the name the store keeps the event under: its name of the
// releases before the move to EventNamePrefix (mcp.drift.call, …). The
// stored data, the report queries and the materialised views name events
// so, whatever name they came in under.
func (e EventName) Stored() string {
	if s := e.String(); s != "" {
		return LegacyPrefix + s[len(EventNamePrefix):]
	}
	return ""
}

// ParseEventName returns the event for a wire name.
func ParseEventName(s string) (EventName, bool) {
	for i := 1; i < len(eventNames); i++ {
		if eventNames[i] == s {
			return EventName(i), true
		}
	}
	return EventUnspecified, false
}

// Attribute names. OpenTelemetry names are reused where a convention defines
// the meaning; ours live under EventNamePrefix, dev.mcpdrift.*. The names of
// earlier releases (mcp.drift.*, mcp.client.*) are still read: see
// LegacyNames.
const (
	// Resource attributes.
	AttrServiceName       = "service.name"
	AttrServiceVersion    = "service.version"
	AttrServiceInstanceID = "service.instance.id"
	AttrServiceNamespace  = "service.namespace"
	AttrEnvironment       = "deployment.environment.name"

	// Fallback event-name attributes for SDKs that cannot set EventName.
	AttrEventName     = "event.name"
	AttrOtelEventName = "otel.event.name"

	// MCP and GenAI semantic conventions.
	AttrToolName        = "gen_ai.tool.name"
	AttrMethodName      = "mcp.method.name"
	AttrRequestID       = "jsonrpc.request.id"
	AttrSessionID       = "mcp.session.id"
	AttrProtocolVersion = "mcp.protocol.version"
	// The client identity: no convention defines it.
	AttrClientName    = "dev.mcpdrift.client.name"
	AttrClientVersion = "dev.mcpdrift.client.version"

	// Revisions: the three states of the seed.
	AttrRevisionClient       = "dev.mcpdrift.revision.client"
	AttrRevisionClientSource = "dev.mcpdrift.revision.client.source"
	AttrRevisionServer       = "dev.mcpdrift.revision.server"
	AttrRevisionValidated    = "dev.mcpdrift.validated.revision"
	AttrRevisionBefore       = "dev.mcpdrift.revision.before"
	AttrRevisionAfter        = "dev.mcpdrift.revision.after"

	// Call outcome.
	AttrOutcome           = "dev.mcpdrift.outcome"
	AttrAdapterID         = "dev.mcpdrift.adapter.id"
	AttrChangeClass       = "dev.mcpdrift.change.class"
	AttrSideEffectStarted = "dev.mcpdrift.side_effect.started"
	AttrExternalRequests  = "dev.mcpdrift.external.requests"
	AttrExternalTarget    = "dev.mcpdrift.external.target"
	AttrErrorCode         = "dev.mcpdrift.error.code"
	AttrRequiredAction    = "dev.mcpdrift.required_action"

	// Retries and repairs.
	AttrRetryOf          = "dev.mcpdrift.retry.of"
	AttrRetryAttempt     = "dev.mcpdrift.retry.attempt"
	AttrRetryAfter       = "dev.mcpdrift.retry.after"
	AttrIdempotencyKey   = "dev.mcpdrift.idempotency_key"
	AttrRepairAction     = "dev.mcpdrift.repair.action"
	AttrRepairAutomatic  = "dev.mcpdrift.repair.automatic"
	AttrRepairResult     = "dev.mcpdrift.repair.result"
	AttrRepairDurationMs = "dev.mcpdrift.repair.duration_ms"

	// Authority and callers.
	AttrApproval    = "dev.mcpdrift.approval"
	AttrPrivilege   = "dev.mcpdrift.privilege"
	AttrRunID       = "dev.mcpdrift.run.id"
	AttrSessionAgeS = "dev.mcpdrift.session.age_s"

	// Refresh and notification.
	AttrRefreshResult     = "dev.mcpdrift.refresh.result"
	AttrNotificationLagMs = "dev.mcpdrift.notification.lag_ms"

	// Adapter registry.
	AttrAdapterRevisionFrom = "dev.mcpdrift.adapter.revision.from"
	AttrAdapterRevisionTo   = "dev.mcpdrift.adapter.revision.to"
	AttrAdapterWindowEnd    = "dev.mcpdrift.adapter.window_end"

	// Output contract.
	AttrContractField = "dev.mcpdrift.contract.field"

	// Advertised definitions.
	AttrToolDefinition = "dev.mcpdrift.tool.definition"
	AttrListTTLMs      = "dev.mcpdrift.list.ttl_ms"
	AttrListCacheScope = "dev.mcpdrift.list.cache_scope"

	// Audit only: redacted at ingest per configuration, never logged.
	AttrArgsRaw        = "dev.mcpdrift.args.raw"
	AttrArgsNormalized = "dev.mcpdrift.args.normalized"
)
