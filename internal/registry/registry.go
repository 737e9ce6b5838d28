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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
	"github.com/mcpdrift/mcpdrift/queries"
)

// ErrUnknownRevision is returned by Diff for a revision the registry does
// not hold.
var ErrUnknownRevision = errors.New("unknown revision")

// Histories groups the registry's rows (queries.ToolRevisions, ordered by
// tool, service, environment and first advertisement) into histories.
func Histories(rows []queries.ToolRevisionRow) []apiv1.RevisionHistory {
	var out []apiv1.RevisionHistory
	for i, r := range rows {
		if i == 0 || r.Tool != rows[i-1].Tool || r.Service != rows[i-1].Service || r.Environment != rows[i-1].Environment {
			out = append(out, apiv1.RevisionHistory{Tool: r.Tool, Service: r.Service, Environment: r.Environment})
		}
		h := &out[len(out)-1]
		alg := otelschema.AlgorithmOf(r.Revision)
		rev := apiv1.Revision{
			Revision: r.Revision, Algorithm: string(alg), AlgorithmLabel: alg.Label(), FirstAdvertised: r.FirstAdvertised, LastAdvertised: r.LastAdvertised,
			Instances: len(r.Instances), InstanceIDs: r.Instances, Advertisements: r.Advertisements,
			ListTTLMs: r.ListTTLMs, ListCacheScope: r.ListCacheScope,
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
func Compare(old, new queries.ToolRevisionRow) (apiv1.RevisionChange, error) {
	ol, err := list(old)
	if err != nil {
		return apiv1.RevisionChange{}, err
	}
	nl, err := list(new)
	if err != nil {
		return apiv1.RevisionChange{}, err
	}
	r := toolchange.Compare(ol, nl, toolchange.Options{})
	i := slices.IndexFunc(r.Tools, func(c toolchange.Change) bool { return c.Tool == old.Tool })
	if i < 0 {
		return apiv1.RevisionChange{}, fmt.Errorf("tool %q: no change computed", old.Tool)
	}
	c := r.Tools[i]
	return apiv1.RevisionChange{Class: c.Class, Summary: Summary(c), Verdict: c.Verdict, Reason: c.Reason,
		OldArguments: c.OldArguments, Findings: c.Findings}, nil
}

// ChangeOf is Compare as the reports take it (queries.WithChanges): the
// class and the one-line summary of the change from old to new.
func ChangeOf(old, new queries.ToolRevisionRow) (queries.RevisionChange, error) {
	c, err := Compare(old, new)
	if err != nil {
		return queries.RevisionChange{}, err
	}
	return queries.RevisionChange{Class: c.Class, Summary: c.Summary, SameContract: c.Class == "" && SameContract(old, new)}, nil
}

// SameContract reports whether revision old of a tool is revision new's
// contract under another name, as a server instrumented by mcpgo or mcpts
// judges a call planned with old (their sameContract): new is a declared
// SEP-2636 tool digest (otelschema.AlgorithmTool) and old the mcpdrift v1
// digest of new's stored definition. The stored definition lacks only
// _meta and icons, which the v1 digest does not read. A definition that
// does not decode as a tool is no proof: false. Explicit names never
// match, as on the server: a new one may mark a change the definition
// does not show.
func SameContract(old, new queries.ToolRevisionRow) bool {
	if otelschema.AlgorithmOf(old.Revision) != otelschema.AlgorithmV1 || otelschema.AlgorithmOf(new.Revision) != otelschema.AlgorithmTool {
		return false
	}
	var t mcp.Tool
	if err := json.Unmarshal([]byte(new.Definition), &t); err != nil {
		return false
	}
	d, err := mcpgo.Digest(&t)
	return err == nil && d == old.Revision
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
