package toolchange

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/humanize"
	"github.com/mcpdrift/mcpdrift/internal/render"
	"github.com/mcpdrift/mcpdrift/queries"
)

// Usage is what the calls of one tool's old revision say about a change,
// over the window the check was weighed with.
type Usage struct {
	// Revision is the old revision the figures are about: the one the old
	// list advertises.
	Revision string `json:"revision"`
	// Calls, Sessions and Runs are the calls planned with it and their
	// distinct sessions and runs; Clients each client's calls, most first.
	Calls    uint64                `json:"calls"`
	Sessions uint64                `json:"sessions"`
	Runs     uint64                `json:"runs"`
	Clients  []queries.ClientUsage `json:"clients"`
	// MaxSessionAgeS and MaxPrivilege are the oldest session and the
	// highest privilege among those calls; 0 and "" when no call said.
	MaxSessionAgeS int64  `json:"max_session_age_s"`
	MaxPrivilege   string `json:"max_privilege"`
	// LastSeen is the last of those calls; null without any.
	LastSeen *time.Time `json:"last_seen"`
	// OlderRevisions are the other revisions the tool's calls were
	// planned with, neither the old list's nor the new one's, and
	// OlderCalls their calls.
	OlderRevisions []string `json:"older_revisions"`
	OlderCalls     uint64   `json:"older_calls"`
	// StaleRejections counts the tool's calls rejected_stale in the window,
	// whatever their revision, and RejectedSideEffects the rejected calls
	// whose side effect had already started (question 3: a rejection must
	// come before any external effect).
	StaleRejections     uint64 `json:"stale_rejections"`
	RejectedSideEffects uint64 `json:"rejected_side_effects"`
	// Propagation is how the tool's earlier list_changed notifications
	// reached sessions (question 4); null when none was sent in the window.
	Propagation *queries.PropagationRow `json:"propagation"`
	// RetriesAcrossChange counts the tool's automatic retries across a
	// semantic or authority change (question 5).
	RetriesAcrossChange uint64 `json:"retries_across_change"`
	// Rollout says what the rollout would do to those calls, in one
	// sentence.
	Rollout string `json:"rollout"`
}

// Weigh weighs the report by the usage of each changed or removed tool's
// old revision over [from, to): rows are the check usage report of those
// tools, propagation the propagation report. A change that needs a
// decision becomes safe when no call in the window was planned with the
// old revision (a breaking change nobody uses breaks nobody); a violation
// of the seed's rule stays one.
func (r *Report) Weigh(from, to time.Time, rows []queries.CheckUsageRow, propagation []queries.PropagationRow) {
	r.From, r.To = &from, &to
	window := humanize.Age(int64(to.Sub(from) / time.Second))
	for i := range r.Tools {
		c := &r.Tools[i]
		if c.Status == StatusUnchanged || c.Status == StatusAdded {
			continue
		}
		u := &Usage{Revision: c.OldRevision, Clients: []queries.ClientUsage{}, OlderRevisions: []string{}}
		for _, row := range rows {
			if row.Tool != c.Tool {
				continue
			}
			u.StaleRejections += row.StaleRejections
			u.RejectedSideEffects += row.RejectedSideEffects
			u.RetriesAcrossChange = row.RetriesAcrossChange
			switch row.RevisionClient {
			case c.OldRevision:
				u.Calls, u.Sessions, u.Runs = row.Calls, row.Sessions, row.Runs
				u.Clients = row.Callers
				u.MaxSessionAgeS, u.MaxPrivilege = row.MaxSessionAgeS, row.MaxPrivilege
				if row.Calls > 0 {
					last := row.LastSeen
					u.LastSeen = &last
				}
			case c.NewRevision, "":
			default:
				u.OlderRevisions = append(u.OlderRevisions, row.RevisionClient)
				u.OlderCalls += row.Calls
			}
		}
		slices.Sort(u.OlderRevisions)
		for j := range propagation {
			if propagation[j].Tool == c.Tool {
				p := propagation[j]
				u.Propagation = &p
			}
		}
		u.Rollout = rollout(c, u, window)
		c.Usage = u
		if c.Verdict == VerdictNeedsDecision && u.Calls == 0 && u.OlderCalls == 0 {
			c.Verdict = VerdictSafe
			c.Reason += fmt.Sprintf("; but no call in the last %s was planned with revision %s or an older one", window, render.Code(shortRev(c.OldRevision)))
		}
	}
}

// rollout says what deploying the new list would do to the calls still
// planned with the old revision.
func rollout(c *Change, u *Usage, window string) string {
	rev := render.Code(shortRev(u.Revision))
	if u.Calls == 0 {
		s := fmt.Sprintf("no call in the last %s was planned with revision %s", window, rev)
		if u.OlderCalls > 0 {
			s += fmt.Sprintf(", but %d %s with older revisions (%s)", u.OlderCalls, humanize.Plural(int(u.OlderCalls), "was", "were"), codes(u.OlderRevisions))
		}
		return s
	}
	who := fmt.Sprintf("%d %s in %s from %d %s (%s) planned with revision %s",
		u.Calls, humanize.Plural(int(u.Calls), "call", "calls"), window, len(u.Clients), humanize.Plural(len(u.Clients), "client", "clients"), clientList(u.Clients), rev)
	var what string
	switch {
	case c.Status == StatusRemoved && c.RenamedTo != "":
		what = fmt.Sprintf("after the rollout they will fail with TOOL_REMOVED until their clients move to %s", render.Code(c.RenamedTo))
	case c.Status == StatusRemoved:
		what = "after the rollout they will fail with TOOL_REMOVED"
	case c.Class == classAuthority:
		what = "they carry no decision on the authority the new revision adds: they must be rejected, not run under it"
	case c.OldArguments != nil && c.OldArguments.Answer == AnswerNo:
		what = "the new input schema rejects their shape: with no adapter they will be rejected"
		if req := requiredAdded(c); req != "" {
			what = fmt.Sprintf("they send no %s; with %s required and no adapter they will be rejected", render.Code(req), render.Code(req))
		}
	case c.Class == classSemantic && slices.ContainsFunc(c.Findings, func(f Finding) bool { return f.Area == AreaOutput && f.Class == classSemantic }):
		what = "their clients will read results their snapshot does not describe"
	case c.Class == classSemantic:
		what = "they will still validate and run with the new meaning"
	case c.OldArguments != nil && c.OldArguments.Answer == AnswerCannotDecide:
		what = "whether they stay valid could not be decided"
	default:
		what = "they keep working unchanged"
	}
	parts := []string{who + "; " + what}
	if u.MaxSessionAgeS > 0 {
		parts = append(parts, "the longest session among them is "+humanize.Age(u.MaxSessionAgeS)+" old")
	} else {
		parts = append(parts, "no call said how old its session was")
	}
	if u.MaxPrivilege != "" {
		parts = append(parts, "the highest privilege "+u.MaxPrivilege)
	} else {
		parts = append(parts, "no call said its privilege")
	}
	return strings.Join(parts, "; ")
}

// requiredAdded returns the first required input field the change added.
func requiredAdded(c *Change) string {
	for _, f := range c.Findings {
		if f.Kind == "required_added" || f.Kind == "required_added_with_default" {
			return f.Path
		}
	}
	return ""
}

// clientList names the first three clients, and how many more.
func clientList(cs []queries.ClientUsage) string {
	var names []string
	for i, c := range cs {
		if i == 3 {
			names = append(names, fmt.Sprintf("%d more", len(cs)-3))
			break
		}
		names = append(names, fmt.Sprintf("%s %d", render.Code(c.Client), c.Calls))
	}
	return strings.Join(names, ", ")
}

func codes(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = render.Code(shortRev(v))
	}
	return strings.Join(out, ", ")
}
