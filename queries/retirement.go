package queries

import (
	"context"
	"fmt"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/retirement"
)

// adapterResult is a row of adapter_retirement.sql before retirement.Judge.
type adapterResult struct {
	apiv1.AdapterRow
	RawCallers        []retirement.Caller        `json:"callers_raw"`
	RawUnknownCallers []retirement.UnknownCaller `json:"unknown_callers_raw"`
}

// AdapterRetirement reports every adapter (declared in the registry or seen
// on calls) with its remaining use and a verdict: ready, blocked or at_risk.
// Clients in f.ExcludeClients are left out of every figure. Served from the
// rollups (see RollupsFor) and the adapters table.
func (r *Runner) AdapterRetirement(ctx context.Context, f Filter, o retirement.Options) ([]apiv1.AdapterRow, error) {
	return r.adapterRetirement(ctx, f, o, "adapter_retirement")
}

// RawAdapterRetirement is AdapterRetirement computed from the raw events
// over the same resolved window: the fallback, and the reference the
// rollups must equal.
func (r *Runner) RawAdapterRetirement(ctx context.Context, f Filter, o retirement.Options) ([]apiv1.AdapterRow, error) {
	return r.adapterRetirement(ctx, f, o, "adapter_retirement_raw")
}

func (r *Runner) adapterRetirement(ctx context.Context, f Filter, o retirement.Options, query string) ([]apiv1.AdapterRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	o, err := o.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidFilter, err)
	}
	res := []adapterResult{}
	if err := r.runPlanned(ctx, query, f, &res); err != nil {
		return nil, err
	}
	now := r.now()
	rows := make([]apiv1.AdapterRow, len(res))
	pairs := make([]revisionPair, len(res))
	for i := range res {
		rows[i] = res[i].AdapterRow
		retirement.Judge(&rows[i], res[i].RawCallers, res[i].RawUnknownCallers, o, now)
		pairs[i] = revisionPair{rows[i].Tool, rows[i].RevisionFrom, rows[i].RevisionTo}
	}
	changes, err := r.changesOf(ctx, f, pairs)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].RegistryChangeClass, rows[i].Change = change(changes, pairs[i])
		retirement.Bridges(&rows[i])
	}
	return rows, nil
}
