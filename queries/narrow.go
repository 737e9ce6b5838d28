package queries

import (
	"context"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/violation"
	"github.com/mcpdrift/mcpdrift/store"
)

// The propagation and violations reports pair or list single events, which
// no bucketed rollup can serve: they read narrow tables that views fill
// with the few events each report can use (propagation_events,
// violation_candidates, migration 0004; adapter_call_candidates, migration
// 0006), and apply the window, the filters and the adapter registry at
// query time, so that they answer exactly what their raw twins
// (propagation_raw.sql, violations_raw.sql) compute from the events table.

// RawPropagation is Propagation computed from the raw events: the fallback,
// and the reference the narrow table must equal.
func (r *Runner) RawPropagation(ctx context.Context, f Filter) ([]apiv1.PropagationRow, error) {
	return r.propagation(ctx, f, "propagation_raw")
}

func (r *Runner) propagation(ctx context.Context, f Filter, query string) ([]apiv1.PropagationRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	c := r.resolve(f).call()
	same, err := r.sameContracts(ctx, f)
	if err != nil {
		return nil, err
	}
	c.bindSameContract(same)
	rows := []apiv1.PropagationRow{}
	if err := r.run(ctx, query, c, &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// RawViolations is Violations computed from the raw events, with the same
// pages and cursors: the fallback, and the reference the narrow table must
// equal.
func (r *Runner) RawViolations(ctx context.Context, f Filter, page Page) (ViolationPage, error) {
	return r.violations(ctx, f, page, "violations_raw", false)
}

// violations runs query for a page; withRemoved first reads the adapters
// declared removed and binds them as {removed_adapters} (violations.sql).
func (r *Runner) violations(ctx context.Context, f Filter, page Page, query string, withRemoved bool) (ViolationPage, error) {
	if err := f.validate(); err != nil {
		return ViolationPage{}, err
	}
	c, limit, err := page.resolve()
	if err != nil {
		return ViolationPage{}, err
	}
	q := c.bind(r.resolve(f).call(), limit+1)
	if withRemoved {
		removed, err := r.removedAdapters(ctx, f.Tenant)
		if err != nil {
			return ViolationPage{}, err
		}
		q.params.Strings("removed_adapters", removed)
		q.shape.Removed = len(removed) > 0
	}
	res := []violationResult{}
	if err := r.run(ctx, query, q, &res); err != nil {
		return ViolationPage{}, err
	}
	rows := make([]apiv1.ViolationRow, len(res))
	for i, v := range res {
		rows[i] = v.row()
	}
	out := ViolationPage{Rows: rows}
	if len(rows) > limit {
		out.Rows = rows[:limit]
		last := rows[limit-1]
		out.Next = cursor{Time: last.Time, EventID: uint64(last.EventID), Kind: last.Kind}.encode()
	}
	return out, nil
}

// removedAdapters returns the adapters whose latest registry declaration
// is a removal. Violations reads them first: most registries declare none,
// and the branch that reads the calls through them is then left out of the
// query, which is most of the first page's work.
func (r *Runner) removedAdapters(ctx context.Context, tenant string) ([]string, error) {
	var rows []struct {
		AdapterID string `json:"adapter_id"`
	}
	p := store.Params{}
	p.String("tenant", tenant)
	if err := r.run(ctx, "removed_adapters", call{params: p}, &rows); err != nil {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i, row := range rows {
		ids[i] = row.AdapterID
	}
	return ids, nil
}

// violationResult is a row of violations.sql or violations_raw.sql: the
// report's row and the facts its detail is written from.
type violationResult struct {
	apiv1.ViolationRow
	EventName        string `json:"event_name"`
	AdapterID        string `json:"adapter_id"`
	ErrorCode        string `json:"error_code"`
	ExternalTarget   string `json:"external_target"`
	ExternalRequests int64  `json:"external_requests"`
	RetryOf          string `json:"retry_of"`
	RetryAttempt     int64  `json:"retry_attempt"`
	RepairResult     string `json:"repair_result"`
}

// row is the report's row, its detail written from the facts unless the
// store kept one: the rows stored before schema version 17 hold the detail
// the views wrote then, and facts left empty.
func (v violationResult) row() apiv1.ViolationRow {
	row := v.ViolationRow
	if row.Detail == "" {
		row.Detail = violation.Detail(violation.Facts{
			Kind: row.Kind, EventName: v.EventName, Outcome: row.Outcome, ChangeClass: row.ChangeClass,
			RevisionValidated: row.RevisionValidated, RevisionServer: row.RevisionServer, AdapterID: v.AdapterID,
			ErrorCode: v.ErrorCode, ExternalTarget: v.ExternalTarget, ExternalRequests: v.ExternalRequests,
			RetryOf: v.RetryOf, RetryAttempt: v.RetryAttempt, RepairResult: v.RepairResult,
		})
	}
	return row
}
