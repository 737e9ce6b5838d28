package apiv1

import "time"

// The points of each report's series, the rows of a SeriesBody. A
// dimension the series does not group by is empty, and left out of the
// JSON.

// ToolPoint is the calls of a bucket (queries.Runner.ToolsSeries).
type ToolPoint struct {
	Time  time.Time `json:"time"`
	Tool  string    `json:"tool,omitempty"`
	Calls uint64    `json:"calls"`
}

// StaleUsagePoint is the calls of a bucket as the stale-usage report
// counts them; StaleCalls are those planned with a revision other than the
// one that executed.
type StaleUsagePoint struct {
	Time           time.Time `json:"time"`
	Tool           string    `json:"tool,omitempty"`
	RevisionClient string    `json:"revision_client,omitempty"`
	RevisionServer string    `json:"revision_server,omitempty"`
	// Client is name@version, or the name alone for a client without a
	// version.
	Client     string `json:"client,omitempty"`
	Calls      uint64 `json:"calls"`
	StaleCalls uint64 `json:"stale_calls"`
	Current    uint64 `json:"current"`
	Normalized uint64 `json:"normalized"`
	Rejected   uint64 `json:"rejected"`
	Removed    uint64 `json:"removed"`
	Failed     uint64 `json:"failed"`
}

// RejectionPoint is the rejected calls of a bucket (RejectionRow).
type RejectionPoint struct {
	Time                 time.Time `json:"time"`
	Tool                 string    `json:"tool,omitempty"`
	RevisionClient       string    `json:"revision_client,omitempty"`
	RevisionServer       string    `json:"revision_server,omitempty"`
	Outcome              string    `json:"outcome,omitempty"`
	ErrorCode            string    `json:"error_code,omitempty"`
	Client               string    `json:"client,omitempty"`
	Rejected             uint64    `json:"rejected"`
	SideEffectViolations uint64    `json:"side_effect_violations"`
}

// RepairPoint is the repairs report's counts of a bucket (RepairRow); the
// times to repair are the bucket's own, nil when it has none.
type RepairPoint struct {
	Time                 time.Time `json:"time"`
	Tool                 string    `json:"tool,omitempty"`
	StaleRejections      uint64    `json:"stale_rejections"`
	Rejections           uint64    `json:"rejections"`
	RetryCalls           uint64    `json:"retry_calls"`
	RefreshRetries       uint64    `json:"refresh_retries"`
	ModelRepairs         uint64    `json:"model_repairs"`
	HumanApprovals       uint64    `json:"human_approvals"`
	HumanApprovalsDenied uint64    `json:"human_approvals_denied"`
	Abandons             uint64    `json:"abandons"`
	AutomaticRepairs     uint64    `json:"automatic_repairs"`
	AutomaticSucceeded   uint64    `json:"automatic_succeeded"`
	AutomaticFailed      uint64    `json:"automatic_failed"`
	AutomaticRepairP50Ms *float64  `json:"automatic_repair_p50_ms"`
	AutomaticRepairP95Ms *float64  `json:"automatic_repair_p95_ms"`
	HumanRepairP50Ms     *float64  `json:"human_repair_p50_ms"`
	HumanRepairP95Ms     *float64  `json:"human_repair_p95_ms"`
}

// AdapterPoint is the calls through adapters in a bucket; ToolCalls is the
// calls of each adapter's tool, summed over the group's adapters.
type AdapterPoint struct {
	Time            time.Time `json:"time"`
	Adapter         string    `json:"adapter,omitempty"`
	Tool            string    `json:"tool,omitempty"`
	Calls           uint64    `json:"calls"`
	WouldBeRejected uint64    `json:"would_be_rejected"`
	ToolCalls       uint64    `json:"tool_calls"`
}

// PropagationPoint is the sessions notified in a bucket and what became of
// them (PropagationRow); the lags are nil when none refreshed.
type PropagationPoint struct {
	Time                   time.Time `json:"time"`
	Tool                   string    `json:"tool,omitempty"`
	NotifiedSessions       uint64    `json:"notified_sessions"`
	RefreshedSessions      uint64    `json:"refreshed_sessions"`
	NeverRefreshed         uint64    `json:"never_refreshed"`
	LagP50Ms               *float64  `json:"lag_p50_ms"`
	LagP95Ms               *float64  `json:"lag_p95_ms"`
	LagMaxMs               *float64  `json:"lag_max_ms"`
	StaleCallsAfterNotice  uint64    `json:"stale_calls_after_notice"`
	StaleCallsAfterRefresh uint64    `json:"stale_calls_after_refresh"`
	SessionsWithStaleCalls uint64    `json:"sessions_with_stale_calls"`
}

// ViolationPoint is the safety violations of a bucket (ViolationRow).
type ViolationPoint struct {
	Time       time.Time `json:"time"`
	Kind       string    `json:"kind,omitempty"`
	Tool       string    `json:"tool,omitempty"`
	Client     string    `json:"client,omitempty"`
	Service    string    `json:"service,omitempty"`
	Outcome    string    `json:"outcome,omitempty"`
	Violations uint64    `json:"violations"`
}

// AuditPoint is the audited calls of a bucket (AuditRow): StaleCalls have
// a client revision and a server revision that differ.
type AuditPoint struct {
	Time              time.Time `json:"time"`
	Tool              string    `json:"tool,omitempty"`
	Client            string    `json:"client,omitempty"`
	Outcome           string    `json:"outcome,omitempty"`
	RevisionClient    string    `json:"revision_client,omitempty"`
	RevisionServer    string    `json:"revision_server,omitempty"`
	Adapter           string    `json:"adapter,omitempty"`
	Privilege         string    `json:"privilege,omitempty"`
	Approval          string    `json:"approval,omitempty"`
	Service           string    `json:"service,omitempty"`
	Environment       string    `json:"environment,omitempty"`
	Calls             uint64    `json:"calls"`
	StaleCalls        uint64    `json:"stale_calls"`
	SideEffectStarted uint64    `json:"side_effect_started"`
	ExternalRequests  uint64    `json:"external_requests"`
}

// RevisionSourcePoint is the calls of a bucket by where their client
// revision came from (RevisionSourceRow); UnknownShare is nil in a bucket
// without calls.
type RevisionSourcePoint struct {
	Time time.Time `json:"time"`
	Tool string    `json:"tool,omitempty"`
	// Client is name@version, or the name alone for a client without a
	// version.
	Client       string   `json:"client,omitempty"`
	Calls        uint64   `json:"calls"`
	Declared     uint64   `json:"declared"`
	Listed       uint64   `json:"listed"`
	Inferred     uint64   `json:"inferred"`
	Unknown      uint64   `json:"unknown"`
	UnknownShare *float64 `json:"unknown_share"`
}

// ContractErrorPoint is the contract errors and refreshes of a bucket
// (ContractErrorRow); RefreshFailureRate is nil in a bucket without a
// refresh.
type ContractErrorPoint struct {
	Time   time.Time `json:"time"`
	Client string    `json:"client,omitempty"`
	// Tool is the contract errors' tool; the refreshes, of the whole tool
	// list, are in the points without one.
	Tool               string   `json:"tool,omitempty"`
	ContractErrors     uint64   `json:"contract_errors"`
	Refreshes          uint64   `json:"refreshes"`
	FailedRefreshes    uint64   `json:"failed_refreshes"`
	RefreshFailureRate *float64 `json:"refresh_failure_rate"`
}
