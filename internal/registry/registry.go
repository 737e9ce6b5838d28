// Package registry reads the registry of advertised tool definitions
// (dev.mcpdrift.advertised, stored in tool_revisions) as people ask about
// it: the history of a tool's revisions, with how long a rolling deploy
// served two of them and the change from one to the next; the diff of any
// two revisions; and the revisions a service advertises now, which the
// release check compares a new list against. Every change is computed by
// internal/toolchange, the code of the release check.
package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/toolchange"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/queries"
)

// ErrUnknownRevision is returned by Diff for a revision the registry does
// not hold.
var ErrUnknownRevision = errors.New("unknown revision")

// Revision is one revision in a tool's history.
type Revision struct {
	Revision string `json:"revision"`
	// Algorithm is how the revision was made, as its form says
	// (otelschema.AlgorithmOf): mcpdrift-v1, sha256-jcs-tool (a SEP-2636
	// tool digest) or declared; AlgorithmLabel says it for a person.
	Algorithm       string    `json:"algorithm"`
	AlgorithmLabel  string    `json:"algorithm_label"`
	FirstAdvertised time.Time `json:"first_advertised"`
	LastAdvertised  time.Time `json:"last_advertised"`
	// Instances is how many service instances advertised it; InstanceIDs
	// names them.
	Instances   int      `json:"instances"`
	InstanceIDs []string `json:"instance_ids"`
	// Advertisements is how many advertisements the registry merged.
	Advertisements uint64 `json:"advertisements"`
	// Previous is the revision advertised before it, "" for the first.
	Previous string `json:"previous,omitempty"`
	// OverlapS is how long, in seconds, both it and Previous were
	// advertised: from its first advertisement to Previous's last, 0 when
	// Previous was last advertised before it came; null for the first
	// revision. A server re-advertises periodically (mcpgo's
	// Advertise), so the figure is as fine as that period.
	OverlapS *int64 `json:"overlap_s"`
	// Change is the change from Previous; null for the first revision,
	// and when either stored definition cannot be read as a tools/list
	// tool (one without an inputSchema object, say).
	Change *Change `json:"change"`
}

// Change is the change between two revisions, as the release check
// classifies it.
type Change struct {
	// Class is the seed's class: "" when the definitions do not differ in
	// what the check compares, additive, bounded_migration, semantic,
	// authority or removal.
	Class string `json:"class"`
	// Summary says the change in one line, such as "added required
	// `region`".
	Summary string             `json:"summary"`
	Verdict toolchange.Verdict `json:"verdict"`
	Reason  string             `json:"reason"`
	// OldArguments says whether every argument object valid under the
	// older revision stays valid, with a counterexample when not.
	OldArguments *toolchange.Compatibility `json:"old_arguments,omitempty"`
	Findings     []toolchange.Finding      `json:"findings,omitempty"`
}

// History is the revisions of one tool as one service advertised them in
// one environment, oldest first.
type History struct {
	Tool        string     `json:"tool"`
	Service     string     `json:"service"`
	Environment string     `json:"environment"`
	Revisions   []Revision `json:"revisions"`
}

// Histories groups the registry's rows (queries.ToolRevisions, ordered by
// tool, service, environment and first advertisement) into histories.
func Histories(rows []queries.ToolRevisionRow) []History {
	var out []History
	for i, r := range rows {
		if i == 0 || r.Tool != rows[i-1].Tool || r.Service != rows[i-1].Service || r.Environment != rows[i-1].Environment {
			out = append(out, History{Tool: r.Tool, Service: r.Service, Environment: r.Environment})
		}
		h := &out[len(out)-1]
		alg := otelschema.AlgorithmOf(r.Revision)
		rev := Revision{
			Revision: r.Revision, Algorithm: string(alg), AlgorithmLabel: alg.Label(), FirstAdvertised: r.FirstAdvertised, LastAdvertised: r.LastAdvertised,
			Instances: len(r.Instances), InstanceIDs: r.Instances, Advertisements: r.Advertisements,
		}
		if rev.InstanceIDs == nil {
			rev.InstanceIDs = []string{}
		}
		if n := len(h.Revisions); n > 0 {
			prev := rows[i-1]
			rev.Previous = prev.Revision
			overlap := max(0, int64(prev.LastAdvertised.Sub(r.FirstAdvertised)/time.Second))
			rev.OverlapS = &overlap
			if c, err := Compare(prev, r); err == nil {
				rev.Change = &c
			}
		}
		h.Revisions = append(h.Revisions, rev)
	}
	return out
}

// Compare computes the change from revision old to revision new of a
// tool with toolchange, from their definitions.
func Compare(old, new queries.ToolRevisionRow) (Change, error) {
	ol, err := list(old)
	if err != nil {
		return Change{}, err
	}
	nl, err := list(new)
	if err != nil {
		return Change{}, err
	}
	r := toolchange.Compare(ol, nl, toolchange.Options{})
	i := slices.IndexFunc(r.Tools, func(c toolchange.Change) bool { return c.Tool == old.Tool })
	if i < 0 {
		return Change{}, fmt.Errorf("tool %q: no change computed", old.Tool)
	}
	c := r.Tools[i]
	return Change{Class: c.Class, Summary: Summary(c), Verdict: c.Verdict, Reason: c.Reason,
		OldArguments: c.OldArguments, Findings: c.Findings}, nil
}

// ChangeOf is Compare as the reports take it (queries.WithChanges): the
// class and the one-line summary of the change from old to new.
func ChangeOf(old, new queries.ToolRevisionRow) (queries.RevisionChange, error) {
	c, err := Compare(old, new)
	if err != nil {
		return queries.RevisionChange{}, err
	}
	return queries.RevisionChange{Class: c.Class, Summary: c.Summary}, nil
}

// list is a stored revision as a one-tool list, under its stored
// revision (the definition carries no _meta).
func list(r queries.ToolRevisionRow) (toolchange.List, error) {
	doc, err := json.Marshal(map[string]any{"tools": []json.RawMessage{json.RawMessage(r.Definition)}})
	if err != nil {
		return toolchange.List{}, fmt.Errorf("tool %q revision %s: definition of %d bytes: %w", r.Tool, r.Revision, len(r.Definition), err)
	}
	l, err := toolchange.Decode(doc)
	if err != nil {
		return toolchange.List{}, fmt.Errorf("tool %q revision %s: %w", r.Tool, r.Revision, err)
	}
	for i := range l.Tools {
		l.Tools[i].Revision = r.Revision
	}
	return l, nil
}

// Summary says a change in one line: its first finding, and how many
// more; "no change" without findings.
func Summary(c toolchange.Change) string {
	switch len(c.Findings) {
	case 0:
		return "no change"
	case 1:
		return c.Findings[0].Detail
	}
	return fmt.Sprintf("%s (and %d more)", c.Findings[0].Detail, len(c.Findings)-1)
}
