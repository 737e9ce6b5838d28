package queries

import (
	"context"
	"time"
)

// The reports on the clients themselves: where the client revisions the
// other reports rest on came from (RevisionSources), and the client's half
// of the output contract (ContractErrors).

// RevisionSourceRow is the calls of one tool by one client, by where their
// client revision (dev.mcpdrift.revision.client) came from
// (dev.mcpdrift.revision.client.source). Declared, Listed, Inferred and
// Unknown sum to Calls.
type RevisionSourceRow struct {
	Tool string `json:"tool"`
	// Client is name@version, or the name alone for a client without a
	// version; "" for calls that named no client.
	Client string `json:"client"`
	Calls  uint64 `json:"calls"`
	// Declared counts the calls with a client revision that the client
	// declared in _meta, or whose source is not stated: the only source
	// before the attribute existed, and what the calls stored before
	// migration 12 count as.
	Declared uint64 `json:"declared"`
	// Listed counts the calls whose client revision is the one the server
	// last listed to the session, Inferred those whose revision the server
	// inferred from the arguments.
	Listed   uint64 `json:"listed"`
	Inferred uint64 `json:"inferred"`
	// Unknown counts the calls without a client revision, whatever source
	// they state: a verdict never reads them as current.
	Unknown uint64 `json:"unknown"`
	// UnknownShare is Unknown / Calls; nil without calls.
	UnknownShare *float64 `json:"unknown_share"`
}

// RevisionSources reports, per tool and client, the calls by where their
// client revision came from: how much of the traffic the other reports'
// verdicts rest on each source. Served from the call rollups (calls_*,
// which keep the client) over the resolved window (Plan).
func (r *Runner) RevisionSources(ctx context.Context, f Filter) ([]RevisionSourceRow, error) {
	return r.revisionSources(ctx, f, "revision_sources")
}

// RawRevisionSources is RevisionSources computed from the raw events over
// the same resolved window: the fallback, and the reference the rollups
// must equal.
func (r *Runner) RawRevisionSources(ctx context.Context, f Filter) ([]RevisionSourceRow, error) {
	return r.revisionSources(ctx, f, "revision_sources_raw")
}

func (r *Runner) revisionSources(ctx context.Context, f Filter, query string) ([]RevisionSourceRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	rows := []RevisionSourceRow{}
	if err := r.runPlanned(ctx, query, f, &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// ContractField is the contract errors of one client about one output
// field of one tool.
type ContractField struct {
	Tool string `json:"tool"`
	// Field is the output field a dependent call needed and did not get
	// (dev.mcpdrift.contract.field).
	Field          string `json:"field"`
	ContractErrors uint64 `json:"contract_errors"`
}

// ContractErrorRow is one client's half of the output contract: the
// output-shape mismatches that stopped its dependent calls, and how its
// refreshes of the tool list went.
type ContractErrorRow struct {
	// Client is name@version, or the name alone for a client without a
	// version; "" for events that named no client.
	Client string `json:"client"`
	// ContractErrors counts the client's dev.mcpdrift.contract_error events;
	// Fields splits them by tool and field, most first.
	ContractErrors uint64          `json:"contract_errors"`
	Fields         []ContractField `json:"fields"`
	// Refreshes counts the client's tools/list refreshes: distinct
	// (session key, time) pairs of its dev.mcpdrift.refresh events, since a
	// refresh emits one event per tool it found changed, all at one time.
	// FailedRefreshes counts those that failed, and RefreshFailureRate is
	// FailedRefreshes / Refreshes, nil without a refresh. A tool filter
	// leaves these whole: a refresh re-lists every tool.
	Refreshes          uint64   `json:"refreshes"`
	FailedRefreshes    uint64   `json:"failed_refreshes"`
	RefreshFailureRate *float64 `json:"refresh_failure_rate"`
	// Sessions counts the distinct session keys (the session id, else the
	// run id) of the events counted; LastSeen is the latest of them.
	Sessions uint64    `json:"sessions"`
	LastSeen time.Time `json:"last_seen"`
}

// ContractErrors reports, per client, its contract errors by tool and
// field and its refreshes, over the reports' window (Window). Served from
// the events: both kinds are rare, and the events' sort key finds them.
// The tool filter restricts the contract errors; the refreshes are of the
// whole tool list and carry no tool to filter on.
func (r *Runner) ContractErrors(ctx context.Context, f Filter) ([]ContractErrorRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	rows := []ContractErrorRow{}
	if err := r.run(ctx, "contract_errors", r.resolve(f).call(), &rows); err != nil {
		return nil, err
	}
	for i := range rows {
		if rows[i].Fields == nil {
			rows[i].Fields = []ContractField{}
		}
	}
	return rows, nil
}

// RevisionSourcePoint is the calls of a bucket by where their client
// revision came from (RevisionSourceRow); UnknownShare is nil in a bucket
// without calls.
type RevisionSourcePoint struct {
	Time time.Time `json:"time"`
	Tool string    `json:"tool,omitempty"`
	// Client is name@version, or the name alone for a client without a
	// version.
	Client       string   `json:"client,omitempty"`
	Calls        uint64   `json:"calls"`
	Declared     uint64   `json:"declared"`
	Listed       uint64   `json:"listed"`
	Inferred     uint64   `json:"inferred"`
	Unknown      uint64   `json:"unknown"`
	UnknownShare *float64 `json:"unknown_share"`
}

// ContractErrorPoint is the contract errors and refreshes of a bucket
// (ContractErrorRow); RefreshFailureRate is nil in a bucket without a
// refresh.
type ContractErrorPoint struct {
	Time   time.Time `json:"time"`
	Client string    `json:"client,omitempty"`
	// Tool is the contract errors' tool; the refreshes, of the whole tool
	// list, are in the points without one.
	Tool               string   `json:"tool,omitempty"`
	ContractErrors     uint64   `json:"contract_errors"`
	Refreshes          uint64   `json:"refreshes"`
	FailedRefreshes    uint64   `json:"failed_refreshes"`
	RefreshFailureRate *float64 `json:"refresh_failure_rate"`
}

// RevisionSourcesSeries is the revision-sources report's calls per bucket.
func (r *Runner) RevisionSourcesSeries(ctx context.Context, f Filter, s SeriesOptions) (Series[RevisionSourcePoint], error) {
	return series[RevisionSourcePoint](ctx, r, "revision-sources", "revision_sources_series", f, s)
}

// ContractErrorsSeries is the contract-errors report's counts per bucket.
func (r *Runner) ContractErrorsSeries(ctx context.Context, f Filter, s SeriesOptions) (Series[ContractErrorPoint], error) {
	return series[ContractErrorPoint](ctx, r, "contract-errors", "contract_errors_series", f, s)
}
