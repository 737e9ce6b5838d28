package queries

import (
	"context"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/violation"
)

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
	apiv1.StaleUsageRow
	HistoryFrom time.Time `json:"history_from"`
}

// StaleUsage reports, per tool × client revision × server revision, the
// calls, their outcomes, who made them and the trend. Served from the call
// rollups over the resolved window (Plan).
func (r *Runner) StaleUsage(ctx context.Context, f Filter) ([]apiv1.StaleUsageRow, error) {
	return r.staleUsage(ctx, f, "stale_usage")
}

// RawStaleUsage is StaleUsage computed from the raw events over the same
// resolved window: the fallback, and the reference the rollups must equal.
func (r *Runner) RawStaleUsage(ctx context.Context, f Filter) ([]apiv1.StaleUsageRow, error) {
	return r.staleUsage(ctx, f, "stale_usage_raw")
}

func (r *Runner) staleUsage(ctx context.Context, f Filter, query string) ([]apiv1.StaleUsageRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	res := []staleResult{}
	if err := r.runPlanned(ctx, query, f, &res); err != nil {
		return nil, err
	}
	rows := make([]apiv1.StaleUsageRow, len(res))
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
		// One contract under two names is not stale, whichever query
		// counted the calls: the rollups and the raw events agree.
		if c, ok := changes[pairs[i]]; ok && c.SameContract && rows[i].Stale != nil {
			rows[i].Stale = new(bool)
		}
	}
	return rows, nil
}

// Rejections reports the rejected calls by tool, revisions, outcome, error
// code and client, with the rejection rate and the side-effect violations.
// Served from the call rollups.
func (r *Runner) Rejections(ctx context.Context, f Filter) ([]apiv1.RejectionRow, error) {
	return r.rejections(ctx, f, "rejections")
}

// RawRejections is Rejections computed from the raw events over the same
// resolved window.
func (r *Runner) RawRejections(ctx context.Context, f Filter) ([]apiv1.RejectionRow, error) {
	return r.rejections(ctx, f, "rejections_raw")
}

func (r *Runner) rejections(ctx context.Context, f Filter, query string) ([]apiv1.RejectionRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	rows := []apiv1.RejectionRow{}
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

// Repairs reports, per tool, the stale rejections, the repairs clients made
// and how well they worked. Served from the rollups (see RollupsFor).
func (r *Runner) Repairs(ctx context.Context, f Filter) ([]apiv1.RepairRow, error) {
	return r.repairs(ctx, f, "repairs")
}

// RawRepairs is Repairs computed from the raw events over the same resolved
// window. Its counts equal Repairs'; its repair times are t-digests of the
// events where Repairs merges t-digest states, so they agree approximately.
func (r *Runner) RawRepairs(ctx context.Context, f Filter) ([]apiv1.RepairRow, error) {
	return r.repairs(ctx, f, "repairs_raw")
}

func (r *Runner) repairs(ctx context.Context, f Filter, query string) ([]apiv1.RepairRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	rows := []apiv1.RepairRow{}
	if err := r.runPlanned(ctx, query, f, &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// Propagation reports, per tool, how list_changed notifications propagated
// to the notified sessions, over the reports' window (Window). Served from
// propagation_events (see RawPropagation for the raw fallback).
func (r *Runner) Propagation(ctx context.Context, f Filter) ([]apiv1.PropagationRow, error) {
	return r.propagation(ctx, f, "propagation")
}

// Violation kinds, as internal/violation names them.
const (
	ViolationSideEffectRejected = violation.KindSideEffectRejected
	ViolationMixedRevision      = violation.KindMixedRevision
	ViolationRemovedToolSuccess = violation.KindRemovedToolSuccess
	ViolationRetryAcrossChange  = violation.KindRetryAcrossChange
)

// ViolationPage is one page of violations; Next is the cursor of the next
// page, empty on the last.
type ViolationPage struct {
	Rows []apiv1.ViolationRow `json:"rows"`
	Next string               `json:"next,omitempty"`
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

// AuditPage is one page of audited calls; Next is the cursor of the next
// page, empty on the last.
type AuditPage struct {
	Rows []apiv1.AuditRow `json:"rows"`
	Next string           `json:"next,omitempty"`
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
	rows := []apiv1.AuditRow{}
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
