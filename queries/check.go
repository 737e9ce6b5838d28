package queries

import (
	"context"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/retirement"
)

// CheckUsageRow is the use, in the window, of one tool by the clients that
// planned its calls with one revision: what a release check weighs a
// change of that tool by.
type CheckUsageRow struct {
	Tool string `json:"tool"`
	// RevisionClient is the revision the calls were planned with, "" for
	// the calls that did not say (dev.mcpdrift.revision.client absent).
	RevisionClient string `json:"revision_client"`
	// Calls, Sessions and Runs are the calls planned with the revision and
	// their distinct session keys and runs; Clients the distinct
	// name@version pairs.
	Calls    uint64 `json:"calls"`
	Sessions uint64 `json:"sessions"`
	Runs     uint64 `json:"runs"`
	Clients  uint64 `json:"clients"`
	// MaxPrivilege and MaxSessionAgeS are the highest privilege and the
	// oldest session among the calls ("" and 0 when none said).
	MaxPrivilege   string `json:"max_privilege"`
	MaxSessionAgeS int64  `json:"max_session_age_s"`
	// StaleRejections counts the calls rejected_stale; RejectedSideEffects
	// the rejected calls whose side effect had already started.
	StaleRejections     uint64    `json:"stale_rejections"`
	RejectedSideEffects uint64    `json:"rejected_side_effects"`
	FirstSeen           time.Time `json:"first_seen"`
	LastSeen            time.Time `json:"last_seen"`
	// RetriesAcrossChange counts the tool's automatic retries across a
	// semantic or authority change in the window, whatever the revision.
	RetriesAcrossChange uint64 `json:"retries_across_change"`
	// Callers lists each client's use, most calls first.
	Callers []apiv1.ClientUsage `json:"callers"`
}

// checkUsageResult is a row of check_usage.sql before its callers are
// named.
type checkUsageResult struct {
	CheckUsageRow
	RawCallers []retirement.Caller `json:"callers_raw"`
}

// CheckUsage reports, for each of tools and each client revision its calls
// were planned with in the window ("" for the calls that did not say
// which), the use a release check weighs: calls,
// sessions, runs, clients, the oldest session and highest privilege, stale
// rejections and rejections after a side effect, and the tool's automatic
// retries across a semantic or authority change. Served from the call
// rollups that keep the client, whatever the filter.
func (r *Runner) CheckUsage(ctx context.Context, f Filter, tools []string) ([]CheckUsageRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	if tools == nil {
		tools = []string{}
	}
	c := r.Plan(f.From, f.To).bind(f)
	c.params.Strings("tools", tools)
	var res []checkUsageResult
	if err := r.run(ctx, "check_usage", c, &res); err != nil {
		return nil, err
	}
	rows := make([]CheckUsageRow, len(res))
	for i, x := range res {
		rows[i] = x.CheckUsageRow
		rows[i].Callers = retirement.ClientUsages(x.RawCallers)
	}
	return rows, nil
}
