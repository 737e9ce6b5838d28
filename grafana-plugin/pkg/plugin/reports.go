package plugin

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/mcpdrift/mcpdrift/apiv1"
)

// metric is a count of a report that a time series draws: summed over the
// rows of a bucket, or, for latencies, their maximum.
type metric[T any] struct {
	name, display, unit string
	// max aggregates by maximum (a latency); its values may be absent.
	max bool
	get func(T) (float64, bool)
}

func sum[T any](name, display string, get func(T) uint64) metric[T] {
	return metric[T]{name: name, display: display, unit: unitCount, get: func(r T) (float64, bool) { return float64(get(r)), true }}
}

func peak[T any](name, display, unit string, get func(T) *float64) metric[T] {
	return metric[T]{name: name, display: display, unit: unit, max: true, get: func(r T) (float64, bool) {
		if v := get(r); v != nil {
			return *v, true
		}
		return 0, false
	}}
}

// MetricInfo describes a count a time series can draw.
type MetricInfo struct {
	Name    string `json:"name"`
	Display string `json:"display"`
	Unit    string `json:"unit"`
	// Max is true for latencies, aggregated by maximum and absent where
	// nothing was measured; counts are summed and zero-filled.
	Max bool `json:"max,omitempty"`
}

// report is one report of the API, as the plugin serves it.
type report interface {
	// metricNames lists the counts a time series can draw, the main one
	// first; dimensions the groupings.
	metricNames() []string
	metricInfo() []MetricInfo
	dimensions() []string
	// timed reports carry a time per row: their series are bucketed from
	// one read of the window, unless the API serves their series.
	timed() bool
	// seriesPath is the API's series endpoint of the report; "" for a
	// report without one.
	seriesPath() string
	title() string
	// table reads the report over [from, to) as a table frame.
	table(ctx context.Context, r *runner, q Query, from, to time.Time) (*data.Frame, error)
	// samples reads the report over [from, to) and returns each row's
	// time (timed reports), grouping values and counts.
	samples(ctx context.Context, r *runner, q Query, from, to time.Time) ([]sample, string, error)
}

// sample is one row reduced to what a time series needs.
type sample struct {
	t    time.Time
	dims []string  // in the order of the query's GroupBy
	vals []float64 // in the order of the query's metrics
	ok   []bool    // whether vals[i] is present
	_    struct{}
}

// reportOf is a report whose rows are T.
type reportOf[T any] struct {
	name, heading, path string
	// series says that the API serves the report's series at path +
	// "/series".
	series bool
	// paged reports are read page by page up to Settings.MaxRows.
	paged bool
	// params adds the report's own parameters; window is false for the
	// buckets of a time series.
	params  func(q Query, v url.Values, window bool)
	keep    func(q Query, row T) bool
	cols    []column[T]
	metrics []metric[T]
	dims    []dimension[T]
	timeOf  func(T) time.Time
}

// dimension is a grouping of a report's series; get reads it from a row
// of a timed report, which is bucketed here (nil for a dimension only the
// API's series has).
type dimension[T any] struct {
	name string
	get  func(T) string
}

func dim[T any](name string, get func(T) string) dimension[T] { return dimension[T]{name, get} }

func (r *reportOf[T]) metricNames() []string {
	out := make([]string, len(r.metrics))
	for i, m := range r.metrics {
		out[i] = m.name
	}
	return out
}

func (r *reportOf[T]) metricInfo() []MetricInfo {
	out := make([]MetricInfo, len(r.metrics))
	for i, m := range r.metrics {
		out[i] = MetricInfo{Name: m.name, Display: m.display, Unit: m.unit, Max: m.max}
	}
	return out
}

func (r *reportOf[T]) dimensions() []string {
	out := make([]string, len(r.dims))
	for i, d := range r.dims {
		out[i] = d.name
	}
	return out
}

func (r *reportOf[T]) timed() bool { return r.timeOf != nil }

func (r *reportOf[T]) seriesPath() string {
	if !r.series {
		return ""
	}
	return r.path + "/series"
}

func (r *reportOf[T]) title() string { return r.heading }

// fetch reads the rows over [from, to); executed is the request as the
// query inspector shows it, truncated whether MaxRows cut the read short.
func (r *reportOf[T]) fetch(ctx context.Context, rn *runner, q Query, from, to time.Time, window bool) (rows []T, executed string, truncated bool, err error) {
	v := q.filterParams(from, to)
	if r.params != nil {
		r.params(q, v, window)
	}
	executed = r.path + "?" + v.Encode()
	if !r.paged {
		var b apiv1.ReportBody[T]
		if err := rn.c.get(ctx, r.path, v, &b); err != nil {
			return nil, executed, false, err
		}
		rows = b.Rows
	} else {
		v.Set(apiv1.ParamLimit, "1000")
		for {
			var b apiv1.ReportBody[T]
			if err := rn.c.get(ctx, r.path, v, &b); err != nil {
				return nil, executed, false, err
			}
			rows = append(rows, b.Rows...)
			if b.Next == "" {
				break
			}
			if len(rows) >= rn.s.MaxRows {
				truncated = true
				break
			}
			v.Set(apiv1.ParamCursor, b.Next)
		}
	}
	if r.keep != nil {
		rows = slices.DeleteFunc(rows, func(row T) bool { return !r.keep(q, row) })
	}
	if rows == nil {
		rows = []T{}
	}
	return rows, executed, truncated, nil
}

func (r *reportOf[T]) table(ctx context.Context, rn *runner, q Query, from, to time.Time) (*data.Frame, error) {
	rows, executed, truncated, err := r.fetch(ctx, rn, q, from, to, true)
	if err != nil {
		return nil, err
	}
	f := tableFrame(r.name, r.cols, rows)
	f.Meta.ExecutedQueryString = "GET " + executed
	if truncated {
		f.AppendNotices(data.Notice{Severity: data.NoticeSeverityWarning,
			Text: "Showing the first " + strconv.Itoa(len(rows)) + " rows; narrow the filter or the time range to see the rest."})
	}
	return f, nil
}

func (r *reportOf[T]) samples(ctx context.Context, rn *runner, q Query, from, to time.Time) ([]sample, string, error) {
	rows, executed, truncated, err := r.fetch(ctx, rn, q, from, to, false)
	if err != nil {
		return nil, executed, err
	}
	if truncated {
		executed += " (first " + strconv.Itoa(len(rows)) + " rows)"
	}
	metrics := r.pick(q)
	dims := make([]dimension[T], len(q.GroupBy))
	for i, g := range q.GroupBy {
		dims[i] = r.dims[slices.IndexFunc(r.dims, func(d dimension[T]) bool { return d.name == g })]
	}
	out := make([]sample, len(rows))
	for i, row := range rows {
		s := sample{dims: make([]string, len(dims)), vals: make([]float64, len(metrics)), ok: make([]bool, len(metrics))}
		if r.timeOf != nil {
			s.t = r.timeOf(row)
		}
		for j, d := range dims {
			s.dims[j] = d.get(row)
		}
		for j, m := range metrics {
			s.vals[j], s.ok[j] = m.get(row)
		}
		out[i] = s
	}
	return out, executed, nil
}

// pick returns the query's metrics, the main one when it names none.
func (r *reportOf[T]) pick(q Query) []metric[T] {
	if len(q.Metrics) == 0 {
		return r.metrics[:1]
	}
	out := make([]metric[T], len(q.Metrics))
	for i, name := range q.Metrics {
		out[i] = r.metrics[slices.IndexFunc(r.metrics, func(m metric[T]) bool { return m.name == name })]
	}
	return out
}

// metricsOf returns the definitions of the query's metrics.
func metricsOf(rep report, q Query) []MetricInfo {
	all := rep.metricInfo()
	if len(q.Metrics) == 0 {
		return all[:1]
	}
	out := make([]MetricInfo, len(q.Metrics))
	for i, name := range q.Metrics {
		out[i] = all[slices.IndexFunc(all, func(m MetricInfo) bool { return m.Name == name })]
	}
	return out
}

func optTime(t *time.Time) *time.Time { return t }

// reports are the reports by query type.
var reports = map[string]report{
	QueryTypeStaleUsage: &reportOf[apiv1.StaleUsageRow]{
		name: QueryTypeStaleUsage, heading: "Stale-revision usage", path: "/api/v1/reports/stale-usage", series: true,
		cols: []column[apiv1.StaleUsageRow]{
			text("tool", "Tool", func(r apiv1.StaleUsageRow) string { return r.Tool }),
			text("revision_client", "Client revision", func(r apiv1.StaleUsageRow) string { return r.RevisionClient }),
			text("revision_server", "Server revision", func(r apiv1.StaleUsageRow) string { return r.RevisionServer }),
			flagOpt("stale", "Stale", func(r apiv1.StaleUsageRow) *bool { return r.Stale }),
			count("calls", "Calls", func(r apiv1.StaleUsageRow) uint64 { return r.Calls }),
			count("current", "Current", func(r apiv1.StaleUsageRow) uint64 { return r.Current }),
			count("normalized", "Normalized", func(r apiv1.StaleUsageRow) uint64 { return r.Normalized }),
			count("rejected", "Rejected", func(r apiv1.StaleUsageRow) uint64 { return r.Rejected }),
			count("removed", "Removed", func(r apiv1.StaleUsageRow) uint64 { return r.Removed }),
			count("failed", "Failed", func(r apiv1.StaleUsageRow) uint64 { return r.Failed }),
			count("sessions", "Sessions", func(r apiv1.StaleUsageRow) uint64 { return r.Sessions }),
			count("runs", "Runs", func(r apiv1.StaleUsageRow) uint64 { return r.Runs }),
			count("clients", "Clients", func(r apiv1.StaleUsageRow) uint64 { return r.Clients }),
			when("first_seen", "First seen", func(r apiv1.StaleUsageRow) time.Time { return r.FirstSeen }),
			when("last_seen", "Last seen", func(r apiv1.StaleUsageRow) time.Time { return r.LastSeen }),
			count("calls_previous", "Calls in the period before", func(r apiv1.StaleUsageRow) uint64 { return r.CallsPrevious }),
			col("trend", "Trend", "", func(r apiv1.StaleUsageRow) *string { return r.Trend }),
			col("change_class", "Change class", "", func(r apiv1.StaleUsageRow) *string { return r.ChangeClass }),
			col("change", "Change", "", func(r apiv1.StaleUsageRow) *string { return r.Change }),
		},
		metrics: []metric[apiv1.StaleUsageRow]{
			sum("stale_calls", "Stale calls", func(r apiv1.StaleUsageRow) uint64 {
				if r.Stale != nil && *r.Stale {
					return r.Calls
				}
				return 0
			}),
			sum("calls", "Calls", func(r apiv1.StaleUsageRow) uint64 { return r.Calls }),
			sum("normalized", "Normalized calls", func(r apiv1.StaleUsageRow) uint64 { return r.Normalized }),
			sum("rejected", "Rejected calls", func(r apiv1.StaleUsageRow) uint64 { return r.Rejected }),
			sum("current", "Current calls", func(r apiv1.StaleUsageRow) uint64 { return r.Current }),
			sum("removed", "Calls to removed tools", func(r apiv1.StaleUsageRow) uint64 { return r.Removed }),
			sum("failed", "Failed calls", func(r apiv1.StaleUsageRow) uint64 { return r.Failed }),
		},
		dims: []dimension[apiv1.StaleUsageRow]{
			dim("tool", func(r apiv1.StaleUsageRow) string { return r.Tool }),
			dim("revision_client", func(r apiv1.StaleUsageRow) string { return r.RevisionClient }),
			dim("revision_server", func(r apiv1.StaleUsageRow) string { return r.RevisionServer }),
			dim[apiv1.StaleUsageRow]("client", nil),
		},
	},
	QueryTypeRejections: &reportOf[apiv1.RejectionRow]{
		name: QueryTypeRejections, heading: "Rejections", path: "/api/v1/reports/rejections", series: true,
		cols: []column[apiv1.RejectionRow]{
			text("tool", "Tool", func(r apiv1.RejectionRow) string { return r.Tool }),
			text("revision_client", "Client revision", func(r apiv1.RejectionRow) string { return r.RevisionClient }),
			text("revision_server", "Server revision", func(r apiv1.RejectionRow) string { return r.RevisionServer }),
			text("outcome", "Outcome", func(r apiv1.RejectionRow) string { return r.Outcome }),
			text("error_code", "Error code", func(r apiv1.RejectionRow) string { return r.ErrorCode }),
			text("client", "Client", rejectionClient),
			count("rejected", "Rejected", func(r apiv1.RejectionRow) uint64 { return r.Rejected }),
			count("tool_calls", "Tool calls", func(r apiv1.RejectionRow) uint64 { return r.ToolCalls }),
			col("rejection_rate", "Rejection rate", unitPercent, func(r apiv1.RejectionRow) float64 { return r.RejectionRate }),
			count("side_effect_violations", "Side effect started", func(r apiv1.RejectionRow) uint64 { return r.SideEffectViolations }),
			count("sessions", "Sessions", func(r apiv1.RejectionRow) uint64 { return r.Sessions }),
			when("first_seen", "First seen", func(r apiv1.RejectionRow) time.Time { return r.FirstSeen }),
			when("last_seen", "Last seen", func(r apiv1.RejectionRow) time.Time { return r.LastSeen }),
			col("change_class", "Change class", "", func(r apiv1.RejectionRow) *string { return r.ChangeClass }),
			col("change", "Change", "", func(r apiv1.RejectionRow) *string { return r.Change }),
		},
		metrics: []metric[apiv1.RejectionRow]{
			sum("rejected", "Rejected calls", func(r apiv1.RejectionRow) uint64 { return r.Rejected }),
			sum("side_effect_violations", "Rejected with side effect started", func(r apiv1.RejectionRow) uint64 { return r.SideEffectViolations }),
		},
		dims: []dimension[apiv1.RejectionRow]{
			dim("tool", func(r apiv1.RejectionRow) string { return r.Tool }),
			dim("error_code", func(r apiv1.RejectionRow) string { return r.ErrorCode }),
			dim("outcome", func(r apiv1.RejectionRow) string { return r.Outcome }),
			dim("client", rejectionClient),
			dim("revision_client", func(r apiv1.RejectionRow) string { return r.RevisionClient }),
			dim("revision_server", func(r apiv1.RejectionRow) string { return r.RevisionServer }),
		},
	},
	QueryTypeRepairs: &reportOf[apiv1.RepairRow]{
		name: QueryTypeRepairs, heading: "Repairs", path: "/api/v1/reports/repairs", series: true,
		cols: []column[apiv1.RepairRow]{
			text("tool", "Tool", func(r apiv1.RepairRow) string { return r.Tool }),
			count("stale_rejections", "Stale rejections", func(r apiv1.RepairRow) uint64 { return r.StaleRejections }),
			count("rejections", "Rejections", func(r apiv1.RepairRow) uint64 { return r.Rejections }),
			count("retry_calls", "Retries", func(r apiv1.RepairRow) uint64 { return r.RetryCalls }),
			col("amplification", "Retries per rejection", "x", func(r apiv1.RepairRow) *float64 { return r.Amplification }),
			count("incompatible_rejections", "Incompatible rejections", func(r apiv1.RepairRow) uint64 { return r.IncompatibleRejections }),
			count("invalid_rejections", "Invalid rejections", func(r apiv1.RepairRow) uint64 { return r.InvalidRejections }),
			count("removed_calls", "Calls to removed tools", func(r apiv1.RepairRow) uint64 { return r.RemovedCalls }),
			count("retries_after_stale", "Retries after stale", func(r apiv1.RepairRow) uint64 { return r.RetriesAfterStale }),
			count("retries_after_incompatible", "Retries after incompatible", func(r apiv1.RepairRow) uint64 { return r.RetriesAfterIncompatible }),
			count("retries_after_invalid", "Retries after invalid", func(r apiv1.RepairRow) uint64 { return r.RetriesAfterInvalid }),
			count("retries_after_removed", "Retries after removed", func(r apiv1.RepairRow) uint64 { return r.RetriesAfterRemoved }),
			count("retries_after_other", "Retries after other", func(r apiv1.RepairRow) uint64 { return r.RetriesAfterOther }),
			col("amplification_stale", "Retries per stale rejection", "x", func(r apiv1.RepairRow) *float64 { return r.AmplificationStale }),
			col("amplification_incompatible", "Retries per incompatible rejection", "x", func(r apiv1.RepairRow) *float64 { return r.AmplificationIncompatible }),
			col("amplification_invalid", "Retries per invalid rejection", "x", func(r apiv1.RepairRow) *float64 { return r.AmplificationInvalid }),
			col("amplification_removed", "Retries per removed call", "x", func(r apiv1.RepairRow) *float64 { return r.AmplificationRemoved }),
			count("refresh_retries", "Refresh and retry", func(r apiv1.RepairRow) uint64 { return r.RefreshRetries }),
			count("model_repairs", "Model repairs", func(r apiv1.RepairRow) uint64 { return r.ModelRepairs }),
			count("human_approvals", "Human approvals", func(r apiv1.RepairRow) uint64 { return r.HumanApprovals }),
			count("human_approvals_denied", "Human approvals denied", func(r apiv1.RepairRow) uint64 { return r.HumanApprovalsDenied }),
			count("abandons", "Abandoned", func(r apiv1.RepairRow) uint64 { return r.Abandons }),
			count("automatic_repairs", "Automatic repairs", func(r apiv1.RepairRow) uint64 { return r.AutomaticRepairs }),
			count("automatic_succeeded", "Automatic succeeded", func(r apiv1.RepairRow) uint64 { return r.AutomaticSucceeded }),
			count("automatic_failed", "Automatic failed", func(r apiv1.RepairRow) uint64 { return r.AutomaticFailed }),
			col("automatic_success_rate", "Automatic success rate", unitPercent, func(r apiv1.RepairRow) *float64 { return r.AutomaticSuccessRate }),
			col("automatic_repair_p50_ms", "Automatic time to repair p50", unitMs, func(r apiv1.RepairRow) *float64 { return r.AutomaticRepairP50Ms }),
			col("automatic_repair_p95_ms", "Automatic time to repair p95", unitMs, func(r apiv1.RepairRow) *float64 { return r.AutomaticRepairP95Ms }),
			col("human_repair_p50_ms", "Human time to repair p50", unitMs, func(r apiv1.RepairRow) *float64 { return r.HumanRepairP50Ms }),
			col("human_repair_p95_ms", "Human time to repair p95", unitMs, func(r apiv1.RepairRow) *float64 { return r.HumanRepairP95Ms }),
		},
		metrics: []metric[apiv1.RepairRow]{
			sum("stale_rejections", "Stale rejections", func(r apiv1.RepairRow) uint64 { return r.StaleRejections }),
			sum("retry_calls", "Retries", func(r apiv1.RepairRow) uint64 { return r.RetryCalls }),
			sum("automatic_repairs", "Automatic repairs", func(r apiv1.RepairRow) uint64 { return r.AutomaticRepairs }),
			sum("automatic_succeeded", "Automatic repairs succeeded", func(r apiv1.RepairRow) uint64 { return r.AutomaticSucceeded }),
			sum("automatic_failed", "Automatic repairs failed", func(r apiv1.RepairRow) uint64 { return r.AutomaticFailed }),
			sum("refresh_retries", "Refresh and retry", func(r apiv1.RepairRow) uint64 { return r.RefreshRetries }),
			sum("model_repairs", "Model repairs", func(r apiv1.RepairRow) uint64 { return r.ModelRepairs }),
			sum("human_approvals", "Human approvals", func(r apiv1.RepairRow) uint64 { return r.HumanApprovals }),
			sum("human_approvals_denied", "Human approvals denied", func(r apiv1.RepairRow) uint64 { return r.HumanApprovalsDenied }),
			sum("abandons", "Abandoned", func(r apiv1.RepairRow) uint64 { return r.Abandons }),
			sum("rejections", "Rejections", func(r apiv1.RepairRow) uint64 { return r.Rejections }),
			peak("automatic_repair_p95_ms", "Automatic time to repair p95", unitMs, func(r apiv1.RepairRow) *float64 { return r.AutomaticRepairP95Ms }),
			peak("human_repair_p95_ms", "Human time to repair p95", unitMs, func(r apiv1.RepairRow) *float64 { return r.HumanRepairP95Ms }),
		},
		dims: []dimension[apiv1.RepairRow]{
			dim("tool", func(r apiv1.RepairRow) string { return r.Tool }),
		},
	},
	QueryTypeAdapterRetirement: &reportOf[apiv1.AdapterRow]{
		name: QueryTypeAdapterRetirement, heading: "Adapter retirement", path: "/api/v1/reports/adapter-retirement", series: true,
		params: func(q Query, v url.Values, window bool) { q.retirementParams(v, window) },
		cols: []column[apiv1.AdapterRow]{
			text("adapter_id", "Adapter", func(r apiv1.AdapterRow) string { return r.AdapterID }),
			text("tool", "Tool", func(r apiv1.AdapterRow) string { return r.Tool }),
			text("verdict", "Verdict", func(r apiv1.AdapterRow) string { return r.Verdict }),
			text("reason", "Reason", func(r apiv1.AdapterRow) string { return r.Reason }),
			text("blocking_clients", "Blocking clients", func(r apiv1.AdapterRow) string { return usageList(r.BlockingClients) }),
			count("calls", "Calls", func(r apiv1.AdapterRow) uint64 { return r.Calls }),
			count("tool_calls", "Tool calls", func(r apiv1.AdapterRow) uint64 { return r.ToolCalls }),
			col("share", "Share of tool calls", unitPercent, func(r apiv1.AdapterRow) float64 { return r.Share }),
			count("would_be_rejected", "Would be rejected", func(r apiv1.AdapterRow) uint64 { return r.WouldBeRejected }),
			count("unknown_revision_calls", "Tool calls without a client revision", func(r apiv1.AdapterRow) uint64 { return r.UnknownRevisionCalls }),
			whenOpt("last_seen", "Last seen", func(r apiv1.AdapterRow) *time.Time { return optTime(r.LastSeen) }),
			whenOpt("first_seen", "First seen", func(r apiv1.AdapterRow) *time.Time { return optTime(r.FirstSeen) }),
			count("sessions", "Sessions", func(r apiv1.AdapterRow) uint64 { return r.Sessions }),
			count("clients", "Clients", func(r apiv1.AdapterRow) uint64 { return r.Clients }),
			count("services", "Services", func(r apiv1.AdapterRow) uint64 { return r.Services }),
			text("service_names", "Service names", func(r apiv1.AdapterRow) string { return joinComma(r.ServiceNames) }),
			text("max_privilege", "Highest privilege", func(r apiv1.AdapterRow) string { return r.MaxPrivilege }),
			col("max_session_age_s", "Oldest session", unitSeconds, func(r apiv1.AdapterRow) *int64 { return r.MaxSessionAgeS }),
			flag("registered", "Declared", func(r apiv1.AdapterRow) bool { return r.Registered }),
			text("revision_from", "From revision", func(r apiv1.AdapterRow) string { return r.RevisionFrom }),
			text("revision_to", "To revision", func(r apiv1.AdapterRow) string { return r.RevisionTo }),
			text("change_class", "Change class", func(r apiv1.AdapterRow) string { return r.ChangeClass }),
			col("registry_change_class", "Registry change class", "", func(r apiv1.AdapterRow) *string { return r.RegistryChangeClass }),
			col("change", "Bridges", "", func(r apiv1.AdapterRow) *string { return r.Change }),
			whenOpt("window_end", "Declared window end", func(r apiv1.AdapterRow) *time.Time { return optTime(r.WindowEnd) }),
			flag("window_ended", "Window ended", func(r apiv1.AdapterRow) bool { return r.WindowEnded }),
			text("callers", "Callers", func(r apiv1.AdapterRow) string { return usageList(r.Callers) }),
		},
		metrics: []metric[apiv1.AdapterRow]{
			sum("calls", "Calls through the adapter", func(r apiv1.AdapterRow) uint64 { return r.Calls }),
			sum("would_be_rejected", "Would be rejected", func(r apiv1.AdapterRow) uint64 { return r.WouldBeRejected }),
			sum("tool_calls", "Tool calls", func(r apiv1.AdapterRow) uint64 { return r.ToolCalls }),
		},
		dims: []dimension[apiv1.AdapterRow]{
			dim("adapter", func(r apiv1.AdapterRow) string { return r.AdapterID }),
			dim("tool", func(r apiv1.AdapterRow) string { return r.Tool }),
		},
	},
	QueryTypePropagation: &reportOf[apiv1.PropagationRow]{
		name: QueryTypePropagation, heading: "Notification propagation", path: "/api/v1/reports/propagation", series: true,
		cols: []column[apiv1.PropagationRow]{
			text("tool", "Tool", func(r apiv1.PropagationRow) string { return r.Tool }),
			count("notified_sessions", "Notified sessions", func(r apiv1.PropagationRow) uint64 { return r.NotifiedSessions }),
			count("refreshed_sessions", "Refreshed", func(r apiv1.PropagationRow) uint64 { return r.RefreshedSessions }),
			count("never_refreshed", "Never refreshed", func(r apiv1.PropagationRow) uint64 { return r.NeverRefreshed }),
			col("lag_p50_ms", "Refresh lag p50", unitMs, func(r apiv1.PropagationRow) *float64 { return r.LagP50Ms }),
			col("lag_p95_ms", "Refresh lag p95", unitMs, func(r apiv1.PropagationRow) *float64 { return r.LagP95Ms }),
			col("lag_max_ms", "Refresh lag max", unitMs, func(r apiv1.PropagationRow) *int64 { return r.LagMaxMs }),
			count("stale_calls_after_notice", "Stale calls after notice", func(r apiv1.PropagationRow) uint64 { return r.StaleCallsAfterNotice }),
			count("stale_calls_after_refresh", "Stale calls after refresh", func(r apiv1.PropagationRow) uint64 { return r.StaleCallsAfterRefresh }),
			count("sessions_with_stale_calls", "Sessions with stale calls", func(r apiv1.PropagationRow) uint64 { return r.SessionsWithStaleCalls }),
		},
		metrics: []metric[apiv1.PropagationRow]{
			sum("notified_sessions", "Notified sessions", func(r apiv1.PropagationRow) uint64 { return r.NotifiedSessions }),
			sum("refreshed_sessions", "Refreshed sessions", func(r apiv1.PropagationRow) uint64 { return r.RefreshedSessions }),
			sum("never_refreshed", "Never refreshed", func(r apiv1.PropagationRow) uint64 { return r.NeverRefreshed }),
			sum("stale_calls_after_notice", "Stale calls after notice", func(r apiv1.PropagationRow) uint64 { return r.StaleCallsAfterNotice }),
			sum("stale_calls_after_refresh", "Stale calls after refresh", func(r apiv1.PropagationRow) uint64 { return r.StaleCallsAfterRefresh }),
			peak("lag_p50_ms", "Refresh lag p50", unitMs, func(r apiv1.PropagationRow) *float64 { return r.LagP50Ms }),
			peak("lag_p95_ms", "Refresh lag p95", unitMs, func(r apiv1.PropagationRow) *float64 { return r.LagP95Ms }),
			peak("lag_max_ms", "Refresh lag max", unitMs, func(r apiv1.PropagationRow) *float64 {
				if r.LagMaxMs == nil {
					return nil
				}
				v := float64(*r.LagMaxMs)
				return &v
			}),
		},
		dims: []dimension[apiv1.PropagationRow]{
			dim("tool", func(r apiv1.PropagationRow) string { return r.Tool }),
		},
	},
	QueryTypeViolations: &reportOf[apiv1.ViolationRow]{
		name: QueryTypeViolations, heading: "Safety violations", path: "/api/v1/reports/violations", paged: true, series: true,
		keep:   func(q Query, r apiv1.ViolationRow) bool { return q.Kind == "" || r.Kind == q.Kind },
		timeOf: func(r apiv1.ViolationRow) time.Time { return r.Time },
		cols: []column[apiv1.ViolationRow]{
			when("time", "Time", func(r apiv1.ViolationRow) time.Time { return r.Time }),
			text("kind", "Kind", func(r apiv1.ViolationRow) string { return r.Kind }),
			text("tool", "Tool", func(r apiv1.ViolationRow) string { return r.Tool }),
			text("client", "Client", violationClient),
			text("detail", "Detail", func(r apiv1.ViolationRow) string { return r.Detail }),
			text("outcome", "Outcome", func(r apiv1.ViolationRow) string { return r.Outcome }),
			text("revision_client", "Client revision", func(r apiv1.ViolationRow) string { return r.RevisionClient }),
			text("revision_server", "Server revision", func(r apiv1.ViolationRow) string { return r.RevisionServer }),
			text("revision_validated", "Validated revision", func(r apiv1.ViolationRow) string { return r.RevisionValidated }),
			text("change_class", "Change class", func(r apiv1.ViolationRow) string { return r.ChangeClass }),
			text("service", "Service", func(r apiv1.ViolationRow) string { return r.Service }),
			text("service_version", "Handler build", func(r apiv1.ViolationRow) string { return r.ServiceVersion }),
			text("session_id", "Session", func(r apiv1.ViolationRow) string { return r.SessionID }),
			text("run_id", "Run", func(r apiv1.ViolationRow) string { return r.RunID }),
			text("request_id", "Request", func(r apiv1.ViolationRow) string { return r.RequestID }),
			text("event_id", "Event", func(r apiv1.ViolationRow) string { return strconv.FormatUint(uint64(r.EventID), 10) }),
		},
		metrics: []metric[apiv1.ViolationRow]{
			sum("violations", "Violations", func(apiv1.ViolationRow) uint64 { return 1 }),
		},
		dims: []dimension[apiv1.ViolationRow]{
			dim("kind", func(r apiv1.ViolationRow) string { return r.Kind }),
			dim("tool", func(r apiv1.ViolationRow) string { return r.Tool }),
			dim("client", violationClient),
			dim("service", func(r apiv1.ViolationRow) string { return r.Service }),
			dim("outcome", func(r apiv1.ViolationRow) string { return r.Outcome }),
		},
	},
	QueryTypeRevisionSources: &reportOf[apiv1.RevisionSourceRow]{
		name: QueryTypeRevisionSources, heading: "Revision sources", path: "/api/v1/reports/revision-sources", series: true,
		cols: []column[apiv1.RevisionSourceRow]{
			text("tool", "Tool", func(r apiv1.RevisionSourceRow) string { return r.Tool }),
			text("client", "Client", func(r apiv1.RevisionSourceRow) string { return r.Client }),
			count("calls", "Calls", func(r apiv1.RevisionSourceRow) uint64 { return r.Calls }),
			count("declared", "Declared", func(r apiv1.RevisionSourceRow) uint64 { return r.Declared }),
			count("listed", "Listed", func(r apiv1.RevisionSourceRow) uint64 { return r.Listed }),
			count("inferred", "Inferred", func(r apiv1.RevisionSourceRow) uint64 { return r.Inferred }),
			count("unknown", "Unknown", func(r apiv1.RevisionSourceRow) uint64 { return r.Unknown }),
			col("unknown_share", "Unknown share", unitPercent, func(r apiv1.RevisionSourceRow) *float64 { return r.UnknownShare }),
		},
		metrics: []metric[apiv1.RevisionSourceRow]{
			sum("unknown", "Calls without a client revision", func(r apiv1.RevisionSourceRow) uint64 { return r.Unknown }),
			sum("calls", "Calls", func(r apiv1.RevisionSourceRow) uint64 { return r.Calls }),
			sum("declared", "Declared by the client", func(r apiv1.RevisionSourceRow) uint64 { return r.Declared }),
			sum("listed", "Listed to the session", func(r apiv1.RevisionSourceRow) uint64 { return r.Listed }),
			sum("inferred", "Inferred from the arguments", func(r apiv1.RevisionSourceRow) uint64 { return r.Inferred }),
			peak("unknown_share", "Unknown share", unitPercent, func(r apiv1.RevisionSourceRow) *float64 { return r.UnknownShare }),
		},
		dims: []dimension[apiv1.RevisionSourceRow]{
			dim("tool", func(r apiv1.RevisionSourceRow) string { return r.Tool }),
			dim("client", func(r apiv1.RevisionSourceRow) string { return r.Client }),
		},
	},
	QueryTypeContractErrors: &reportOf[apiv1.ContractErrorRow]{
		name: QueryTypeContractErrors, heading: "Contract errors", path: "/api/v1/reports/contract-errors", series: true,
		cols: []column[apiv1.ContractErrorRow]{
			text("client", "Client", func(r apiv1.ContractErrorRow) string { return r.Client }),
			count("contract_errors", "Contract errors", func(r apiv1.ContractErrorRow) uint64 { return r.ContractErrors }),
			text("fields", "Tools and fields", func(r apiv1.ContractErrorRow) string { return fieldList(r.Fields) }),
			count("refreshes", "Refreshes", func(r apiv1.ContractErrorRow) uint64 { return r.Refreshes }),
			count("failed_refreshes", "Failed refreshes", func(r apiv1.ContractErrorRow) uint64 { return r.FailedRefreshes }),
			col("refresh_failure_rate", "Refresh failure rate", unitPercent, func(r apiv1.ContractErrorRow) *float64 { return r.RefreshFailureRate }),
			count("sessions", "Sessions", func(r apiv1.ContractErrorRow) uint64 { return r.Sessions }),
			when("last_seen", "Last seen", func(r apiv1.ContractErrorRow) time.Time { return r.LastSeen }),
		},
		metrics: []metric[apiv1.ContractErrorRow]{
			sum("contract_errors", "Contract errors", func(r apiv1.ContractErrorRow) uint64 { return r.ContractErrors }),
			sum("refreshes", "Refreshes", func(r apiv1.ContractErrorRow) uint64 { return r.Refreshes }),
			sum("failed_refreshes", "Failed refreshes", func(r apiv1.ContractErrorRow) uint64 { return r.FailedRefreshes }),
			peak("refresh_failure_rate", "Refresh failure rate", unitPercent, func(r apiv1.ContractErrorRow) *float64 { return r.RefreshFailureRate }),
		},
		// Grouped by tool, the refreshes are in the group without one: a
		// refresh re-lists every tool (the API's series says so).
		dims: []dimension[apiv1.ContractErrorRow]{
			dim("client", func(r apiv1.ContractErrorRow) string { return r.Client }),
			dim[apiv1.ContractErrorRow]("tool", nil),
		},
	},
	QueryTypeAudit: &reportOf[apiv1.AuditRow]{
		name: QueryTypeAudit, heading: "Call audit", path: "/api/v1/audit/calls", paged: true, series: true,
		params: func(q Query, v url.Values, _ bool) { q.auditParams(v) },
		keep:   func(q Query, r apiv1.AuditRow) bool { return !q.StaleOnly || auditStale(r) },
		timeOf: func(r apiv1.AuditRow) time.Time { return r.Time },
		cols: []column[apiv1.AuditRow]{
			when("time", "Time", func(r apiv1.AuditRow) time.Time { return r.Time }),
			text("tool", "Tool", func(r apiv1.AuditRow) string { return r.Tool }),
			text("outcome", "Outcome", func(r apiv1.AuditRow) string { return r.Outcome }),
			text("client", "Client", auditClient),
			text("revision_client", "Client revision", func(r apiv1.AuditRow) string { return r.RevisionClient }),
			text("revision_server", "Server revision", func(r apiv1.AuditRow) string { return r.RevisionServer }),
			text("revision_validated", "Validated revision", func(r apiv1.AuditRow) string { return r.RevisionValidated }),
			text("adapter_id", "Adapter", func(r apiv1.AuditRow) string { return r.AdapterID }),
			text("approval", "Approval", func(r apiv1.AuditRow) string { return r.Approval }),
			text("privilege", "Privilege", func(r apiv1.AuditRow) string { return r.Privilege }),
			flag("side_effect_started", "Side effect started", func(r apiv1.AuditRow) bool { return r.SideEffectStarted }),
			text("external_target", "External target", func(r apiv1.AuditRow) string { return r.ExternalTarget }),
			col("external_requests", "External requests", unitCount, func(r apiv1.AuditRow) int64 { return r.ExternalRequests }),
			text("args_raw", "Arguments (raw)", func(r apiv1.AuditRow) string { return r.ArgsRaw }),
			text("args_normalized", "Arguments (normalized)", func(r apiv1.AuditRow) string { return r.ArgsNormalized }),
			text("service", "Service", func(r apiv1.AuditRow) string { return r.Service }),
			text("service_version", "Handler build", func(r apiv1.AuditRow) string { return r.ServiceVersion }),
			text("environment", "Environment", func(r apiv1.AuditRow) string { return r.Environment }),
			text("run_id", "Run", func(r apiv1.AuditRow) string { return r.RunID }),
			text("session_id", "Session", func(r apiv1.AuditRow) string { return r.SessionID }),
			text("request_id", "Request", func(r apiv1.AuditRow) string { return r.RequestID }),
			text("event_id", "Event", func(r apiv1.AuditRow) string { return strconv.FormatUint(uint64(r.EventID), 10) }),
		},
		metrics: []metric[apiv1.AuditRow]{
			sum("calls", "Calls", func(apiv1.AuditRow) uint64 { return 1 }),
			sum("stale_calls", "Stale calls", func(r apiv1.AuditRow) uint64 { return b2u(auditStale(r)) }),
			sum("side_effect_started", "Calls with side effect started", func(r apiv1.AuditRow) uint64 { return b2u(r.SideEffectStarted) }),
			sum("external_requests", "External requests", func(r apiv1.AuditRow) uint64 { return uint64(max(r.ExternalRequests, 0)) }),
		},
		dims: []dimension[apiv1.AuditRow]{
			dim("tool", func(r apiv1.AuditRow) string { return r.Tool }),
			dim("client", auditClient),
			dim("outcome", func(r apiv1.AuditRow) string { return r.Outcome }),
			dim("revision_client", func(r apiv1.AuditRow) string { return r.RevisionClient }),
			dim("revision_server", func(r apiv1.AuditRow) string { return r.RevisionServer }),
			dim("adapter", func(r apiv1.AuditRow) string { return r.AdapterID }),
			dim("privilege", func(r apiv1.AuditRow) string { return r.Privilege }),
			dim("approval", func(r apiv1.AuditRow) string { return r.Approval }),
			dim("service", func(r apiv1.AuditRow) string { return r.Service }),
			dim("environment", func(r apiv1.AuditRow) string { return r.Environment }),
		},
	},
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func joinComma(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

// reportNames lists the report query types in the order the editor shows
// them.
func reportNames() []string {
	return []string{QueryTypeStaleUsage, QueryTypeRejections, QueryTypeRepairs, QueryTypeAdapterRetirement,
		QueryTypePropagation, QueryTypeViolations, QueryTypeAudit, QueryTypeRevisionSources, QueryTypeContractErrors}
}
