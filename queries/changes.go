package queries

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// RevisionChange is the change from one revision of a tool to another, as
// the release check classifies the two definitions the registry of
// advertised definitions stored.
type RevisionChange struct {
	// Class is the seed's class: additive, bounded_migration, semantic,
	// authority or removal; "" when the two definitions do not differ in
	// what the check compares.
	Class string
	// Summary says the change in one line, such as "required `region` was
	// added, with default \"us-east\": old calls omit it"; "no change"
	// when there is none.
	Summary string
	// SameContract is true when the two revisions are one contract under
	// two names and nothing changed between them: the ChangeFunc found the
	// new one's definition to have the old one as another form of its
	// revision (internal/registry.SameContract: a SEP-2636 tool digest
	// whose definition's v1 digest is the old revision) and Class is "".
	// A call planned with the old runs as current on a server that
	// advertises the new, so the stale-usage report does not count the
	// pair as stale.
	SameContract bool
}

// ChangeFunc computes the change from revision old to revision new of
// one tool from their stored definitions. An error (a definition that is
// not a tools/list tool) leaves the rows' change null. The queries package
// cannot classify by itself: internal/toolchange, the classifier, reads
// this package's rows; internal/registry.ChangeOf is the ChangeFunc
// mcpdrift wires.
type ChangeFunc func(old, new ToolRevisionRow) (RevisionChange, error)

// WithChanges has the Runner give each stale-usage and rejection row the
// change from its client revision to its server revision, and each
// adapter-retirement row the change its adapter bridges, with f; without
// it those fields are null.
func WithChanges(f ChangeFunc) Option { return func(r *Runner) { r.changeOf = f } }

// SameContractFunc is internal/registry.SameContract: whether revision old
// of a tool is revision new's contract under another name. It is cheap on
// pairs it rejects (their revisions' forms decide), which are most.
type SameContractFunc func(old, new ToolRevisionRow) bool

// WithSameContract has the counts that SQL makes of stale calls (the
// stale-usage and audit series, the propagation report and its series)
// leave out the calls whose two revisions are one contract under two
// names, as the stale-usage rows say (RevisionChange.SameContract). f
// picks the candidate pairs from the registry; the ChangeFunc of
// WithChanges confirms each, so without both no call is left out.
func WithSameContract(f SameContractFunc) Option { return func(r *Runner) { r.sameContract = f } }

// revisionPair is one tool's revisions as a report row pairs them: the
// one a client planned with (or an adapter translates from) and the one
// that executed (or it translates to).
type revisionPair struct{ Tool, From, To string }

// changesOf computes the change of each distinct pair, once, after the
// report's SQL: one read of the registry for the tools of the pairs,
// under f's tenant, service and environment, and one ChangeFunc call per
// pair. A pair is missing from the answer, and its rows' change null,
// when a revision is empty, when no one service advertised both
// revisions in one environment (see pairIn), or when ChangeFunc fails.
func (r *Runner) changesOf(ctx context.Context, f Filter, pairs []revisionPair) (map[revisionPair]RevisionChange, error) {
	if r.changeOf == nil {
		return nil, nil
	}
	var want []revisionPair
	var tools []string
	for _, p := range pairs {
		if p.From == "" || p.To == "" || slices.Contains(want, p) {
			continue
		}
		want = append(want, p)
		if !slices.Contains(tools, p.Tool) {
			tools = append(tools, p.Tool)
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	stored, err := r.ToolRevisions(ctx, RegistryFilter{Tenant: f.Tenant, Tools: tools, Service: f.Service, Environment: f.Environment})
	if err != nil {
		return nil, fmt.Errorf("registry of the %d tools of %d revision pairs: %w", len(tools), len(want), err)
	}
	return r.changesIn(stored, want), nil
}

// changesIn computes the change of each pair of want from the registry's
// rows stored, as changesOf.
func (r *Runner) changesIn(stored []ToolRevisionRow, want []revisionPair) map[revisionPair]RevisionChange {
	out := make(map[revisionPair]RevisionChange, len(want))
	for _, p := range want {
		old, new, ok := pairIn(stored, p)
		if !ok {
			continue
		}
		if c, err := r.changeOf(old, new); err == nil {
			out[p] = c
		}
	}
	return out
}

// sameContracts returns the pairs of revisions of f's tools (every tool
// when f names none) that are one contract under two names, under f's
// tenant, service and environment: the pairs whose stale-usage rows say
// stale=false. The candidates are the registry's pairs of one tool that
// one service advertised in one environment and that r.sameContract
// accepts; each is confirmed as changesOf judges it, so that a pair is
// left out of a count exactly when its stale-usage row is not stale.
// Nil without WithChanges and WithSameContract.
func (r *Runner) sameContracts(ctx context.Context, f Filter) ([]revisionPair, error) {
	if r.changeOf == nil || r.sameContract == nil {
		return nil, nil
	}
	var tools []string
	if f.Tool != "" {
		tools = []string{f.Tool}
	}
	stored, err := r.ToolRevisions(ctx, RegistryFilter{Tenant: f.Tenant, Tools: tools, Service: f.Service, Environment: f.Environment})
	if err != nil {
		return nil, fmt.Errorf("registry of %d tools for the pairs of one contract: %w", len(tools), err)
	}
	var candidates []revisionPair
	for _, n := range stored {
		for _, o := range stored {
			p := revisionPair{n.Tool, o.Revision, n.Revision}
			if o.Tool != n.Tool || o.Service != n.Service || o.Environment != n.Environment || o.Revision == n.Revision ||
				slices.Contains(candidates, p) || !r.sameContract(o, n) {
				continue
			}
			candidates = append(candidates, p)
		}
	}
	var out []revisionPair
	for p, c := range r.changesIn(stored, candidates) {
		if c.SameContract {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b revisionPair) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	return out, nil
}

// bindSameContract binds pairs as {same_contract}, an Array(Tuple(String,
// String, String)) of (tool, client revision, server revision), and asks
// for the conditions that leave their calls out of the stale counts
// (shape.SameContract); with no pair the SQL has none.
func (c *call) bindSameContract(pairs []revisionPair) {
	ts := make([][]string, len(pairs))
	for i, p := range pairs {
		ts[i] = []string{p.Tool, p.From, p.To}
	}
	c.params.Tuples("same_contract", ts)
	c.shape.SameContract = len(pairs) > 0
}

// pairIn finds p's two revisions among the registry's rows as one service
// advertised them in one environment: a revision label means one
// definition only within its service and environment. When several
// services or environments advertised both, the one that advertised p.To
// last wins (the first in the rows' order on a tie), as the definition
// now deployed.
func pairIn(rows []ToolRevisionRow, p revisionPair) (old, new ToolRevisionRow, ok bool) {
	for _, n := range rows {
		if n.Tool != p.Tool || n.Revision != p.To || ok && !n.LastAdvertised.After(new.LastAdvertised) {
			continue
		}
		i := slices.IndexFunc(rows, func(o ToolRevisionRow) bool {
			return o.Tool == p.Tool && o.Revision == p.From && o.Service == n.Service && o.Environment == n.Environment
		})
		if i >= 0 {
			old, new, ok = rows[i], n, true
		}
	}
	return old, new, ok
}

// change returns the class and summary of p, both null when unknown.
func change(changes map[revisionPair]RevisionChange, p revisionPair) (class, summary *string) {
	c, ok := changes[p]
	if !ok {
		return nil, nil
	}
	return &c.Class, &c.Summary
}
