package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/humanize"
)

// The builders below lay one report out as a Table for format f: CSV gets
// exact machine values (full revisions, RFC 3339 times, raw ratios), the
// other formats what a person reads (percentages, ages, short digests; the
// wide format keeps whole revisions).

// Tools lays out the tools report.
func Tools(rows []apiv1.ToolRow, f Format) Table {
	v := valuesFor(f)
	t := Table{Title: "Tools", Columns: []Column{
		{Name: "tool", Title: "Tool"},
		{Name: "client_revisions", Title: "Client revisions"},
		{Name: "server_revisions", Title: "Server revisions"},
		{Name: "adapters", Title: "Adapters"},
		{Name: "calls", Title: "Calls", Numeric: true},
		{Name: "first_seen", Title: "First seen", Wide: true},
		{Name: "last_seen", Title: "Last seen", NoCut: true},
	}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Tool, v.revs(r.ClientRevisions), v.revs(r.ServerRevisions), v.list(r.Adapters),
			v.uint(r.Calls), v.time(r.FirstSeen), v.time(r.LastSeen)})
	}
	return t
}

// StaleUsage lays out the stale-revision usage report.
func StaleUsage(rows []apiv1.StaleUsageRow, f Format) Table {
	v := valuesFor(f)
	t := Table{Title: "Stale-revision usage", Columns: []Column{
		{Name: "tool", Title: "Tool"},
		{Name: "revision_client", Title: "Client rev", NoCut: true},
		{Name: "revision_server", Title: "Server rev", NoCut: true},
		{Name: "stale", Title: "Stale"},
		{Name: "calls", Title: "Calls", Numeric: true},
		{Name: "current", Title: "Current", Numeric: true, Detail: true},
		{Name: "normalized", Title: "Normalized", Numeric: true},
		{Name: "rejected", Title: "Rejected", Numeric: true},
		{Name: "removed", Title: "Removed", Numeric: true, Wide: true},
		{Name: "failed", Title: "Failed", Numeric: true, Wide: true},
		{Name: "sessions", Title: "Sessions", Numeric: true},
		{Name: "runs", Title: "Runs", Numeric: true, Detail: true},
		{Name: "clients", Title: "Clients", Numeric: true},
		{Name: "first_seen", Title: "First seen", Detail: true},
		{Name: "last_seen", Title: "Last seen", Wide: true, NoCut: true},
		{Name: "calls_previous", Title: "Calls before", Numeric: true, Detail: true},
		{Name: "previous_from", Title: "Before, from", Detail: true},
		{Name: "trend", Title: "Trend"},
		{Name: "change_class", Title: "Change", Wide: true},
		{Name: "change", Title: "What changed", Wide: true},
	}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Tool, v.rev(r.RevisionClient), v.rev(r.RevisionServer), v.yesPtr(r.Stale),
			v.uint(r.Calls), v.uint(r.Current), v.uint(r.Normalized), v.uint(r.Rejected), v.uint(r.Removed), v.uint(r.Failed),
			v.uint(r.Sessions), v.uint(r.Runs), v.uint(r.Clients), v.time(r.FirstSeen), v.time(r.LastSeen),
			v.uint(r.CallsPrevious), v.time(r.PreviousFrom), v.stringPtr(r.Trend), v.class(r.ChangeClass), v.stringPtr(r.Change)})
	}
	return t
}

// Rejections lays out the rejections report.
func Rejections(rows []apiv1.RejectionRow, f Format) Table {
	v := valuesFor(f)
	t := Table{Title: "Rejections", Columns: []Column{
		{Name: "tool", Title: "Tool"},
		{Name: "revision_client", Title: "Client rev", NoCut: true},
		{Name: "revision_server", Title: "Server rev", NoCut: true},
		{Name: "outcome", Title: "Outcome", Wide: true},
		{Name: "error_code", Title: "Error code"},
		{Name: "client_name", Title: "Client"},
		{Name: "client_version", Title: "Version", Wide: true},
		{Name: "rejected", Title: "Rejected", Numeric: true},
		{Name: "tool_calls", Title: "Tool calls", Numeric: true, Wide: true},
		{Name: "rejection_rate", Title: "Rate", Numeric: true},
		{Name: "side_effect_violations", Title: "Side effect started", Numeric: true},
		{Name: "sessions", Title: "Sessions", Numeric: true, Wide: true},
		{Name: "first_seen", Title: "First seen", Detail: true},
		{Name: "last_seen", Title: "Last seen", Wide: true, NoCut: true},
		{Name: "change_class", Title: "Change", Wide: true},
		{Name: "change", Title: "What changed", Wide: true},
	}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Tool, v.rev(r.RevisionClient), v.rev(r.RevisionServer), r.Outcome, r.ErrorCode,
			r.ClientName, r.ClientVersion, v.uint(r.Rejected), v.uint(r.ToolCalls), v.ratio(r.RejectionRate),
			v.uint(r.SideEffectViolations), v.uint(r.Sessions), v.time(r.FirstSeen), v.time(r.LastSeen),
			v.class(r.ChangeClass), v.stringPtr(r.Change)})
	}
	return t
}

// Repairs lays out the repairs report.
func Repairs(rows []apiv1.RepairRow, f Format) Table {
	v := valuesFor(f)
	t := Table{Title: "Repairs", Columns: []Column{
		{Name: "tool", Title: "Tool"},
		{Name: "stale_rejections", Title: "Stale rejections", Numeric: true},
		{Name: "rejections", Title: "All rejections", Numeric: true, Wide: true},
		{Name: "retry_calls", Title: "Retries", Numeric: true, Wide: true},
		{Name: "amplification", Title: "Retries/rejection", Numeric: true},
		{Name: "incompatible_rejections", Title: "Incompatible", Numeric: true, Wide: true},
		{Name: "invalid_rejections", Title: "Invalid", Numeric: true, Wide: true},
		{Name: "removed_calls", Title: "Removed", Numeric: true, Wide: true},
		{Name: "retries_after_stale", Title: "Retries after stale", Numeric: true, Wide: true},
		{Name: "retries_after_incompatible", Title: "after incompatible", Numeric: true, Wide: true},
		{Name: "retries_after_invalid", Title: "after invalid", Numeric: true, Wide: true},
		{Name: "retries_after_removed", Title: "after removed", Numeric: true, Wide: true},
		{Name: "retries_after_other", Title: "after other", Numeric: true, Wide: true},
		{Name: "amplification_stale", Title: "Retries/stale", Numeric: true, Wide: true},
		{Name: "amplification_incompatible", Title: "Retries/incompatible", Numeric: true, Wide: true},
		{Name: "amplification_invalid", Title: "Retries/invalid", Numeric: true, Wide: true},
		{Name: "amplification_removed", Title: "Retries/removed", Numeric: true, Wide: true},
		{Name: "refresh_retries", Title: "Refresh+retry", Numeric: true},
		{Name: "model_repairs", Title: "Model repairs", Numeric: true},
		{Name: "human_approvals", Title: "Human approvals", Numeric: true, Wide: true},
		{Name: "human_approvals_denied", Title: "Denied", Numeric: true, Wide: true},
		{Name: "abandons", Title: "Abandons", Numeric: true, Wide: true},
		{Name: "automatic_repairs", Title: "Automatic", Numeric: true, Detail: true},
		{Name: "automatic_succeeded", Title: "Automatic ok", Numeric: true, Detail: true},
		{Name: "automatic_failed", Title: "Automatic failed", Numeric: true, Detail: true},
		{Name: "automatic_success_rate", Title: "Automatic success", Numeric: true},
		{Name: "automatic_repair_p50_ms", Title: "Automatic p50", Numeric: true, Wide: true},
		{Name: "automatic_repair_p95_ms", Title: "Automatic p95", Numeric: true},
		{Name: "human_repair_p50_ms", Title: "Human p50", Numeric: true, Wide: true},
		{Name: "human_repair_p95_ms", Title: "Human p95", Numeric: true, Wide: true},
	}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Tool, v.uint(r.StaleRejections), v.uint(r.Rejections), v.uint(r.RetryCalls), v.floatPtr(r.Amplification),
			v.uint(r.IncompatibleRejections), v.uint(r.InvalidRejections), v.uint(r.RemovedCalls),
			v.uint(r.RetriesAfterStale), v.uint(r.RetriesAfterIncompatible), v.uint(r.RetriesAfterInvalid),
			v.uint(r.RetriesAfterRemoved), v.uint(r.RetriesAfterOther),
			v.floatPtr(r.AmplificationStale), v.floatPtr(r.AmplificationIncompatible), v.floatPtr(r.AmplificationInvalid),
			v.floatPtr(r.AmplificationRemoved),
			v.uint(r.RefreshRetries), v.uint(r.ModelRepairs), v.uint(r.HumanApprovals), v.uint(r.HumanApprovalsDenied),
			v.uint(r.Abandons), v.uint(r.AutomaticRepairs), v.uint(r.AutomaticSucceeded), v.uint(r.AutomaticFailed),
			v.ratioPtr(r.AutomaticSuccessRate), v.ms(r.AutomaticRepairP50Ms), v.ms(r.AutomaticRepairP95Ms),
			v.ms(r.HumanRepairP50Ms), v.ms(r.HumanRepairP95Ms)})
	}
	return t
}

// AdapterRetirement lays out the adapter retirement report; the reason is
// a long column.
func AdapterRetirement(rows []apiv1.AdapterRow, f Format) Table {
	v := valuesFor(f)
	t := Table{Title: "Adapter retirement", Columns: []Column{
		{Name: "adapter_id", Title: "Adapter"},
		{Name: "tool", Title: "Tool"},
		{Name: "registered", Title: "Registered", Detail: true},
		{Name: "revision_from", Title: "From", Detail: true},
		{Name: "revision_to", Title: "To", Detail: true},
		{Name: "change_class", Title: "Change", Wide: true},
		{Name: "registry_change_class", Title: "Registry change", Wide: true},
		{Name: "change", Title: "Bridges", Detail: true},
		{Name: "verdict", Title: "Verdict", NoCut: true},
		{Name: "calls", Title: "Calls", Numeric: true},
		{Name: "tool_calls", Title: "Tool calls", Numeric: true, Detail: true},
		{Name: "share", Title: "Share", Numeric: true},
		{Name: "would_be_rejected", Title: "Would be rejected", Numeric: true, Wide: true},
		{Name: "sessions", Title: "Sessions", Numeric: true, Wide: true},
		{Name: "clients", Title: "Clients", Numeric: true, Wide: true},
		{Name: "services", Title: "Services", Numeric: true, Detail: true},
		{Name: "service_names", Title: "Service names", Detail: true},
		{Name: "max_privilege", Title: "Max privilege", Wide: true},
		{Name: "max_session_age_s", Title: "Oldest session", Numeric: true, Wide: true},
		{Name: "unknown_age_calls", Title: "Calls without age", Numeric: true, Wide: true},
		{Name: "unknown_privilege_calls", Title: "Calls without privilege", Numeric: true, Wide: true},
		{Name: "unknown_revision_calls", Title: "Tool calls without revision", Numeric: true, Wide: true},
		{Name: "removed_tool_successes", Title: "Removed-tool successes", Numeric: true, Wide: true},
		{Name: "first_seen", Title: "First seen", Detail: true},
		{Name: "last_seen", Title: "Last seen"},
		{Name: "last_seen_in_window", Title: "Last seen in window", Detail: true},
		{Name: "window_end", Title: "Window end", Wide: true, NoCut: true},
		{Name: "window_ended", Title: "Window ended", Detail: true},
		{Name: "blocking_clients", Title: "Blocking clients"},
		{Name: "callers", Title: "Callers", Detail: true},
		{Name: "reason", Title: "Reason", Long: true},
	}}
	for _, r := range rows {
		windowEnd := v.timePtr(r.WindowEnd)
		if !v.machine && r.WindowEnded {
			windowEnd += " (ended)"
		}
		lastSeen := v.timePtr(r.LastSeen)
		if !v.machine && r.LastSeen != nil && !r.LastSeenInWindow {
			lastSeen += " (not in the window)"
		}
		t.Rows = append(t.Rows, []string{r.AdapterID, r.Tool, v.yes(r.Registered), v.rev(r.RevisionFrom), v.rev(r.RevisionTo),
			r.ChangeClass, v.class(r.RegistryChangeClass), v.stringPtr(r.Change), r.Verdict, v.uint(r.Calls), v.uint(r.ToolCalls), v.ratio(r.Share), v.uint(r.WouldBeRejected),
			v.uint(r.Sessions), v.uint(r.Clients), v.uint(r.Services), v.list(r.ServiceNames), r.MaxPrivilege,
			v.age(r.MaxSessionAgeS), v.uint(r.UnknownAgeCalls), v.uint(r.UnknownPrivilegeCalls), v.uint(r.UnknownRevisionCalls), v.uint(r.RemovedToolSuccesses),
			v.timePtr(r.FirstSeen), lastSeen, v.yes(r.LastSeenInWindow), windowEnd, v.yes(r.WindowEnded),
			v.clients(r.BlockingClients), v.clients(r.Callers), r.Reason})
	}
	return t
}

// Propagation lays out the notification propagation report.
func Propagation(rows []apiv1.PropagationRow, f Format) Table {
	v := valuesFor(f)
	t := Table{Title: "Notification propagation", Columns: []Column{
		{Name: "tool", Title: "Tool"},
		{Name: "notified_sessions", Title: "Notified", Numeric: true},
		{Name: "refreshed_sessions", Title: "Refreshed", Numeric: true, Wide: true},
		{Name: "never_refreshed", Title: "Never refreshed", Numeric: true},
		{Name: "lag_p50_ms", Title: "Lag p50", Numeric: true},
		{Name: "lag_p95_ms", Title: "Lag p95", Numeric: true},
		{Name: "lag_max_ms", Title: "Lag max", Numeric: true, Wide: true},
		{Name: "stale_calls_after_notice", Title: "Stale calls after notice", Numeric: true},
		{Name: "stale_calls_after_refresh", Title: "After refresh", Numeric: true, Wide: true},
		{Name: "sessions_with_stale_calls", Title: "Sessions with stale calls", Numeric: true},
		{Name: "list_ttl_max_ms", Title: "List TTL", Numeric: true},
		{Name: "list_cache_scope", Title: "Cache scope", Wide: true},
	}}
	for _, r := range rows {
		tool := r.Tool
		if tool == "" && !v.machine {
			tool = "(no tool named)"
		}
		var lagMax *float64
		if r.LagMaxMs != nil {
			f := float64(*r.LagMaxMs)
			lagMax = &f
		}
		var ttl *float64
		if r.ListTTLMaxMs != nil {
			f := float64(*r.ListTTLMaxMs)
			ttl = &f
		}
		t.Rows = append(t.Rows, []string{tool, v.uint(r.NotifiedSessions), v.uint(r.RefreshedSessions), v.uint(r.NeverRefreshed),
			v.ms(r.LagP50Ms), v.ms(r.LagP95Ms), v.ms(lagMax), v.uint(r.StaleCallsAfterNotice), v.uint(r.StaleCallsAfterRefresh),
			v.uint(r.SessionsWithStaleCalls), v.ms(ttl), r.ListCacheScope})
	}
	return t
}

// RevisionSources lays out the revision-sources report.
func RevisionSources(rows []apiv1.RevisionSourceRow, f Format) Table {
	v := valuesFor(f)
	t := Table{Title: "Revision sources", Columns: []Column{
		{Name: "tool", Title: "Tool"},
		{Name: "client", Title: "Client"},
		{Name: "calls", Title: "Calls", Numeric: true},
		{Name: "declared", Title: "Declared", Numeric: true},
		{Name: "listed", Title: "Listed", Numeric: true},
		{Name: "inferred", Title: "Inferred", Numeric: true},
		{Name: "unknown", Title: "Unknown", Numeric: true},
		{Name: "unknown_share", Title: "Unknown share", Numeric: true},
	}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Tool, v.client(r.Client), v.uint(r.Calls), v.uint(r.Declared), v.uint(r.Listed),
			v.uint(r.Inferred), v.uint(r.Unknown), v.ratioPtr(r.UnknownShare)})
	}
	return t
}

// ContractErrors lays out the contract-errors report; the tools and fields
// are one cell.
func ContractErrors(rows []apiv1.ContractErrorRow, f Format) Table {
	v := valuesFor(f)
	t := Table{Title: "Contract errors", Columns: []Column{
		{Name: "client", Title: "Client"},
		{Name: "contract_errors", Title: "Contract errors", Numeric: true},
		{Name: "fields", Title: "Tools and fields"},
		{Name: "refreshes", Title: "Refreshes", Numeric: true},
		{Name: "failed_refreshes", Title: "Failed", Numeric: true},
		{Name: "refresh_failure_rate", Title: "Failure rate", Numeric: true},
		{Name: "sessions", Title: "Sessions", Numeric: true, Wide: true},
		{Name: "last_seen", Title: "Last seen", NoCut: true},
	}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{v.client(r.Client), v.uint(r.ContractErrors), v.fields(r.Fields), v.uint(r.Refreshes),
			v.uint(r.FailedRefreshes), v.ratioPtr(r.RefreshFailureRate), v.uint(r.Sessions), v.time(r.LastSeen)})
	}
	return t
}

// Violations lays out one page of safety violations; the detail is a long
// column.
func Violations(rows []apiv1.ViolationRow, f Format) Table {
	v := valuesFor(f)
	t := Table{Title: "Safety violations", Columns: []Column{
		{Name: "time", Title: "Time", NoCut: true},
		{Name: "kind", Title: "Kind"},
		{Name: "event_id", Title: "Event", Numeric: true, Detail: true},
		{Name: "tool", Title: "Tool"},
		{Name: "client_name", Title: "Client"},
		{Name: "client_version", Title: "Version", Wide: true},
		{Name: "session_id", Title: "Session"},
		{Name: "run_id", Title: "Run", Detail: true},
		{Name: "request_id", Title: "Request", Wide: true},
		{Name: "revision_client", Title: "Client rev", NoCut: true},
		{Name: "revision_server", Title: "Server rev", NoCut: true},
		{Name: "revision_validated", Title: "Validated rev", Detail: true},
		{Name: "change_class", Title: "Change", Wide: true},
		{Name: "outcome", Title: "Outcome", Detail: true},
		{Name: "service", Title: "Service", Detail: true},
		{Name: "service_version", Title: "Build", Detail: true},
		{Name: "detail", Title: "Detail", Long: true},
	}}
	for _, r := range rows {
		session := r.SessionID
		if session == "" && !v.machine {
			session = "run " + r.RunID
		}
		t.Rows = append(t.Rows, []string{v.time(r.Time), r.Kind, v.uint(uint64(r.EventID)), r.Tool, r.ClientName, r.ClientVersion, session, r.RunID,
			r.RequestID, v.rev(r.RevisionClient), v.rev(r.RevisionServer), v.rev(r.RevisionValidated), r.ChangeClass,
			r.Outcome, r.Service, r.ServiceVersion, r.Detail})
	}
	return t
}

// Audit lays out one page of the call audit; the arguments are in CSV only.
func Audit(rows []apiv1.AuditRow, f Format) Table {
	v := valuesFor(f)
	t := Table{Title: "Call audit", Columns: []Column{
		{Name: "time", Title: "Time", NoCut: true},
		{Name: "event_id", Title: "Event", Numeric: true, Detail: true},
		{Name: "tool", Title: "Tool"},
		{Name: "service", Title: "Service", Detail: true},
		{Name: "service_version", Title: "Build", Wide: true},
		{Name: "environment", Title: "Environment", Detail: true},
		{Name: "request_id", Title: "Request"},
		{Name: "session_id", Title: "Session"},
		{Name: "run_id", Title: "Run", Wide: true},
		{Name: "client_name", Title: "Client"},
		{Name: "client_version", Title: "Version", Wide: true},
		{Name: "revision_client", Title: "Client rev", NoCut: true},
		{Name: "revision_server", Title: "Server rev", NoCut: true},
		{Name: "revision_validated", Title: "Validated rev", Detail: true},
		{Name: "outcome", Title: "Outcome"},
		{Name: "adapter_id", Title: "Adapter", Wide: true},
		{Name: "approval", Title: "Approval", Wide: true},
		{Name: "privilege", Title: "Privilege", Wide: true},
		{Name: "external_target", Title: "External target", Wide: true},
		{Name: "external_requests", Title: "External requests", Numeric: true, Detail: true},
		{Name: "side_effect_started", Title: "Side effect", Wide: true},
		{Name: "args_raw", Title: "Arguments", Detail: true},
		{Name: "args_normalized", Title: "Normalised arguments", Detail: true},
	}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{v.time(r.Time), v.uint(uint64(r.EventID)), r.Tool, r.Service, r.ServiceVersion, r.Environment,
			r.RequestID, r.SessionID, r.RunID, r.ClientName, r.ClientVersion, v.rev(r.RevisionClient), v.rev(r.RevisionServer),
			v.rev(r.RevisionValidated), r.Outcome, r.AdapterID, r.Approval, r.Privilege, r.ExternalTarget,
			strconv.FormatInt(r.ExternalRequests, 10), v.yes(r.SideEffectStarted), r.ArgsRaw, r.ArgsNormalized})
	}
	return t
}

// Window describes a report window for people.
func Window(from, to time.Time) string {
	return fmt.Sprintf("%s to %s", HumanTime(from), HumanTime(to))
}

// HumanTime formats t to the second, in UTC.
func HumanTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// ShortRevision shortens a digest revision (sha256:<64 hex>) to its first
// 8 hex digits and an ellipsis, "sha256:1a2b3c4d…"; other revisions (a
// version, a number) are returned as they are.
func ShortRevision(r string) string {
	const keep = 8
	if algo, hex, ok := strings.Cut(r, ":"); ok && len(hex) > keep+1 {
		return algo + ":" + hex[:keep] + "…"
	}
	return r
}

// values formats cells for machines (CSV) or people; full keeps whole
// revisions (CSV and the wide format).
type values struct{ machine, full bool }

func valuesFor(f Format) values {
	return values{machine: f == FormatCSV, full: f == FormatCSV || f == FormatWide}
}

// decimal writes f for machines: a plain decimal, exact to float64, never
// an exponent (40052358.7, 0.000015), which spreadsheets and CSV readers
// take for a string or a formula.
func decimal(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func (v values) uint(n uint64) string { return strconv.FormatUint(n, 10) }

func (v values) float(f float64) string {
	if v.machine {
		return decimal(f)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

func (v values) ratio(f float64) string {
	if v.machine {
		return decimal(f)
	}
	return humanize.Percent(f)
}

// none is what people read for a figure that does not exist (a ratio with
// nothing to divide by, an age no call gave); machines read an empty cell.
const none = "—"

func (v values) null() string {
	if v.machine {
		return ""
	}
	return none
}

// stringPtr formats a value that may not exist.
func (v values) stringPtr(s *string) string {
	if s == nil {
		return v.null()
	}
	return *s
}

// class formats the change class of a row's revisions (see
// apiv1.StaleUsageRow.ChangeClass): for people, "none" when the registry
// finds no change and the null mark when it cannot say.
func (v values) class(c *string) string {
	if c != nil && *c == "" && !v.machine {
		return "none"
	}
	return v.stringPtr(c)
}

// ratioPtr formats a ratio that may not exist.
func (v values) ratioPtr(f *float64) string {
	if f == nil {
		return v.null()
	}
	return v.ratio(*f)
}

// floatPtr formats a figure that may not exist.
func (v values) floatPtr(f *float64) string {
	if f == nil {
		return v.null()
	}
	return v.float(*f)
}

// ms formats a duration in milliseconds; nil does not exist.
func (v values) ms(p *float64) string {
	switch {
	case p == nil:
		return v.null()
	case v.machine:
		return decimal(*p)
	case *p < 1000:
		return strconv.FormatFloat(*p, 'f', 0, 64) + "ms"
	case *p < 120_000:
		return strconv.FormatFloat(*p/1000, 'f', 1, 64) + "s"
	case *p < 2*3_600_000:
		return strconv.FormatFloat(*p/60_000, 'f', 1, 64) + "m"
	}
	return strconv.FormatFloat(*p/3_600_000, 'f', 1, 64) + "h"
}

// age formats a session age in seconds; nil is unknown.
func (v values) age(s *int64) string {
	switch {
	case s == nil:
		return v.null()
	case v.machine:
		return strconv.FormatInt(*s, 10)
	}
	return humanize.Age(*s)
}

// yesPtr is yes, and what the format writes for null when b is nil.
func (v values) yesPtr(b *bool) string {
	if b == nil {
		return v.null()
	}
	return v.yes(*b)
}

func (v values) yes(b bool) string {
	if v.machine {
		return strconv.FormatBool(b)
	}
	if b {
		return "yes"
	}
	return "no"
}

func (v values) time(t time.Time) string {
	if v.machine {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return HumanTime(t)
}

func (v values) timePtr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return v.time(*t)
}

func (v values) rev(r string) string {
	if v.full {
		return r
	}
	return ShortRevision(r)
}

func (v values) revs(rs []string) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = v.rev(r)
	}
	return v.list(out)
}

func (v values) list(s []string) string {
	if v.machine {
		return strings.Join(s, ";")
	}
	return strings.Join(s, ", ")
}

// clients lists client usages: name@version=calls;… for machines,
// "name@version (calls)" for people; with the calls to the tool without a
// client revision, when there are any, name@version=calls,unknown_revision=n
// and "name@version (calls; n without revision)".
func (v values) clients(cs []apiv1.ClientUsage) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		switch {
		case v.machine && c.UnknownRevisionCalls > 0:
			out[i] = fmt.Sprintf("%s=%d,unknown_revision=%d", c.Client, c.Calls, c.UnknownRevisionCalls)
		case v.machine:
			out[i] = fmt.Sprintf("%s=%d", c.Client, c.Calls)
		case c.UnknownRevisionCalls > 0:
			out[i] = fmt.Sprintf("%s (%d; %d without revision)", c.Client, c.Calls, c.UnknownRevisionCalls)
		default:
			out[i] = fmt.Sprintf("%s (%d)", c.Client, c.Calls)
		}
	}
	return v.list(out)
}

// client names a client for people: "(unknown client)" for events that
// named none; machines read the empty cell.
func (v values) client(c string) string {
	if c == "" && !v.machine {
		return "(unknown client)"
	}
	return c
}

// fields lists contract errors by tool and field: tool.field=errors;… for
// machines, "tool: field (errors)" for people.
func (v values) fields(fs []apiv1.ContractField) string {
	out := make([]string, len(fs))
	for i, c := range fs {
		if v.machine {
			out[i] = fmt.Sprintf("%s:%s=%d", c.Tool, c.Field, c.ContractErrors)
		} else {
			out[i] = fmt.Sprintf("%s: %s (%d)", c.Tool, c.Field, c.ContractErrors)
		}
	}
	return v.list(out)
}
