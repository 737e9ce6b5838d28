package apiv1

import "time"

// The rows of the report endpoints, in the order the OpenAPI document lists
// them. The queries package fills them; the reports' SQL names its columns
// after their JSON fields.

// ToolRow is one tool seen in the window.
type ToolRow struct {
	Tool            string    `json:"tool"`
	ClientRevisions []string  `json:"client_revisions"`
	ServerRevisions []string  `json:"server_revisions"`
	Adapters        []string  `json:"adapters"`
	Calls           uint64    `json:"calls"`
	FirstSeen       time.Time `json:"first_seen"`
	LastSeen        time.Time `json:"last_seen"`
}

// StaleUsageRow is the use of one tool by clients planning with one revision
// while the server executed another (or the same: stale says which).
type StaleUsageRow struct {
	Tool           string `json:"tool"`
	RevisionClient string `json:"revision_client"`
	RevisionServer string `json:"revision_server"`
	// Stale is true when the client planned with a revision other than the
	// one that executed; null when the client revision is unknown (the
	// row of calls that did not say it), which is never taken for not
	// stale. Two names of one contract are not stale: a v1 digest planned
	// against a SEP-2636 tool digest of the same definition, with no change
	// between them (queries.RevisionChange.SameContract).
	Stale *bool `json:"stale"`
	// Calls counts every call; the next five split it by outcome (Rejected
	// sums the three rejected_* outcomes).
	Calls      uint64 `json:"calls"`
	Current    uint64 `json:"current"`
	Normalized uint64 `json:"normalized"`
	Rejected   uint64 `json:"rejected"`
	Removed    uint64 `json:"removed"`
	Failed     uint64 `json:"failed"`
	// Sessions and Runs are distinct session keys (the session id, else the
	// run id) and run ids; Clients distinct name@version pairs.
	Sessions  uint64    `json:"sessions"`
	Runs      uint64    `json:"runs"`
	Clients   uint64    `json:"clients"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	// CallsPrevious counts the calls of the equal period before the
	// window, [PreviousFrom, from), under the same filter; Trend compares
	// Calls with it (new, rising, falling or flat: queries.TrendNew and
	// its like), and is null when the store does not hold the whole
	// previous period (its first stored call is later than PreviousFrom:
	// a fresh store, or data past the retention).
	CallsPrevious uint64    `json:"calls_previous"`
	PreviousFrom  time.Time `json:"previous_from"`
	Trend         *string   `json:"trend"`
	// ChangeClass and Change are the change from RevisionClient to
	// RevisionServer in the registry of advertised definitions: its class
	// ("" when the definitions do not differ) and the change in one line
	// (see queries.RevisionChange); both null when either revision is
	// unknown to the registry (see queries.WithChanges).
	ChangeClass *string `json:"change_class"`
	Change      *string `json:"change"`
}

// RejectionRow counts the rejected calls of one tool, revision pair,
// outcome, error code and client.
type RejectionRow struct {
	Tool           string `json:"tool"`
	RevisionClient string `json:"revision_client"`
	RevisionServer string `json:"revision_server"`
	// Outcome is rejected_stale, rejected_incompatible or rejected_invalid.
	Outcome       string `json:"outcome"`
	ErrorCode     string `json:"error_code"`
	ClientName    string `json:"client_name"`
	ClientVersion string `json:"client_version"`
	Rejected      uint64 `json:"rejected"`
	// ToolCalls is every call of the tool in the window under the same
	// filter, and RejectionRate is Rejected / ToolCalls.
	ToolCalls     uint64  `json:"tool_calls"`
	RejectionRate float64 `json:"rejection_rate"`
	// SideEffectViolations counts the rejected calls whose side effect had
	// already started: each is a safety violation (see ViolationRow).
	SideEffectViolations uint64    `json:"side_effect_violations"`
	Sessions             uint64    `json:"sessions"`
	FirstSeen            time.Time `json:"first_seen"`
	LastSeen             time.Time `json:"last_seen"`
	// ChangeClass and Change are the change from RevisionClient to
	// RevisionServer, as in StaleUsageRow.
	ChangeClass *string `json:"change_class"`
	Change      *string `json:"change"`
}

// RepairRow is what happened after the stale rejections of one tool.
type RepairRow struct {
	Tool string `json:"tool"`
	// StaleRejections counts the calls rejected_stale, Rejections the
	// calls rejected of any kind (stale, incompatible, invalid, and calls
	// to a removed tool); RetryCalls the calls that retried another
	// (dev.mcpdrift.retry.of set); Amplification is RetryCalls / Rejections,
	// nil when there is no rejection.
	StaleRejections uint64   `json:"stale_rejections"`
	Rejections      uint64   `json:"rejections"`
	RetryCalls      uint64   `json:"retry_calls"`
	Amplification   *float64 `json:"amplification"`
	// By the kind of the rejection: the calls rejected_incompatible,
	// rejected_invalid and removed, the retry calls that followed a
	// rejection of each kind (dev.mcpdrift.retry.after, as the client stated
	// it; RetriesAfterOther those that stated none, or followed no
	// rejection), and each kind's amplification, its retries per rejected
	// call of that kind, nil when there is none of that kind. The
	// RetriesAfter* sum to RetryCalls.
	IncompatibleRejections    uint64   `json:"incompatible_rejections"`
	InvalidRejections         uint64   `json:"invalid_rejections"`
	RemovedCalls              uint64   `json:"removed_calls"`
	RetriesAfterStale         uint64   `json:"retries_after_stale"`
	RetriesAfterIncompatible  uint64   `json:"retries_after_incompatible"`
	RetriesAfterInvalid       uint64   `json:"retries_after_invalid"`
	RetriesAfterRemoved       uint64   `json:"retries_after_removed"`
	RetriesAfterOther         uint64   `json:"retries_after_other"`
	AmplificationStale        *float64 `json:"amplification_stale"`
	AmplificationIncompatible *float64 `json:"amplification_incompatible"`
	AmplificationInvalid      *float64 `json:"amplification_invalid"`
	AmplificationRemoved      *float64 `json:"amplification_removed"`
	// Repair events by action.
	RefreshRetries uint64 `json:"refresh_retries"`
	ModelRepairs   uint64 `json:"model_repairs"`
	HumanApprovals uint64 `json:"human_approvals"`
	// HumanApprovalsDenied counts the human_approval repairs that failed.
	HumanApprovalsDenied uint64 `json:"human_approvals_denied"`
	Abandons             uint64 `json:"abandons"`
	// AutomaticRepairs counts the automatic refresh_retry and model_repair
	// events; AutomaticSuccessRate is AutomaticSucceeded /
	// (AutomaticSucceeded + AutomaticFailed), nil when both are 0.
	AutomaticRepairs     uint64   `json:"automatic_repairs"`
	AutomaticSucceeded   uint64   `json:"automatic_succeeded"`
	AutomaticFailed      uint64   `json:"automatic_failed"`
	AutomaticSuccessRate *float64 `json:"automatic_success_rate"`
	// AutomaticRepairP50Ms and AutomaticRepairP95Ms are the time to repair
	// of the successful automatic repairs that report a duration, and
	// HumanRepairP50Ms and HumanRepairP95Ms that of the other successful
	// repairs, which waited on a person (t-digest, approximate); nil when
	// none.
	AutomaticRepairP50Ms *float64 `json:"automatic_repair_p50_ms"`
	AutomaticRepairP95Ms *float64 `json:"automatic_repair_p95_ms"`
	HumanRepairP50Ms     *float64 `json:"human_repair_p50_ms"`
	HumanRepairP95Ms     *float64 `json:"human_repair_p95_ms"`
}

// PropagationRow is how one tool's list_changed notifications reached the
// sessions notified in the window.
type PropagationRow struct {
	// Tool is the notified tool; "" for notifications that name none.
	Tool string `json:"tool"`
	// NotifiedSessions counts the sessions notified; RefreshedSessions
	// those that refreshed afterwards, NeverRefreshed the others.
	NotifiedSessions  uint64 `json:"notified_sessions"`
	RefreshedSessions uint64 `json:"refreshed_sessions"`
	NeverRefreshed    uint64 `json:"never_refreshed"`
	// Lags from the notification to the session's first refresh after it,
	// over the refreshed sessions (exact, interpolated); nil when none.
	LagP50Ms *float64 `json:"lag_p50_ms"`
	LagP95Ms *float64 `json:"lag_p95_ms"`
	LagMaxMs *int64   `json:"lag_max_ms"`
	// StaleCallsAfterNotice counts the calls on an old revision that the
	// notified sessions sent after the notification; StaleCallsAfterRefresh
	// those of them sent even after the session had refreshed.
	StaleCallsAfterNotice  uint64 `json:"stale_calls_after_notice"`
	StaleCallsAfterRefresh uint64 `json:"stale_calls_after_refresh"`
	SessionsWithStaleCalls uint64 `json:"sessions_with_stale_calls"`
	// ListTTLMaxMs is how long a notified client may have kept the old
	// list without listing again: the longest ttlMs (SEP-2549) of the
	// lists that advertised a revision of the tool in the window (of any
	// tool for Tool ""), nil when none carried one; ListCacheScope is the
	// cacheScope sent with it.
	ListTTLMaxMs   *int64 `json:"list_ttl_max_ms"`
	ListCacheScope string `json:"list_cache_scope"`
}

// ViolationRow is one safety violation (see queries/violations.sql for the
// definition of each kind).
type ViolationRow struct {
	Kind              string    `json:"kind"`
	Time              time.Time `json:"time"`
	EventID           EventID   `json:"event_id"`
	Tool              string    `json:"tool"`
	SessionID         string    `json:"session_id"`
	RunID             string    `json:"run_id"`
	RequestID         string    `json:"request_id"`
	ClientName        string    `json:"client_name"`
	ClientVersion     string    `json:"client_version"`
	RevisionClient    string    `json:"revision_client"`
	RevisionServer    string    `json:"revision_server"`
	RevisionValidated string    `json:"revision_validated"`
	ChangeClass       string    `json:"change_class"`
	Outcome           string    `json:"outcome"`
	Service           string    `json:"service"`
	ServiceVersion    string    `json:"service_version"`
	Detail            string    `json:"detail"`
}

// AuditRow is one audited tools/call.
type AuditRow struct {
	Time    time.Time `json:"time"`
	EventID EventID   `json:"event_id"`
	Tool    string    `json:"tool"`
	Service string    `json:"service"`
	// ServiceVersion is the handler build that served the call.
	ServiceVersion    string `json:"service_version"`
	Environment       string `json:"environment"`
	RequestID         string `json:"request_id"`
	SessionID         string `json:"session_id"`
	RunID             string `json:"run_id"`
	ClientName        string `json:"client_name"`
	ClientVersion     string `json:"client_version"`
	RevisionClient    string `json:"revision_client"`
	RevisionServer    string `json:"revision_server"`
	RevisionValidated string `json:"revision_validated"`
	Outcome           string `json:"outcome"`
	AdapterID         string `json:"adapter_id"`
	Approval          string `json:"approval"`
	Privilege         string `json:"privilege"`
	ExternalTarget    string `json:"external_target"`
	ExternalRequests  int64  `json:"external_requests"`
	SideEffectStarted bool   `json:"side_effect_started"`
	// ArgsRaw and ArgsNormalized are the arguments as received and after
	// normalisation (JSON, redacted at ingest per configuration).
	ArgsRaw        string `json:"args_raw"`
	ArgsNormalized string `json:"args_normalized"`
}

// ClientUsage is one client's use of an adapter.
type ClientUsage struct {
	// Client is name@version (or the name alone when no version is known).
	Client string `json:"client"`
	Calls  uint64 `json:"calls"`
	// MaxSessionAgeS is the oldest known session age; null when none of
	// the client's calls carried one.
	MaxSessionAgeS *int64 `json:"max_session_age_s"`
	// MaxPrivilege is the highest known privilege; "" when none was given.
	MaxPrivilege string `json:"max_privilege"`
	// UnknownAgeCalls and UnknownPrivilegeCalls count the calls without a
	// session age and without a privilege.
	UnknownAgeCalls       uint64 `json:"unknown_age_calls"`
	UnknownPrivilegeCalls uint64 `json:"unknown_privilege_calls"`
	// UnknownRevisionCalls counts, in the adapter retirement report, the
	// client's calls to the adapter's tool, through it or not, that did
	// not say which revision they were planned with: a client may have
	// made such calls and none through the adapter (Calls 0). Always 0 in
	// the release check, which lists those clients apart.
	UnknownRevisionCalls uint64 `json:"unknown_revision_calls"`
}

// AdapterRow is one compatibility adapter and whether it can be retired.
type AdapterRow struct {
	AdapterID string `json:"adapter_id"`
	Tool      string `json:"tool"`
	// Registered is true when a server declared the adapter (dev.mcpdrift.adapter);
	// the next four fields come from its latest declaration.
	Registered   bool   `json:"registered"`
	RevisionFrom string `json:"revision_from"`
	RevisionTo   string `json:"revision_to"`
	// ChangeClass is the class the server declared for the change the
	// adapter bridges.
	ChangeClass string     `json:"change_class"`
	WindowEnd   *time.Time `json:"window_end"`
	// WindowEnded is true when the declared window had ended by now.
	WindowEnded bool `json:"window_ended"`
	// RegistryChangeClass and Change are the change from RevisionFrom to
	// RevisionTo in the registry of advertised definitions, as
	// StaleUsageRow's ChangeClass and Change: what the adapter bridges,
	// which Reason names too. The class is computed from the definitions
	// and may differ from the declared ChangeClass. Both null when either
	// revision is unknown to the registry.
	RegistryChangeClass *string `json:"registry_change_class"`
	Change              *string `json:"change"`
	// Calls through the adapter in the window, and their share of the
	// tool's calls (ToolCalls).
	Calls     uint64  `json:"calls"`
	ToolCalls uint64  `json:"tool_calls"`
	Share     float64 `json:"share"`
	// WouldBeRejected is the what-if: the calls the adapter normalised in
	// the window, which would have been rejected without it.
	WouldBeRejected uint64 `json:"would_be_rejected"`
	// FirstSeen is the first call through the adapter in the window.
	FirstSeen *time.Time `json:"first_seen"`
	// LastSeen is the last call through it at all, in the window or not
	// (as far back as the retention), under the report's filters; null
	// when none is stored. LastSeenInWindow says whether it lies in the
	// window.
	LastSeen         *time.Time `json:"last_seen"`
	LastSeenInWindow bool       `json:"last_seen_in_window"`
	Sessions         uint64     `json:"sessions"`
	Clients          uint64     `json:"clients"`
	Services         uint64     `json:"services"`
	ServiceNames     []string   `json:"service_names"`
	// MaxPrivilege is the highest privilege among the calls ("" when none
	// carried one), and MaxSessionAgeS the age of the oldest session that
	// made one (null when none carried an age).
	MaxPrivilege   string `json:"max_privilege"`
	MaxSessionAgeS *int64 `json:"max_session_age_s"`
	// UnknownAgeCalls and UnknownPrivilegeCalls count the calls in the
	// window without a session age and without a privilege.
	UnknownAgeCalls       uint64 `json:"unknown_age_calls"`
	UnknownPrivilegeCalls uint64 `json:"unknown_privilege_calls"`
	// UnknownRevisionCalls counts the calls to the adapter's tool in the
	// window, through the adapter or not, that did not say which revision
	// their client planned with (dev.mcpdrift.revision.client absent), under
	// the report's filters and client exclusions. The adapter may serve
	// such a caller unbeknown: any puts an adapter within the thresholds
	// at risk, unless retirement.Options.UnknownSafe.
	UnknownRevisionCalls uint64 `json:"unknown_revision_calls"`
	// RemovedToolSuccesses counts the removed_tool_success violations
	// through the adapter in the window (see ViolationRow): a removed tool's
	// call that succeeded through it. Any blocks its retirement.
	RemovedToolSuccesses uint64 `json:"removed_tool_successes"`
	// Callers lists every client's use, most calls first: the clients of
	// the calls through the adapter, and those of the calls to its tool
	// without a client revision.
	Callers []ClientUsage `json:"callers"`

	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	// BlockingClients are the callers that stand in the way (for
	// blocked: those that called through the adapter; for at_risk: the
	// long-running or privileged ones and those whose session age,
	// privilege or revision is unknown), most calls first, at most
	// retirement.Options.TopClients.
	BlockingClients []ClientUsage `json:"blocking_clients"`
}

// RevisionSourceRow is the calls of one tool by one client, by where their
// client revision (dev.mcpdrift.revision.client) came from
// (dev.mcpdrift.revision.client.source). Declared, Listed, Inferred and
// Unknown sum to Calls.
type RevisionSourceRow struct {
	Tool string `json:"tool"`
	// Client is name@version, or the name alone for a client without a
	// version; "" for calls that named no client.
	Client string `json:"client"`
	Calls  uint64 `json:"calls"`
	// Declared counts the calls with a client revision that the client
	// declared in _meta, or whose source is not stated: the only source
	// before the attribute existed, and what the calls stored before
	// migration 12 count as.
	Declared uint64 `json:"declared"`
	// Listed counts the calls whose client revision is the one the server
	// last listed to the session, Inferred those whose revision the server
	// inferred from the arguments.
	Listed   uint64 `json:"listed"`
	Inferred uint64 `json:"inferred"`
	// Unknown counts the calls without a client revision, whatever source
	// they state: a verdict never reads them as current.
	Unknown uint64 `json:"unknown"`
	// UnknownShare is Unknown / Calls; nil without calls.
	UnknownShare *float64 `json:"unknown_share"`
}

// ContractField is the contract errors of one client about one output
// field of one tool.
type ContractField struct {
	Tool string `json:"tool"`
	// Field is the output field a dependent call needed and did not get
	// (dev.mcpdrift.contract.field).
	Field          string `json:"field"`
	ContractErrors uint64 `json:"contract_errors"`
}

// ContractErrorRow is one client's half of the output contract: the
// output-shape mismatches that stopped its dependent calls, and how its
// refreshes of the tool list went.
type ContractErrorRow struct {
	// Client is name@version, or the name alone for a client without a
	// version; "" for events that named no client.
	Client string `json:"client"`
	// ContractErrors counts the client's dev.mcpdrift.contract_error events;
	// Fields splits them by tool and field, most first.
	ContractErrors uint64          `json:"contract_errors"`
	Fields         []ContractField `json:"fields"`
	// Refreshes counts the client's tools/list refreshes: distinct
	// (session key, time) pairs of its dev.mcpdrift.refresh events, since a
	// refresh emits one event per tool it found changed, all at one time.
	// FailedRefreshes counts those that failed, and RefreshFailureRate is
	// FailedRefreshes / Refreshes, nil without a refresh. A tool filter
	// leaves these whole: a refresh re-lists every tool.
	Refreshes          uint64   `json:"refreshes"`
	FailedRefreshes    uint64   `json:"failed_refreshes"`
	RefreshFailureRate *float64 `json:"refresh_failure_rate"`
	// Sessions counts the distinct session keys (the session id, else the
	// run id) of the events counted; LastSeen is the latest of them.
	Sessions uint64    `json:"sessions"`
	LastSeen time.Time `json:"last_seen"`
}
