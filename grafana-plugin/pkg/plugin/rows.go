package plugin

import "time"

// The rows of the mcpdrift API's reports, as its JSON spells them
// (queries/reports.go in the mcpdrift module is the source). The plugin
// keeps its own copy so that its binary links nothing of the server.

// body is the envelope of every report answer, /api/v1/tools included.
type body[T any] struct {
	Report string    `json:"report"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Rows   []T       `json:"rows"`
	Next   string    `json:"next,omitempty"`
}

type toolsBody = body[toolRow]

type toolRow struct {
	Tool            string    `json:"tool"`
	ClientRevisions []string  `json:"client_revisions"`
	ServerRevisions []string  `json:"server_revisions"`
	Adapters        []string  `json:"adapters"`
	Calls           uint64    `json:"calls"`
	FirstSeen       time.Time `json:"first_seen"`
	LastSeen        time.Time `json:"last_seen"`
}

type staleUsageRow struct {
	Tool           string    `json:"tool"`
	RevisionClient string    `json:"revision_client"`
	RevisionServer string    `json:"revision_server"`
	Stale          *bool     `json:"stale"`
	Calls          uint64    `json:"calls"`
	Current        uint64    `json:"current"`
	Normalized     uint64    `json:"normalized"`
	Rejected       uint64    `json:"rejected"`
	Removed        uint64    `json:"removed"`
	Failed         uint64    `json:"failed"`
	Sessions       uint64    `json:"sessions"`
	Runs           uint64    `json:"runs"`
	Clients        uint64    `json:"clients"`
	FirstSeen      time.Time `json:"first_seen"`
	LastSeen       time.Time `json:"last_seen"`
	CallsPrevious  uint64    `json:"calls_previous"`
	Trend          *string   `json:"trend"`
	// ChangeClass and Change are the change from RevisionClient to
	// RevisionServer in the registry of advertised definitions; null when
	// either revision is unknown to it.
	ChangeClass *string `json:"change_class"`
	Change      *string `json:"change"`
}

type rejectionRow struct {
	Tool                 string    `json:"tool"`
	RevisionClient       string    `json:"revision_client"`
	RevisionServer       string    `json:"revision_server"`
	Outcome              string    `json:"outcome"`
	ErrorCode            string    `json:"error_code"`
	ClientName           string    `json:"client_name"`
	ClientVersion        string    `json:"client_version"`
	Rejected             uint64    `json:"rejected"`
	ToolCalls            uint64    `json:"tool_calls"`
	RejectionRate        float64   `json:"rejection_rate"`
	SideEffectViolations uint64    `json:"side_effect_violations"`
	Sessions             uint64    `json:"sessions"`
	FirstSeen            time.Time `json:"first_seen"`
	LastSeen             time.Time `json:"last_seen"`
	ChangeClass          *string   `json:"change_class"`
	Change               *string   `json:"change"`
}

func (r rejectionRow) client() string { return clientKey(r.ClientName, r.ClientVersion) }

func clientKey(name, version string) string {
	if version == "" {
		return name
	}
	return name + "@" + version
}

type repairRow struct {
	Tool                      string   `json:"tool"`
	StaleRejections           uint64   `json:"stale_rejections"`
	Rejections                uint64   `json:"rejections"`
	RetryCalls                uint64   `json:"retry_calls"`
	Amplification             *float64 `json:"amplification"`
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
	RefreshRetries            uint64   `json:"refresh_retries"`
	ModelRepairs              uint64   `json:"model_repairs"`
	HumanApprovals            uint64   `json:"human_approvals"`
	HumanApprovalsDenied      uint64   `json:"human_approvals_denied"`
	Abandons                  uint64   `json:"abandons"`
	AutomaticRepairs          uint64   `json:"automatic_repairs"`
	AutomaticSucceeded        uint64   `json:"automatic_succeeded"`
	AutomaticFailed           uint64   `json:"automatic_failed"`
	AutomaticSuccessRate      *float64 `json:"automatic_success_rate"`
	AutomaticRepairP50Ms      *float64 `json:"automatic_repair_p50_ms"`
	AutomaticRepairP95Ms      *float64 `json:"automatic_repair_p95_ms"`
	HumanRepairP50Ms          *float64 `json:"human_repair_p50_ms"`
	HumanRepairP95Ms          *float64 `json:"human_repair_p95_ms"`
}

type clientUsage struct {
	Client               string `json:"client"`
	Calls                uint64 `json:"calls"`
	MaxSessionAgeS       *int64 `json:"max_session_age_s"`
	MaxPrivilege         string `json:"max_privilege"`
	UnknownRevisionCalls uint64 `json:"unknown_revision_calls"`
}

type adapterRow struct {
	AdapterID    string     `json:"adapter_id"`
	Tool         string     `json:"tool"`
	Registered   bool       `json:"registered"`
	RevisionFrom string     `json:"revision_from"`
	RevisionTo   string     `json:"revision_to"`
	ChangeClass  string     `json:"change_class"`
	WindowEnd    *time.Time `json:"window_end"`
	WindowEnded  bool       `json:"window_ended"`
	// RegistryChangeClass and Change are what the adapter bridges, from
	// the registry of advertised definitions; null when either revision
	// is unknown to it.
	RegistryChangeClass *string    `json:"registry_change_class"`
	Change              *string    `json:"change"`
	Calls               uint64     `json:"calls"`
	ToolCalls           uint64     `json:"tool_calls"`
	Share               float64    `json:"share"`
	WouldBeRejected     uint64     `json:"would_be_rejected"`
	FirstSeen           *time.Time `json:"first_seen"`
	LastSeen            *time.Time `json:"last_seen"`
	Sessions            uint64     `json:"sessions"`
	Clients             uint64     `json:"clients"`
	Services            uint64     `json:"services"`
	ServiceNames        []string   `json:"service_names"`
	MaxPrivilege        string     `json:"max_privilege"`
	MaxSessionAgeS      *int64     `json:"max_session_age_s"`
	// UnknownRevisionCalls are the calls to the adapter's tool that did
	// not say which revision their client planned with.
	UnknownRevisionCalls uint64        `json:"unknown_revision_calls"`
	Callers              []clientUsage `json:"callers"`
	Verdict              string        `json:"verdict"`
	Reason               string        `json:"reason"`
	BlockingClients      []clientUsage `json:"blocking_clients"`
}

type propagationRow struct {
	Tool                   string   `json:"tool"`
	NotifiedSessions       uint64   `json:"notified_sessions"`
	RefreshedSessions      uint64   `json:"refreshed_sessions"`
	NeverRefreshed         uint64   `json:"never_refreshed"`
	LagP50Ms               *float64 `json:"lag_p50_ms"`
	LagP95Ms               *float64 `json:"lag_p95_ms"`
	LagMaxMs               *int64   `json:"lag_max_ms"`
	StaleCallsAfterNotice  uint64   `json:"stale_calls_after_notice"`
	StaleCallsAfterRefresh uint64   `json:"stale_calls_after_refresh"`
	SessionsWithStaleCalls uint64   `json:"sessions_with_stale_calls"`
}

type revisionSourceRow struct {
	Tool         string   `json:"tool"`
	Client       string   `json:"client"`
	Calls        uint64   `json:"calls"`
	Declared     uint64   `json:"declared"`
	Listed       uint64   `json:"listed"`
	Inferred     uint64   `json:"inferred"`
	Unknown      uint64   `json:"unknown"`
	UnknownShare *float64 `json:"unknown_share"`
}

type contractField struct {
	Tool           string `json:"tool"`
	Field          string `json:"field"`
	ContractErrors uint64 `json:"contract_errors"`
}

type contractErrorRow struct {
	Client             string          `json:"client"`
	ContractErrors     uint64          `json:"contract_errors"`
	Fields             []contractField `json:"fields"`
	Refreshes          uint64          `json:"refreshes"`
	FailedRefreshes    uint64          `json:"failed_refreshes"`
	RefreshFailureRate *float64        `json:"refresh_failure_rate"`
	Sessions           uint64          `json:"sessions"`
	LastSeen           time.Time       `json:"last_seen"`
}

type violationRow struct {
	Kind              string    `json:"kind"`
	Time              time.Time `json:"time"`
	EventID           uint64    `json:"event_id,string"`
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

type auditRow struct {
	Time              time.Time `json:"time"`
	EventID           uint64    `json:"event_id,string"`
	Tool              string    `json:"tool"`
	Service           string    `json:"service"`
	ServiceVersion    string    `json:"service_version"`
	Environment       string    `json:"environment"`
	RequestID         string    `json:"request_id"`
	SessionID         string    `json:"session_id"`
	RunID             string    `json:"run_id"`
	ClientName        string    `json:"client_name"`
	ClientVersion     string    `json:"client_version"`
	RevisionClient    string    `json:"revision_client"`
	RevisionServer    string    `json:"revision_server"`
	RevisionValidated string    `json:"revision_validated"`
	Outcome           string    `json:"outcome"`
	AdapterID         string    `json:"adapter_id"`
	Approval          string    `json:"approval"`
	Privilege         string    `json:"privilege"`
	ExternalTarget    string    `json:"external_target"`
	ExternalRequests  int64     `json:"external_requests"`
	SideEffectStarted bool      `json:"side_effect_started"`
	ArgsRaw           string    `json:"args_raw"`
	ArgsNormalized    string    `json:"args_normalized"`
}

// stale reports whether the call executed under another revision than the
// one its client planned with.
func (r auditRow) stale() bool {
	return r.RevisionClient != "" && r.RevisionServer != "" && r.RevisionClient != r.RevisionServer
}

func (r violationRow) client() string { return clientKey(r.ClientName, r.ClientVersion) }

func (r auditRow) client() string { return clientKey(r.ClientName, r.ClientVersion) }
