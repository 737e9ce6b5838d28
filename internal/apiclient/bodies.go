package apiclient

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/humanize"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

// Health is the body of /healthz and /readyz.
type Health struct {
	// Status is "ok" (healthz) or "ready" (readyz).
	Status string `json:"status"`
	// Version is the server's build, on /healthz.
	Version string `json:"version,omitempty"`
}

// Problem is an RFC 9457 problem document, the body of every error.
type Problem struct {
	// Type is "about:blank": the status says what kind of problem it is.
	Type string `json:"type"`
	// Title is the status's reason phrase.
	Title  string `json:"title"`
	Status int    `json:"status"`
	// Detail explains this occurrence.
	Detail string `json:"detail"`
	// Parameter names the request parameter (or header) at fault.
	Parameter string `json:"parameter,omitempty"`
}

// Error renders the problem as one line.
func (p *Problem) Error() string {
	msg := fmt.Sprintf("%d %s", p.Status, p.Title)
	if p.Detail != "" {
		msg += ": " + p.Detail
	}
	if p.Parameter != "" {
		msg += " (parameter " + p.Parameter + ")"
	}
	return msg
}

// ReportBody is the JSON body of every report endpoint but /api/v1/tools.
type ReportBody[T any] struct {
	// Report is the report's name, the last segment of its path.
	Report string `json:"report"`
	// From and To are the window [From, To) the report was asked for.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	Rows []T       `json:"rows"`
	// Next is the cursor of the next page of a paginated report; absent
	// on the last page.
	Next string `json:"next,omitempty"`
	// Thresholds are those of the adapter retirement verdict; absent from
	// the other reports.
	Thresholds *Thresholds `json:"thresholds,omitempty"`
}

// Thresholds are the retirement thresholds a report was judged with, as
// the adapter retirement report echoes them.
type Thresholds struct {
	// MaxCalls is the most calls that allow retirement; null when it does
	// not apply.
	MaxCalls *int64 `json:"max_calls"`
	// MaxShare is the highest share of the tool's calls that allows
	// retirement (0..1); null when it does not apply.
	MaxShare *float64 `json:"max_share"`
	// LongSessionS is the session age, in seconds, from which a caller
	// counts as long-running.
	LongSessionS int64 `json:"long_session_s"`
	// TopClients is how many blocking clients are listed per adapter.
	TopClients int `json:"top_clients"`
	// UnknownCallers is how calls without a session age or privilege
	// were judged: "at_risk" or "safe".
	UnknownCallers string `json:"unknown_callers"`
}

// DescribeThresholds says in words what th allows.
func DescribeThresholds(th Thresholds) string {
	var parts []string
	if th.MaxCalls != nil {
		parts = append(parts, fmt.Sprintf("at most %d calls", *th.MaxCalls))
	}
	if th.MaxShare != nil {
		parts = append(parts, "at most "+humanize.Percent(*th.MaxShare)+" of the tool's calls")
	}
	unknown := "put an adapter at risk"
	if th.UnknownCallers == "safe" {
		unknown = "count as safe"
	}
	return fmt.Sprintf("retirement allows %s; sessions from %s count as long-running; calls without a session age, a privilege or a client revision %s",
		strings.Join(parts, " and "), humanize.Age(th.LongSessionS), unknown)
}

// DefaultWindow is how far back, from its end, a report reads when it is
// given neither from nor window, and the window the release gate judges by
// default: one default, so that the report and the gate never disagree on
// the same adapter.
const DefaultWindow = "7d"

// CheckRequest is the JSON body of POST /api/v1/check: the two tools/list
// results to compare, each as a server returns it (the result object, its
// JSON-RPC response, or the array of tools).
type CheckRequest struct {
	Old json.RawMessage `json:"old"`
	New json.RawMessage `json:"new"`
	// AuthorityFields are the field names that widen or redirect an action
	// when a revision adds them; absent means the default list.
	AuthorityFields []string `json:"authority_fields,omitempty"`
}

// CheckBody is the JSON body POST /api/v1/check answers: the release check
// of the change, tool by tool, weighed by the usage of each tool's old
// revision over the window.
type CheckBody struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Pass is true when every tool's change is safe: a release pipeline
	// goes on.
	Pass bool `json:"pass"`
	// Tools are the checks, tool by tool.
	Tools []toolchange.Change `json:"tools"`
	// AuthorityFields are the field names the check treated as widening
	// or redirecting an action.
	AuthorityFields []string `json:"authority_fields"`
	// UnknownCallers says how the calls that did not say which revision
	// they were planned with were judged: at_risk or safe.
	UnknownCallers string `json:"unknown_callers"`
	// OldCache is the old list's cache hint (ttlMs, cacheScope), absent
	// when it had none.
	OldCache *toolchange.Cache `json:"old_cache,omitempty"`
	// Deployed is, when the request sent no old list, what the service
	// advertises now in the environment, from the registry: the old list
	// of the check, and the tools mid-deploy.
	Deployed *registry.Deployed `json:"deployed,omitempty"`
}

// Report returns the check as the toolchange report it carries.
func (b CheckBody) Report() toolchange.Report {
	return toolchange.Report{Tools: b.Tools, AuthorityFields: b.AuthorityFields, From: &b.From, To: &b.To, UnknownCallers: b.UnknownCallers,
		OldCache: b.OldCache}
}

// SeriesBody is the JSON body of every series endpoint
// (/api/v1/reports/{report}/series, /api/v1/tools/series).
type SeriesBody[T any] struct {
	// Report is the report's name.
	Report string `json:"report"`
	// From and To are the window [From, To) the report reads: the series'
	// first and last buckets are cut by it.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// StepSeconds is the buckets' length: the step asked for, rounded up
	// to the rollup tiers' resolution.
	StepSeconds int64 `json:"step_seconds"`
	// GroupBy names the dimensions the points are split by.
	GroupBy []string `json:"group_by"`
	// Rows are the points, one per bucket and group, ordered by group and
	// time.
	Rows []T `json:"rows"`
}

// RevisionsBody is the JSON body GET /api/v1/tools/{tool}/revisions
// answers: the tool's revisions as each service advertised them in each
// environment, from the registry of advertised definitions.
type RevisionsBody struct {
	Tool      string             `json:"tool"`
	Histories []registry.History `json:"histories"`
}

// ServicesBody is the JSON body GET /api/v1/deployed/services answers:
// every service and environment the registry of advertised definitions
// holds.
type ServicesBody struct {
	Services []registry.Service `json:"services"`
}
