package otelschema

// Event is one validated drift event: a log record or span decoded into the
// conventions' typed fields. Attributes outside the conventions are kept in
// Attributes as strings.
type Event struct {
	// ID is a deterministic 64-bit identity: the xxhash64 of the event's
	// name, time, trace and span ids, service, service instance, session,
	// run, request id, tool, retry attempt, outcome, repair action, adapter
	// id and the record's string body (see eventID for the exact encoding).
	// The same record sent twice gets the same ID, so stored counts can be
	// made idempotent; a record with neither timestamp is timed on receipt
	// but identified as if its time were zero, so its retries keep one ID.
	ID   uint64
	Name EventName
	// Time is the event time in Unix nanoseconds: the record's timestamp,
	// else its observed timestamp, else the time it was received.
	Time    int64
	TraceID [16]byte
	SpanID  [8]byte

	// Resource.
	Service          string
	ServiceVersion   string // the handler build
	ServiceInstance  string
	ServiceNamespace string
	Environment      string

	// MCP.
	Tool            string
	Method          string
	RequestID       string
	SessionID       string
	ProtocolVersion string
	ClientName      string
	ClientVersion   string

	// Revisions.
	RevisionClient string
	// RevisionClientSource says where RevisionClient came from.
	RevisionClientSource RevisionSource
	RevisionServer       string
	RevisionValidated    string
	RevisionBefore       string
	RevisionAfter        string

	// Outcome.
	Outcome           Outcome
	AdapterID         string
	ChangeClass       ChangeClass
	SideEffectStarted bool
	ExternalRequests  int64
	ExternalTarget    string
	ErrorCode         string
	RequiredAction    string

	// Retries and repairs.
	RetryOf          string
	RetryAttempt     int64
	RetryAfter       Outcome
	IdempotencyKey   string
	RepairAction     RepairAction
	RepairAutomatic  bool
	RepairResult     RepairResult
	RepairDurationMs int64

	// Authority and callers.
	Approval    Approval
	Privilege   Privilege
	RunID       string
	SessionAgeS int64

	// Refresh and notification.
	RefreshResult     RefreshResult
	NotificationLagMs int64

	// Adapter registry.
	AdapterRevisionFrom string
	AdapterRevisionTo   string
	// AdapterWindowEnd is the declared end of the adapter's compatibility
	// window in Unix seconds, 0 when none was declared.
	AdapterWindowEnd int64

	// Output contract.
	ContractField string

	// Definition is an advertised event's tool definition: a JSON object
	// with the tool's name, checked by the decoder (checkDefinition).
	Definition string
	// ListTTLMs and ListCacheScope are the cache hint of the tools/list
	// result the advertised tool was listed in (ttlMs and cacheScope, MCP
	// 2026-07-28, SEP-2549): how many milliseconds a client may keep the
	// list without listing again, and for whom. 0 and "" when the result
	// had none; a ttlMs of 0 (keep nothing) reads the same.
	ListTTLMs      int64
	ListCacheScope string

	// Audit.
	ArgsRaw        string
	ArgsNormalized string

	// ClientView marks a call seen only from the client's side (a CLIENT
	// span); the span decoder sets it.
	ClientView ClientView

	// Attributes holds the record's other attributes, flattened to strings.
	Attributes map[string]string
}
