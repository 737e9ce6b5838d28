package toolchange

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
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
	Calls    uint64              `json:"calls"`
	Sessions uint64              `json:"sessions"`
	Runs     uint64              `json:"runs"`
	Clients  []apiv1.ClientUsage `json:"clients"`
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
	Propagation *apiv1.PropagationRow `json:"propagation"`
	// RetriesAcrossChange counts the tool's automatic retries across a
	// semantic or authority change (question 5).
	RetriesAcrossChange uint64 `json:"retries_across_change"`
	// UnknownCalls are the tool's calls in the window that did not say
	// which revision their client planned with (no
	// dev.mcpdrift.revision.client, as stock MCP clients send none),
	// UnknownSessions their distinct sessions and UnknownClients each
	// client's calls, most first. Any of them may be a stale caller: a
	// change that needs a decision stays so while they exist, unless
	// WeighOptions.UnknownSafe judges them safe.
	UnknownCalls    uint64              `json:"unknown_calls"`
	UnknownSessions uint64              `json:"unknown_sessions"`
	UnknownClients  []apiv1.ClientUsage `json:"unknown_clients"`
	// Rollout says what the rollout would do to those calls, in one
	// sentence.
	Rollout string `json:"rollout"`
}

// WeighOptions tune Weigh.
type WeighOptions struct {
	// UnknownSafe judges the calls that did not say which revision they
	// were planned with as safe: a change that needs a decision and that
	// no call said it was planned with the old revision (or an older one)
	// for becomes safe even while such calls exist. By default it stays
	// needs_decision: a verdict never takes a missing attribute for the
	// safe value, and a stock client that declares nothing may well plan
	// with the old revision.
	UnknownSafe bool
}

// Unknown-caller judgements, as Report.UnknownCallers and the API's
// unknown_callers parameter spell them.
const (
	UnknownCallersAtRisk = "at_risk"
	UnknownCallersSafe   = "safe"
)

// Weigh weighs the report by the usage of each changed or removed tool's
// old revision over [from, to): rows are the check usage report of those
// tools, propagation the propagation report. A change that needs a
// decision becomes safe when no call in the window was planned with the
// old revision or an older one, and none left its revision unsaid (unless
// o.UnknownSafe): a breaking change nobody uses breaks nobody, but a
// caller that did not say may be using it. A violation of the seed's rule
// stays one.
func (r *Report) Weigh(from, to time.Time, rows []queries.CheckUsageRow, propagation []apiv1.PropagationRow, o WeighOptions) {
	r.From, r.To = &from, &to
	r.UnknownCallers = UnknownCallersAtRisk
	if o.UnknownSafe {
		r.UnknownCallers = UnknownCallersSafe
	}
	window := humanize.Age(int64(to.Sub(from) / time.Second))
	for i := range r.Tools {
		c := &r.Tools[i]
		if c.Status == StatusUnchanged || c.Status == StatusAdded {
			continue
		}
		u := &Usage{Revision: c.OldRevision, Clients: []apiv1.ClientUsage{}, OlderRevisions: []string{}, UnknownClients: []apiv1.ClientUsage{}}
		for _, row := range rows {
			if row.Tool != c.Tool {
				continue
			}
			u.StaleRejections += row.StaleRejections
			u.RejectedSideEffects += row.RejectedSideEffects
			u.RetriesAcrossChange = row.RetriesAcrossChange
			// A removed tool has no new revision: every call to it but
			// the old revision's is an older one's or an unknown one's.
			switch {
			case row.RevisionClient == c.OldRevision:
				u.Calls, u.Sessions, u.Runs = row.Calls, row.Sessions, row.Runs
				u.Clients = row.Callers
				u.MaxSessionAgeS, u.MaxPrivilege = row.MaxSessionAgeS, row.MaxPrivilege
				if row.Calls > 0 {
					last := row.LastSeen
					u.LastSeen = &last
				}
			case row.RevisionClient == "":
				u.UnknownCalls, u.UnknownSessions = row.Calls, row.Sessions
				u.UnknownClients = row.Callers
			case row.RevisionClient == c.NewRevision:
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
		if c.Verdict == VerdictNeedsDecision {
			c.Verdict, c.Reason = decide(c.Reason, u, window, o)
			if c.Verdict == VerdictSafe && r.OldCache != nil && r.OldCache.TTL() > to.Sub(from) {
				// Clients may hold the old list longer than the window
				// looked back: no call in it proves nothing about them.
				c.Verdict = VerdictNeedsDecision
				c.Reason += fmt.Sprintf(", yet the old list may be cached for %s, longer than the %s window", humanize.Age(r.OldCache.TTLMs/1000), window)
			}
		}
	}
}

// decide weighs a change that needs a decision by its usage: it stays one
// while calls were planned with the old revision or an older one, or left
// their revision unsaid (unless o.UnknownSafe), and becomes safe
// otherwise. It returns the verdict and the reason, which names the
// unknown calls whenever there are any.
func decide(reason string, u *Usage, window string, o WeighOptions) (Verdict, string) {
	rev := render.Code(shortRev(u.Revision))
	unknown := calls(u.UnknownCalls) + " in the last " + window + " did not say which revision " + humanize.Plural(u.UnknownCalls, "it was", "they were") + " planned with"
	switch {
	case u.Calls > 0 || u.OlderCalls > 0:
		switch {
		case u.UnknownCalls > 0 && o.UnknownSafe:
			reason += "; " + unknown + ", judged safe as asked"
		case u.UnknownCalls > 0:
			reason += "; " + unknown + " (unknown, not assumed safe)"
		}
		return VerdictNeedsDecision, reason
	case u.UnknownCalls == 0:
		return VerdictSafe, reason + fmt.Sprintf("; but no call in the last %s was planned with revision %s or an older one", window, rev)
	case o.UnknownSafe:
		return VerdictSafe, reason + fmt.Sprintf("; but no call in the last %s said it was planned with revision %s or an older one, and %s judged safe as asked",
			window, rev, humanize.Plural(u.UnknownCalls, "the 1 call that did not say which revision it was planned with was",
				fmt.Sprintf("the %d calls that did not say which revision they were planned with were", u.UnknownCalls)))
	default:
		return VerdictNeedsDecision, reason + fmt.Sprintf("; %s (unknown, not assumed safe), and none said revision %s or an older one", unknown, rev)
	}
}

// calls counts calls in words: "1 call", "5000 calls".
func calls(n uint64) string { return fmt.Sprintf("%d %s", n, humanize.Plural(n, "call", "calls")) }

// rollout says what deploying the new list would do to the calls still
// planned with the old revision, and to those that did not say which
// revision they were planned with.
func rollout(c *Change, u *Usage, window string) string {
	rev := render.Code(shortRev(u.Revision))
	if u.Calls == 0 {
		s := fmt.Sprintf("no call in the last %s was planned with revision %s", window, rev)
		if u.OlderCalls > 0 {
			s += fmt.Sprintf(", but %d %s with older revisions (%s)", u.OlderCalls, humanize.Plural(int(u.OlderCalls), "was", "were"), codes(u.OlderRevisions))
		}
		if u.UnknownCalls > 0 {
			s += "; " + unknownRollout(c, u, "")
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
	if u.UnknownCalls > 0 {
		parts = append(parts, unknownRollout(c, u, " more"))
	}
	return strings.Join(parts, "; ")
}

// unknownRollout says who made the calls that did not say which revision
// they were planned with, and what the rollout would do to them: a
// removed tool fails them all, whatever they planned with.
func unknownRollout(c *Change, u *Usage, more string) string {
	s := fmt.Sprintf("%d%s %s from %d %s", u.UnknownCalls, more, humanize.Plural(u.UnknownCalls, "call", "calls"),
		len(u.UnknownClients), humanize.Plural(len(u.UnknownClients), "client", "clients"))
	if len(u.UnknownClients) > 0 {
		s += " (" + clientList(u.UnknownClients) + ")"
	}
	s += " did not say which revision " + humanize.Plural(u.UnknownCalls, "it was", "they were") + " planned with"
	if c.Status == StatusRemoved {
		return s + ": after the rollout " + humanize.Plural(u.UnknownCalls, "it", "they") + " will fail with TOOL_REMOVED whatever " + humanize.Plural(u.UnknownCalls, "it planned with", "they planned with")
	}
	return s + ": whether the change reaches " + humanize.Plural(u.UnknownCalls, "it", "them") + " is unknown"
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
func clientList(cs []apiv1.ClientUsage) string {
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
