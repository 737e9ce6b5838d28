package otelschema

import (
	"slices"
	"strings"
)

// Type is the value type of an attribute of the conventions, which decides
// the OTLP value types the decoder accepts for it (see Type.Accepts).
type Type uint8

// Attribute value types.
const (
	TypeString    Type = iota + 1 // a UTF-8 string
	TypeInt                       // a 64-bit signed integer
	TypeBool                      // a boolean
	TypeEnum                      // one of a closed list of wire strings
	TypeTimestamp                 // a point in time, kept as Unix seconds
)

var typeNames = [...]string{"", "string", "int", "bool", "enum", "timestamp"}

// String returns the type's name as used in validation messages, such as
// "int".
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return ""
}

// Accepts describes the OTLP value types the decoder accepts for the type
// and how it converts them.
func (t Type) Accepts() string {
	switch t {
	case TypeString:
		return "string; int (formatted in base 10)"
	case TypeInt:
		return "int; string of base-10 digits; double with an integral value — 0 or more: every integer is a count or a duration"
	case TypeBool:
		return `bool; string "true" or "false"`
	case TypeEnum:
		return "string, one of the allowed values"
	case TypeTimestamp:
		return "string in RFC 3339; int of Unix seconds"
	}
	return ""
}

// Attribute describes one attribute of the conventions. The decoder, its
// validation messages and CONVENTIONS.md are all derived from the Registry
// of these.
type Attribute struct {
	// Name is the attribute key, one of the Attr* constants.
	Name string
	// Type is the value type.
	Type Type
	// Values lists the accepted wire values of an enum, in the order of its
	// Go constants; nil for other types.
	Values []string
	// Events lists the events the attribute is meant for. It documents the
	// conventions: the decoder accepts any attribute on any drift event.
	Events []EventName
	// Required lists the events that are rejected without the attribute (or
	// with an empty value).
	Required []EventName
	// Resource is true for resource attributes: they are read from the OTLP
	// resource only, and the same key on a record is kept in
	// Event.Attributes without overriding the resource.
	Resource bool
	// Doc describes the attribute in one or two sentences.
	Doc string

	// set writes a decoded value into its Event field; nil for attributes
	// that have no field (the fallback event-name attributes).
	set func(e *Event, v decoded)
	// present reports whether the Event field is set (for Required).
	present func(e *Event) bool
	// get returns the Event field's value (for tests and tools).
	get func(e *Event) any
	// args is true for the attributes limited by MaxArgsBytes rather than
	// MaxValueBytes (maxArgs).
	args bool
	// def is true for the attribute limited by MaxDefinitionBytes.
	def bool
}

// decoded is one attribute value after type conversion: s for strings, i for
// ints, enums (the constant) and timestamps (Unix seconds), b for bools.
type decoded struct {
	s string
	i int64
	b bool
}

// RequiredOn reports whether events named e are rejected without the
// attribute.
func (a *Attribute) RequiredOn(e EventName) bool { return slices.Contains(a.Required, e) }

// AppliesTo reports whether the attribute is meant for events named e.
func (a *Attribute) AppliesTo(e EventName) bool { return slices.Contains(a.Events, e) }

// Field constructors: each binds an attribute to one Event field and fixes
// its Type, so a table entry cannot pair a type with the wrong field kind.

func strAttr(name string, field func(*Event) *string, doc string) Attribute {
	return Attribute{
		Name: name, Type: TypeString, Doc: doc,
		set:     func(e *Event, v decoded) { *field(e) = v.s },
		present: func(e *Event) bool { return *field(e) != "" },
		get:     func(e *Event) any { return *field(e) },
	}
}

func intAttr(name string, field func(*Event) *int64, doc string) Attribute {
	return Attribute{
		Name: name, Type: TypeInt, Doc: doc,
		set:     func(e *Event, v decoded) { *field(e) = v.i },
		present: func(e *Event) bool { return *field(e) != 0 },
		get:     func(e *Event) any { return *field(e) },
	}
}

func boolAttr(name string, field func(*Event) *bool, doc string) Attribute {
	return Attribute{
		Name: name, Type: TypeBool, Doc: doc,
		set:     func(e *Event, v decoded) { *field(e) = v.b },
		present: func(e *Event) bool { return *field(e) },
		get:     func(e *Event) any { return *field(e) },
	}
}

func timeAttr(name string, field func(*Event) *int64, doc string) Attribute {
	a := intAttr(name, field, doc)
	a.Type = TypeTimestamp
	return a
}

// enumAttr binds an enum attribute; names is the enum's wire-name table,
// whose index 0 is the unset value.
func enumAttr[T ~uint8](name string, names []string, field func(*Event) *T, doc string) Attribute {
	return Attribute{
		Name: name, Type: TypeEnum, Values: names[1:], Doc: doc,
		set:     func(e *Event, v decoded) { *field(e) = T(v.i) },
		present: func(e *Event) bool { return *field(e) != 0 },
		get:     func(e *Event) any { return *field(e) },
	}
}

func nameAttr(name, doc string) Attribute {
	return Attribute{Name: name, Type: TypeString, Doc: doc}
}

func (a Attribute) on(events ...EventName) Attribute { a.Events = events; return a }

func (a Attribute) required(events ...EventName) Attribute { a.Required = events; return a }

func (a Attribute) resource() Attribute { a.Resource = true; return a }

// Event groups used by the table.
var (
	allEvents     = []EventName{EventCall, EventListChanged, EventRefresh, EventRepair, EventContractError, EventAdapter, EventAdvertised}
	clientEvents  = []EventName{EventCall, EventListChanged, EventRefresh, EventRepair, EventContractError}
	perToolEvents = []EventName{EventCall, EventRefresh, EventRepair, EventContractError, EventAdapter, EventAdvertised}
)

// registry is the single source of the conventions' attributes, in the
// order of the reference document.
var registry = [...]Attribute{
	// Resource.
	strAttr(AttrServiceName, func(e *Event) *string { return &e.Service },
		"The logical name of the MCP server or client (the OpenTelemetry `service.name`).").on(allEvents...).resource(),
	strAttr(AttrServiceVersion, func(e *Event) *string { return &e.ServiceVersion },
		"The build of the handler that emitted the event.").on(allEvents...).resource(),
	strAttr(AttrServiceInstanceID, func(e *Event) *string { return &e.ServiceInstance },
		"The process instance, unique within the service.").on(allEvents...).resource(),
	strAttr(AttrServiceNamespace, func(e *Event) *string { return &e.ServiceNamespace },
		"The namespace the service belongs to.").on(allEvents...).resource(),
	strAttr(AttrEnvironment, func(e *Event) *string { return &e.Environment },
		"The deployment environment, such as `production`.").on(allEvents...).resource(),

	// Event-name fallbacks.
	nameAttr(AttrEventName,
		"The event name, for SDKs that cannot set the LogRecord EventName field (deprecated OpenTelemetry attribute); read only when EventName is empty.").on(allEvents...),
	nameAttr(AttrOtelEventName,
		"The event name, read only when neither EventName nor `event.name` is set.").on(allEvents...),

	// MCP and GenAI semantic conventions.
	strAttr(AttrToolName, func(e *Event) *string { return &e.Tool },
		"The MCP tool name.").on(perToolEvents...).required(EventCall, EventAdapter, EventAdvertised),
	strAttr(AttrMethodName, func(e *Event) *string { return &e.Method },
		"The MCP method, such as `tools/call`.").on(EventCall, EventListChanged, EventRefresh),
	strAttr(AttrRequestID, func(e *Event) *string { return &e.RequestID },
		"The JSON-RPC request id; an integer id is kept in base 10.").on(EventCall, EventRefresh, EventRepair, EventContractError),
	strAttr(AttrSessionID, func(e *Event) *string { return &e.SessionID },
		"The MCP session id (protocols with sessions).").on(clientEvents...),
	strAttr(AttrProtocolVersion, func(e *Event) *string { return &e.ProtocolVersion },
		"The negotiated MCP protocol version, such as `2025-06-18`.").on(EventCall, EventListChanged, EventRefresh),
	strAttr(AttrClientName, func(e *Event) *string { return &e.ClientName },
		"The client name from `initialize.clientInfo` or the `io.modelcontextprotocol/clientInfo` `_meta` key.").on(clientEvents...),
	strAttr(AttrClientVersion, func(e *Event) *string { return &e.ClientVersion },
		"The client version, from the same source as `dev.mcpdrift.client.name`.").on(clientEvents...),

	// Revisions.
	strAttr(AttrRevisionClient, func(e *Event) *string { return &e.RevisionClient },
		"The revision of the tool in the client snapshot: the one the client planned with. Absent when it is unknown: never read as the current revision.").on(EventCall, EventRepair, EventContractError),
	enumAttr(AttrRevisionClientSource, revisionSourceNames, func(e *Event) *RevisionSource { return &e.RevisionClientSource },
		"Where `dev.mcpdrift.revision.client` came from: `declared` by the client in the call's `_meta`; `listed`, the revision this server last listed to the session; `inferred` from the arguments, valid under that revision only among those the server knows. Absent with a client revision: the emitter did not say, read as `declared`; absent without one: unknown.").on(EventCall, EventContractError),
	strAttr(AttrRevisionServer, func(e *Event) *string { return &e.RevisionServer },
		"The revision of the execution contract that ran the call (after a list_changed: the newly advertised revision; on an advertised event: the revision the definition is advertised as).").on(EventCall, EventListChanged, EventContractError, EventAdvertised).required(EventAdvertised),
	strAttr(AttrRevisionValidated, func(e *Event) *string { return &e.RevisionValidated },
		"The revision the call was validated under, when it differs from the one it executed under (a mixed-revision call).").on(EventCall),
	strAttr(AttrRevisionBefore, func(e *Event) *string { return &e.RevisionBefore },
		"The revision the client held before a refresh or notification.").on(EventListChanged, EventRefresh),
	strAttr(AttrRevisionAfter, func(e *Event) *string { return &e.RevisionAfter },
		"The revision the client holds after a refresh or notification.").on(EventListChanged, EventRefresh),

	// Call outcome.
	enumAttr(AttrOutcome, outcomeNames, func(e *Event) *Outcome { return &e.Outcome },
		"The drift outcome of the call. `current` means it ran unadapted under `dev.mcpdrift.revision.server`; it says the client planned with that revision only when `dev.mcpdrift.revision.client` does.").on(EventCall).required(EventCall),
	strAttr(AttrAdapterID, func(e *Event) *string { return &e.AdapterID },
		"The compatibility adapter that normalised the call, or the adapter an adapter event describes.").on(EventCall, EventAdapter).required(EventAdapter),
	enumAttr(AttrChangeClass, changeClassNames, func(e *Event) *ChangeClass { return &e.ChangeClass },
		"The class of the contract change between the client's and the server's revision; on a retry planned after the change, between the revision of the call it retries and the server's.").on(EventCall, EventRepair, EventAdapter),
	boolAttr(AttrSideEffectStarted, func(e *Event) *bool { return &e.SideEffectStarted },
		"Whether a side effect had started before the call was rejected or failed.").on(EventCall),
	intAttr(AttrExternalRequests, func(e *Event) *int64 { return &e.ExternalRequests },
		"How many requests the call made to external systems.").on(EventCall),
	strAttr(AttrExternalTarget, func(e *Event) *string { return &e.ExternalTarget },
		"The external system the call acted on.").on(EventCall),
	strAttr(AttrErrorCode, func(e *Event) *string { return &e.ErrorCode },
		"The error code returned, such as `STALE_TOOL_SCHEMA`.").on(EventCall, EventRefresh, EventRepair, EventContractError),
	strAttr(AttrRequiredAction, func(e *Event) *string { return &e.RequiredAction },
		"The action the error asks of the client, such as `refresh_tools`.").on(EventCall, EventRepair),

	// Retries and repairs.
	strAttr(AttrRetryOf, func(e *Event) *string { return &e.RetryOf },
		"The JSON-RPC request id of the call this one retries; on a repair, of the rejected call.").on(EventCall, EventRepair),
	intAttr(AttrRetryAttempt, func(e *Event) *int64 { return &e.RetryAttempt },
		"The retry attempt, 1 for the first retry.").on(EventCall, EventRepair),
	enumAttr(AttrRetryAfter, outcomeNames, func(e *Event) *Outcome { return &e.RetryAfter },
		"On a call that retries another (`dev.mcpdrift.retry.of`), the outcome of the call it retries, as the client saw it: `rejected_stale`, `rejected_incompatible`, `rejected_invalid` or `removed` after a rejection (absent when the client did not say).").on(EventCall),
	strAttr(AttrIdempotencyKey, func(e *Event) *string { return &e.IdempotencyKey },
		"The idempotency key the client sent with the call.").on(EventCall, EventRepair),
	enumAttr(AttrRepairAction, repairActionNames, func(e *Event) *RepairAction { return &e.RepairAction },
		"What the client did after a stale rejection.").on(EventRepair).required(EventRepair),
	boolAttr(AttrRepairAutomatic, func(e *Event) *bool { return &e.RepairAutomatic },
		"Whether the repair ran without a person; on a call that retries another (`dev.mcpdrift.retry.of`), whether the retry was decided without a person, as the client said (absent when it did not).").on(EventRepair, EventCall),
	enumAttr(AttrRepairResult, repairResultNames, func(e *Event) *RepairResult { return &e.RepairResult },
		"The result of the repair.").on(EventRepair),
	intAttr(AttrRepairDurationMs, func(e *Event) *int64 { return &e.RepairDurationMs },
		"Milliseconds from the stale rejection to the end of the repair.").on(EventRepair),

	// Authority and callers.
	enumAttr(AttrApproval, approvalNames, func(e *Event) *Approval { return &e.Approval },
		"The approval decision the call ran under.").on(EventCall, EventRepair),
	enumAttr(AttrPrivilege, privilegeNames, func(e *Event) *Privilege { return &e.Privilege },
		"The highest privilege the call needs.").on(EventCall, EventAdapter),
	strAttr(AttrRunID, func(e *Event) *string { return &e.RunID },
		"The agent run (the seed's Activity); the session key of protocols without sessions.").on(clientEvents...),
	intAttr(AttrSessionAgeS, func(e *Event) *int64 { return &e.SessionAgeS },
		"Seconds since the session (or run) started.").on(EventCall, EventRefresh, EventRepair),

	// Refresh and notification.
	enumAttr(AttrRefreshResult, refreshResultNames, func(e *Event) *RefreshResult { return &e.RefreshResult },
		"The result of the tools/list refresh.").on(EventRefresh),
	intAttr(AttrNotificationLagMs, func(e *Event) *int64 { return &e.NotificationLagMs },
		"Milliseconds between the list_changed notification and this event.").on(EventListChanged, EventRefresh),

	// Adapter registry.
	strAttr(AttrAdapterRevisionFrom, func(e *Event) *string { return &e.AdapterRevisionFrom },
		"The old revision the adapter accepts.").on(EventAdapter),
	strAttr(AttrAdapterRevisionTo, func(e *Event) *string { return &e.AdapterRevisionTo },
		"The revision the adapter normalises to.").on(EventAdapter),
	timeAttr(AttrAdapterWindowEnd, func(e *Event) *int64 { return &e.AdapterWindowEnd },
		"The declared end of the adapter's compatibility window.").on(EventAdapter),

	// Output contract.
	strAttr(AttrContractField, func(e *Event) *string { return &e.ContractField },
		"The output field whose shape did not match what the dependent call expected.").on(EventContractError),

	// Advertised definitions.
	strAttr(AttrToolDefinition, func(e *Event) *string { return &e.Definition },
		"The tool definition as `tools/list` advertises it: a JSON object with `name` (equal to `gen_ai.tool.name`) and, when the tool has them, `title`, `description`, `inputSchema`, `outputSchema` and `annotations`; `_meta` and `icons` are left out by the emitters. Limited by MaxDefinitionBytes; a value that is not such an object rejects the record. Stored once per tenant, service, environment, tool and revision; never redacted: a definition is what every client may list.").on(EventAdvertised).required(EventAdvertised),

	intAttr(AttrListTTLMs, func(e *Event) *int64 { return &e.ListTTLMs },
		"The `ttlMs` of the `tools/list` result the tool was advertised in (MCP 2026-07-28, SEP-2549): how many milliseconds a client may keep that list without listing again. Absent when the result carries none. The propagation report and the release check read the longest one a revision was advertised with: how long a client may keep the old list after a change.").on(EventAdvertised),
	strAttr(AttrListCacheScope, func(e *Event) *string { return &e.ListCacheScope },
		"The `cacheScope` of the same result, as the server sent it (such as `shared` or `session`). Absent when the result carries none.").on(EventAdvertised),

	// Audit.
	strAttr(AttrArgsRaw, func(e *Event) *string { return &e.ArgsRaw },
		"The call's arguments as received, JSON (audit only; redacted at ingest per configuration, never logged; limited by MaxArgsBytes).").on(EventCall),
	strAttr(AttrArgsNormalized, func(e *Event) *string { return &e.ArgsNormalized },
		"The call's arguments after normalisation, JSON (audit only, as `dev.mcpdrift.args.raw`).").on(EventCall),
}

// EventSpec describes one drift event of the conventions.
type EventSpec struct {
	// Name is the event.
	Name EventName
	// EmittedBy tells which side emits it.
	EmittedBy string
	// Doc describes the event.
	Doc string
}

// eventSpecs describes the events, indexed by EventName.
var eventSpecs = [...]EventSpec{
	{EventCall, "server (authoritative) or client", "One `tools/call`, with its drift outcome."},
	{EventListChanged, "server (sent) or client (received)", "A `notifications/tools/list_changed`."},
	{EventRefresh, "client", "The client re-listed tools: revisions before and after, ok or failed."},
	{EventRepair, "client", "What the client did after a stale rejection."},
	{EventContractError, "client", "An output-shape mismatch stopped a dependent call."},
	{EventAdapter, "server, at start and on change", "An entry of the adapter registry: id, tool, from/to revision, change class, window end."},
	{EventAdvertised, "server, at start, on change and periodically", "One tool of the advertised list: its revision and its definition, the registry of advertised definitions."},
}

// Derived lookups, built once from the tables above.
var (
	// attrByName maps an attribute name to its registry entry.
	attrByName map[string]*Attribute
	// requiredBy lists, per event, the attributes it requires.
	requiredBy [len(eventNames)][]*Attribute
	// maxArgs marks the attributes limited by MaxArgsBytes.
	maxArgs = map[string]bool{AttrArgsRaw: true, AttrArgsNormalized: true}
)

func init() {
	attrByName = make(map[string]*Attribute, len(registry))
	for i := range registry {
		a := &registry[i]
		if _, dup := attrByName[a.Name]; dup {
			panic("otelschema: duplicate attribute " + a.Name)
		}
		attrByName[a.Name] = a
		a.args = maxArgs[a.Name]
		a.def = a.Name == AttrToolDefinition
		for _, e := range a.Required {
			requiredBy[e] = append(requiredBy[e], a)
		}
	}
	for i, s := range eventSpecs {
		if s.Name != EventName(i+1) {
			panic("otelschema: eventSpecs out of order at " + s.Name.String())
		}
	}
}

// Registry returns the attributes of the conventions, in document order. The
// slice is a copy; its entries share their Values, Events and Required
// slices with the package and must not be modified.
func Registry() []Attribute { return slices.Clone(registry[:]) }

// Lookup returns the registry entry of the attribute called name.
func Lookup(name string) (Attribute, bool) {
	if a, ok := attrByName[name]; ok {
		return *a, true
	}
	return Attribute{}, false
}

// Events returns the drift events of the conventions, in EventName order.
func Events() []EventSpec { return slices.Clone(eventSpecs[:]) }

// RequiredAttributes returns the names of the attributes that events named e
// must carry.
func RequiredAttributes(e EventName) []string {
	if int(e) >= len(requiredBy) {
		return nil
	}
	names := make([]string, len(requiredBy[e]))
	for i, a := range requiredBy[e] {
		names[i] = a.Name
	}
	return names
}

// valuesList returns an enum's allowed values as "a, b, c".
func (a *Attribute) valuesList() string { return strings.Join(a.Values, ", ") }
