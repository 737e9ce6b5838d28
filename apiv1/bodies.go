package apiv1

import (
	"encoding/json"
	"time"
)

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
