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
)

var eventNames = [...]string{
	EventUnspecified:   "",
	EventCall:          "mcp.drift.call",
	EventListChanged:   "mcp.drift.list_changed",
	EventRefresh:       "mcp.drift.refresh",
	EventRepair:        "mcp.drift.repair",
	EventContractError: "mcp.drift.contract_error",
	EventAdapter:       "mcp.drift.adapter",
}

// String returns the wire name, such as "mcp.drift.call".
func (e EventName) String() string {
	if int(e) < len(eventNames) {
		return eventNames[e]
	}
	return ""
}

// EventNamePrefix prefixes every drift event name. Records named under it but
// not listed above are rejected; records under other names are ignored.
const EventNamePrefix = "mcp.drift."

// ParseEventName returns the event for a wire name.
func ParseEventName(s string) (EventName, bool) {
	for i := 1; i < len(eventNames); i++ {
		if eventNames[i] == s {
			return EventName(i), true
		}
	}
	return EventUnspecified, false
}

// Attribute names. OpenTelemetry names are reused where they exist; ours live
// under mcp.drift.*.
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
	AttrClientName      = "mcp.client.name"
	AttrClientVersion   = "mcp.client.version"

	// Revisions: the three states of the seed.
	AttrRevisionClient       = "mcp.drift.revision.client"
	AttrRevisionClientSource = "mcp.drift.revision.client.source"
	AttrRevisionServer       = "mcp.drift.revision.server"
	AttrRevisionValidated    = "mcp.drift.validated.revision"
	AttrRevisionBefore       = "mcp.drift.revision.before"
	AttrRevisionAfter        = "mcp.drift.revision.after"

	// Call outcome.
	AttrOutcome           = "mcp.drift.outcome"
	AttrAdapterID         = "mcp.drift.adapter.id"
	AttrChangeClass       = "mcp.drift.change.class"
	AttrSideEffectStarted = "mcp.drift.side_effect.started"
	AttrExternalRequests  = "mcp.drift.external.requests"
	AttrExternalTarget    = "mcp.drift.external.target"
	AttrErrorCode         = "mcp.drift.error.code"
	AttrRequiredAction    = "mcp.drift.required_action"

	// Retries and repairs.
	AttrRetryOf          = "mcp.drift.retry.of"
	AttrRetryAttempt     = "mcp.drift.retry.attempt"
	AttrRetryAfter       = "mcp.drift.retry.after"
	AttrIdempotencyKey   = "mcp.drift.idempotency_key"
	AttrRepairAction     = "mcp.drift.repair.action"
	AttrRepairAutomatic  = "mcp.drift.repair.automatic"
	AttrRepairResult     = "mcp.drift.repair.result"
	AttrRepairDurationMs = "mcp.drift.repair.duration_ms"

	// Authority and callers.
	AttrApproval    = "mcp.drift.approval"
	AttrPrivilege   = "mcp.drift.privilege"
	AttrRunID       = "mcp.drift.run.id"
	AttrSessionAgeS = "mcp.drift.session.age_s"

	// Refresh and notification.
	AttrRefreshResult     = "mcp.drift.refresh.result"
	AttrNotificationLagMs = "mcp.drift.notification.lag_ms"

	// Adapter registry.
	AttrAdapterRevisionFrom = "mcp.drift.adapter.revision.from"
	AttrAdapterRevisionTo   = "mcp.drift.adapter.revision.to"
	AttrAdapterWindowEnd    = "mcp.drift.adapter.window_end"

	// Output contract.
	AttrContractField = "mcp.drift.contract.field"

	// Audit only: redacted at ingest per configuration, never logged.
	AttrArgsRaw        = "mcp.drift.args.raw"
	AttrArgsNormalized = "mcp.drift.args.normalized"
)
