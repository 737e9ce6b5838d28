package queries

import (
	"context"

	"github.com/mcpdrift/mcpdrift/apiv1"
)

// The reports on the clients themselves: where the client revisions the
// other reports rest on came from (RevisionSources), and the client's half
// of the output contract (ContractErrors).

// RevisionSources reports, per tool and client, the calls by where their
// client revision came from: how much of the traffic the other reports'
// verdicts rest on each source. Served from the call rollups (calls_*,
// which keep the client) over the resolved window (Plan).
func (r *Runner) RevisionSources(ctx context.Context, f Filter) ([]apiv1.RevisionSourceRow, error) {
	return r.revisionSources(ctx, f, "revision_sources")
}

// RawRevisionSources is RevisionSources computed from the raw events over
// the same resolved window: the fallback, and the reference the rollups
// must equal.
func (r *Runner) RawRevisionSources(ctx context.Context, f Filter) ([]apiv1.RevisionSourceRow, error) {
	return r.revisionSources(ctx, f, "revision_sources_raw")
}

func (r *Runner) revisionSources(ctx context.Context, f Filter, query string) ([]apiv1.RevisionSourceRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	rows := []apiv1.RevisionSourceRow{}
	if err := r.runPlanned(ctx, query, f, &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// ContractErrors reports, per client, its contract errors by tool and
// field and its refreshes, over the reports' window (Window). Served from
// the events: both kinds are rare, and the events' sort key finds them.
// The tool filter restricts the contract errors; the refreshes are of the
// whole tool list and carry no tool to filter on.
func (r *Runner) ContractErrors(ctx context.Context, f Filter) ([]apiv1.ContractErrorRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	rows := []apiv1.ContractErrorRow{}
	if err := r.run(ctx, "contract_errors", r.resolve(f).call(), &rows); err != nil {
		return nil, err
	}
	for i := range rows {
		if rows[i].Fields == nil {
			rows[i].Fields = []apiv1.ContractField{}
		}
	}
	return rows, nil
}

// RevisionSourcesSeries is the revision-sources report's calls per bucket.
func (r *Runner) RevisionSourcesSeries(ctx context.Context, f Filter, s SeriesOptions) (Series[apiv1.RevisionSourcePoint], error) {
	return series[apiv1.RevisionSourcePoint](ctx, r, "revision-sources", "revision_sources_series", f, s)
}

// ContractErrorsSeries is the contract-errors report's counts per bucket.
func (r *Runner) ContractErrorsSeries(ctx context.Context, f Filter, s SeriesOptions) (Series[apiv1.ContractErrorPoint], error) {
	return series[apiv1.ContractErrorPoint](ctx, r, "contract-errors", "contract_errors_series", f, s)
}
