package queries

import (
	"context"
	"time"
)

// StaleUsageRow is the use of one tool by clients planning with one revision
// while the server executed another (or the same: stale says which).
type StaleUsageRow struct {
	Tool           string `json:"tool"`
	RevisionClient string `json:"revision_client"`
	RevisionServer string `json:"revision_server"`
	// Stale is true when the client planned with a revision other than the
	// one that executed; null when the client revision is unknown (the
	// row of calls that did not say it), which is never taken for not
	// stale.
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
	// Calls with it (see trendOf), and is null when the store does not hold
	// the whole previous period (its first stored call is later than
	// PreviousFrom: a fresh store, or data past the retention).
	CallsPrevious uint64    `json:"calls_previous"`
	PreviousFrom  time.Time `json:"previous_from"`
	Trend         *string   `json:"trend"`
	// ChangeClass and Change are the change from RevisionClient to
	// RevisionServer in the registry of advertised definitions: its class
	// ("" when the definitions do not differ) and the change in one line
	// (see RevisionChange); both null when either revision is unknown to
	// the registry (see WithChanges).
	ChangeClass *string `json:"change_class"`
	Change      *string `json:"change"`
}

// Trends of StaleUsageRow.Trend.
const (
	TrendNew     = "new"     // no calls in the previous period
	TrendRising  = "rising"  // over 120% of the previous period's calls
	TrendFalling = "falling" // under 80% of the previous period's calls
	TrendFlat    = "flat"    // within 20%
)

func trendOf(previous, now uint64) string {
	switch {
	case previous == 0:
		return TrendNew
	case float64(now) > 1.2*float64(previous):
		return TrendRising
	case float64(now) < 0.8*float64(previous):
		return TrendFalling
	}
	return TrendFlat
}

// staleResult is a row of stale_usage.sql before its trend is judged.
type staleResult struct {
	StaleUsageRow
	HistoryFrom time.Time `json:"history_from"`
}

// StaleUsage reports, per tool × client revision × server revision, the
// calls, their outcomes, who made them and the trend. Served from the call
// rollups over the resolved window (Plan).
func (r *Runner) StaleUsage(ctx context.Context, f Filter) ([]StaleUsageRow, error) {
	return r.staleUsage(ctx, f, "stale_usage")
}

// RawStaleUsage is StaleUsage computed from the raw events over the same
// resolved window: the fallback, and the reference the rollups must equal.
func (r *Runner) RawStaleUsage(ctx context.Context, f Filter) ([]StaleUsageRow, error) {
	return r.staleUsage(ctx, f, "stale_usage_raw")
}

func (r *Runner) staleUsage(ctx context.Context, f Filter, query string) ([]StaleUsageRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	res := []staleResult{}
	if err := r.runPlanned(ctx, query, f, &res); err != nil {
		return nil, err
	}
	rows := make([]StaleUsageRow, len(res))
	pairs := make([]revisionPair, len(res))
	for i, x := range res {
		rows[i] = x.StaleUsageRow
		if !x.HistoryFrom.After(x.PreviousFrom) {
			trend := trendOf(x.CallsPrevious, x.Calls)
			rows[i].Trend = &trend
		}
		pairs[i] = revisionPair{x.Tool, x.RevisionClient, x.RevisionServer}
	}
	changes, err := r.changesOf(ctx, f, pairs)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].ChangeClass, rows[i].Change = change(changes, pairs[i])
	}
	return rows, nil
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
	// already started: each is a safety violation (see Violations).
	SideEffectViolations uint64    `json:"side_effect_violations"`
	Sessions             uint64    `json:"sessions"`
	FirstSeen            time.Time `json:"first_seen"`
	LastSeen             time.Time `json:"last_seen"`
	// ChangeClass and Change are the change from RevisionClient to
	// RevisionServer, as in StaleUsageRow.
	ChangeClass *string `json:"change_class"`
	Change      *string `json:"change"`
}

// Rejections reports the rejected calls by tool, revisions, outcome, error
// code and client, with the rejection rate and the side-effect violations.
// Served from the call rollups.
func (r *Runner) Rejections(ctx context.Context, f Filter) ([]RejectionRow, error) {
	return r.rejections(ctx, f, "rejections")
}

// RawRejections is Rejections computed from the raw events over the same
// resolved window.
func (r *Runner) RawRejections(ctx context.Context, f Filter) ([]RejectionRow, error) {
	return r.rejections(ctx, f, "rejections_raw")
}

func (r *Runner) rejections(ctx context.Context, f Filter, query string) ([]RejectionRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	rows := []RejectionRow{}
	if err := r.runPlanned(ctx, query, f, &rows); err != nil {
		return nil, err
	}
	pairs := make([]revisionPair, len(rows))
	for i, x := range rows {
		pairs[i] = revisionPair{x.Tool, x.RevisionClient, x.RevisionServer}
	}
	changes, err := r.changesOf(ctx, f, pairs)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].ChangeClass, rows[i].Change = change(changes, pairs[i])
	}
	return rows, nil
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

// Repairs reports, per tool, the stale rejections, the repairs clients made
// and how well they worked. Served from the rollups (see RollupsFor).
func (r *Runner) Repairs(ctx context.Context, f Filter) ([]RepairRow, error) {
	return r.repairs(ctx, f, "repairs")
}

// RawRepairs is Repairs computed from the raw events over the same resolved
// window. Its counts equal Repairs'; its repair times are t-digests of the
// events where Repairs merges t-digest states, so they agree approximately.
func (r *Runner) RawRepairs(ctx context.Context, f Filter) ([]RepairRow, error) {
	return r.repairs(ctx, f, "repairs_raw")
}

func (r *Runner) repairs(ctx context.Context, f Filter, query string) ([]RepairRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	rows := []RepairRow{}
	if err := r.runPlanned(ctx, query, f, &rows); err != nil {
		return nil, err
	}
	return rows, nil
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

// Propagation reports, per tool, how list_changed notifications propagated
// to the notified sessions, over the reports' window (Window). Served from
// propagation_events (see RawPropagation for the raw fallback).
func (r *Runner) Propagation(ctx context.Context, f Filter) ([]PropagationRow, error) {
	return r.propagation(ctx, f, "propagation")
}

// Violation kinds.
const (
	ViolationSideEffectRejected = "side_effect_rejected"
	ViolationMixedRevision      = "mixed_revision"
	ViolationRemovedToolSuccess = "removed_tool_success"
	ViolationRetryAcrossChange  = "retry_across_change"
)

// ViolationRow is one safety violation (see violations.sql for the
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

// ViolationPage is one page of violations; Next is the cursor of the next
// page, empty on the last.
type ViolationPage struct {
	Rows []ViolationRow `json:"rows"`
	Next string         `json:"next,omitempty"`
}

// Violations lists the safety violations in the reports' window, oldest
// first, one page at a time. Served from violation_candidates and, for the
// calls through adapters the registry declares removed,
// adapter_call_candidates (see RawViolations for the raw fallback).
func (r *Runner) Violations(ctx context.Context, f Filter, page Page) (ViolationPage, error) {
	return r.violations(ctx, f, page, "violations", true)
}

// AuditFilter selects audited calls: the common filter, and optionally one
// run, session or request id.
type AuditFilter struct {
	Filter
	RunID     string
	SessionID string
	RequestID string
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

// AuditPage is one page of audited calls; Next is the cursor of the next
// page, empty on the last.
type AuditPage struct {
	Rows []AuditRow `json:"rows"`
	Next string     `json:"next,omitempty"`
}

// Audit searches the call audit, oldest first, one page at a time. Callers
// must hold the audit permission: the rows carry call arguments.
func (r *Runner) Audit(ctx context.Context, f AuditFilter, page Page) (AuditPage, error) {
	if err := f.validate(); err != nil {
		return AuditPage{}, err
	}
	c, limit, err := page.resolve()
	if err != nil {
		return AuditPage{}, err
	}
	f.Filter = r.resolve(f.Filter)
	q := f.call()
	q.params.String("run_id", f.RunID)
	q.params.String("session_id", f.SessionID)
	q.params.String("request_id", f.RequestID)
	q.shape.RunID, q.shape.SessionID, q.shape.RequestID = f.RunID != "", f.SessionID != "", f.RequestID != ""
	rows := []AuditRow{}
	if err := r.run(ctx, "audit", c.bind(q, limit+1), &rows); err != nil {
		return AuditPage{}, err
	}
	out := AuditPage{Rows: rows}
	if len(rows) > limit {
		out.Rows = rows[:limit]
		last := rows[limit-1]
		out.Next = cursor{Time: last.Time, EventID: uint64(last.EventID)}.encode()
	}
	return out, nil
}
