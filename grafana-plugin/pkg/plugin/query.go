package plugin

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
)

// Query types: one per report (a table, as the API answers it), the history
// of a tool's advertised revisions (a table), the time series of a report's
// counts, and the values of a template variable.
const (
	QueryTypeStaleUsage        = "stale-usage"
	QueryTypeRejections        = "rejections"
	QueryTypeRepairs           = "repairs"
	QueryTypeAdapterRetirement = "adapter-retirement"
	QueryTypePropagation       = "propagation"
	QueryTypeViolations        = "violations"
	QueryTypeAudit             = "audit"
	QueryTypeRevisionSources   = "revision-sources"
	QueryTypeContractErrors    = "contract-errors"
	QueryTypeRevisions         = "revisions"
	QueryTypeTimeSeries        = "timeseries"
	QueryTypeVariable          = "variable"
)

// QueryTypes lists every query type the backend answers.
func QueryTypes() []string {
	return []string{QueryTypeStaleUsage, QueryTypeRejections, QueryTypeRepairs, QueryTypeAdapterRetirement,
		QueryTypePropagation, QueryTypeViolations, QueryTypeAudit, QueryTypeRevisionSources, QueryTypeContractErrors,
		QueryTypeRevisions, QueryTypeTimeSeries, QueryTypeVariable}
}

// Variables a variable query lists.
const (
	VariableTools        = "tools"
	VariableServices     = "services"
	VariableEnvironments = "environments"
	VariableClients      = "clients"
	VariableAdapters     = "adapters"
)

// Variables lists the variable kinds.
func Variables() []string {
	return []string{VariableTools, VariableServices, VariableEnvironments, VariableClients, VariableAdapters}
}

// allValue is what a template variable's "All" option interpolates to
// (the dashboards set allValue to it): no filter.
const allValue = "*"

// Query is the model of one query, as the query editor saves it.
type Query struct {
	// Report is the report a timeseries query counts (a report query
	// type); ignored by the others.
	Report string `json:"report,omitempty"`
	// Metrics are the counts a timeseries query draws; empty means the
	// report's main count.
	Metrics []string `json:"metrics,omitempty"`
	// GroupBy splits a timeseries into one series per combination of
	// these dimensions' values; empty draws one series per count.
	GroupBy []string `json:"groupBy,omitempty"`

	// Filters of every report. "*" and "" mean no filter.
	Tool           string   `json:"tool,omitempty"`
	Service        string   `json:"service,omitempty"`
	Environment    string   `json:"environment,omitempty"`
	Client         string   `json:"client,omitempty"`
	ExcludeClients []string `json:"excludeClients,omitempty"`

	// Adapter retirement: one adapter, the window as a duration ending at
	// the range's end instead of the range, and the verdict's thresholds.
	Adapter     string `json:"adapter,omitempty"`
	Window      string `json:"window,omitempty"`
	MaxCalls    *int64 `json:"maxCalls,omitempty"`
	MaxShare    string `json:"maxShare,omitempty"`
	LongSession string `json:"longSession,omitempty"`
	TopClients  *int   `json:"topClients,omitempty"`

	// Audit: one run, session or request id. StaleOnly keeps the calls
	// whose client planned with another revision than the one executed
	// (audit series); Kind keeps one violation kind (violations).
	Run       string `json:"run,omitempty"`
	Session   string `json:"session,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	StaleOnly bool   `json:"staleOnly,omitempty"`
	Kind      string `json:"kind,omitempty"`

	// Variable is what a variable query lists (Variables); None lists
	// "None" first, whose value "*" is no filter: for a variable whose
	// every value narrows, such as the excluded clients.
	Variable string `json:"variable,omitempty"`
	None     bool   `json:"none,omitempty"`
}

// parseQuery reads a query's JSON model.
func parseQuery(raw json.RawMessage) (Query, error) {
	var q Query
	if len(raw) == 0 {
		return q, nil
	}
	if err := json.Unmarshal(raw, &q); err != nil {
		return q, fmt.Errorf("%w: cannot parse the query model: %v", ErrInvalidQuery, err)
	}
	q.Tool, q.Service, q.Environment, q.Client = norm(q.Tool), norm(q.Service), norm(q.Environment), norm(q.Client)
	q.Adapter, q.Run, q.Session, q.RequestID, q.Kind = norm(q.Adapter), norm(q.Run), norm(q.Session), norm(q.RequestID), norm(q.Kind)
	var excl []string
	for _, c := range q.ExcludeClients {
		for _, part := range strings.Split(c, ",") {
			if part = norm(part); part != "" {
				excl = append(excl, part)
			}
		}
	}
	q.ExcludeClients = excl
	return q, nil
}

// norm trims a filter and maps the "All" value to no filter.
func norm(s string) string {
	s = strings.TrimSpace(s)
	if s == allValue || s == "$__all" || s == "All" {
		return ""
	}
	return s
}

// validate checks the query for queryType.
func (q Query) validate(queryType string) error {
	switch queryType {
	case QueryTypeTimeSeries:
		rep, ok := reports[q.Report]
		if !ok {
			return fmt.Errorf("%w: unknown report %q for a time series; the reports are %s", ErrInvalidQuery, q.Report, strings.Join(reportNames(), ", "))
		}
		for _, m := range q.Metrics {
			if !slices.Contains(rep.metricNames(), m) {
				return fmt.Errorf("%w: the %s report has no count %q; it has %s", ErrInvalidQuery, q.Report, m, strings.Join(rep.metricNames(), ", "))
			}
		}
		for _, g := range q.GroupBy {
			if !slices.Contains(rep.dimensions(), g) {
				return fmt.Errorf("%w: the %s report cannot be grouped by %q; it can by %s", ErrInvalidQuery, q.Report, g, strings.Join(rep.dimensions(), ", "))
			}
		}
	case QueryTypeRevisions:
		if q.Tool == "" {
			return fmt.Errorf("%w: a revisions query needs a tool: the registry answers one tool's history", ErrInvalidQuery)
		}
	case QueryTypeVariable:
		if !slices.Contains(Variables(), q.Variable) {
			return fmt.Errorf("%w: unknown variable %q; the variables are %s", ErrInvalidQuery, q.Variable, strings.Join(Variables(), ", "))
		}
	case "":
		return fmt.Errorf("%w: the query has no query type; pick a report", ErrInvalidQuery)
	default:
		if _, ok := reports[queryType]; !ok {
			return fmt.Errorf("%w: unknown query type %q; the query types are %s", ErrInvalidQuery, queryType, strings.Join(QueryTypes(), ", "))
		}
	}
	if q.Window != "" {
		if _, err := parseDuration(q.Window); err != nil {
			return fmt.Errorf("%w: window %q: %v", ErrInvalidQuery, q.Window, err)
		}
	}
	if q.LongSession != "" {
		if _, err := parseDuration(q.LongSession); err != nil {
			return fmt.Errorf("%w: long session %q: %v", ErrInvalidQuery, q.LongSession, err)
		}
	}
	if q.MaxCalls != nil && *q.MaxCalls < 0 {
		return fmt.Errorf("%w: max calls must be 0 or more, not %d", ErrInvalidQuery, *q.MaxCalls)
	}
	return nil
}

// parseDuration accepts Go durations and a day suffix ("14d"), as the API
// does.
func parseDuration(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(strings.TrimSpace(s), "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 {
			return 0, fmt.Errorf("want a positive whole number of days such as 14d")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive duration such as 14d, 36h or 90m")
	}
	return d, nil
}

// filterParams are the API parameters of the common filter over
// [from, to).
func (q Query) filterParams(from, to time.Time) url.Values {
	v := url.Values{}
	v.Set(apiv1.ParamFrom, from.UTC().Format(time.RFC3339Nano))
	v.Set(apiv1.ParamTo, to.UTC().Format(time.RFC3339Nano))
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set(apiv1.ParamTool, q.Tool)
	set(apiv1.ParamService, q.Service)
	set(apiv1.ParamEnvironment, q.Environment)
	set(apiv1.ParamClient, q.Client)
	for _, c := range q.ExcludeClients {
		v.Add(apiv1.ParamExcludeClient, c)
	}
	return v
}

// retirementParams adds the adapter retirement parameters to v; with
// window set, the window replaces from.
func (q Query) retirementParams(v url.Values, window bool) {
	if window && q.Window != "" {
		v.Del(apiv1.ParamFrom)
		v.Set(apiv1.ParamWindow, q.Window)
	}
	if q.Adapter != "" {
		v.Set(apiv1.ParamAdapter, q.Adapter)
	}
	if q.MaxCalls != nil {
		v.Set(apiv1.ParamMaxCalls, strconv.FormatInt(*q.MaxCalls, 10))
	}
	if s := strings.TrimSpace(q.MaxShare); s != "" {
		v.Set(apiv1.ParamMaxShare, s)
	}
	if q.LongSession != "" {
		v.Set(apiv1.ParamLongSession, q.LongSession)
	}
	if q.TopClients != nil {
		v.Set(apiv1.ParamTopClients, strconv.Itoa(*q.TopClients))
	}
}

// auditParams adds the audit search parameters to v.
func (q Query) auditParams(v url.Values) {
	if q.Run != "" {
		v.Set(apiv1.ParamRun, q.Run)
	}
	if q.Session != "" {
		v.Set(apiv1.ParamSession, q.Session)
	}
	if q.RequestID != "" {
		v.Set(apiv1.ParamRequestID, q.RequestID)
	}
}

// ValidateQuery checks a query model as the backend would before running
// it; the dashboard tests use it on every panel's targets.
func ValidateQuery(queryType string, model json.RawMessage) error {
	q, err := parseQuery(model)
	if err != nil {
		return err
	}
	return q.validate(queryType)
}
