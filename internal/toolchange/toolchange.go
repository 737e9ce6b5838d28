// Package toolchange is the release check of a tools/list change: it
// compares two tools/list results tool by tool, from the schemas alone,
// and classifies each change as the seed does — additive, bounded
// migration, semantic, authority or removal — with the reasons, whether
// every argument object valid under the old input schema is still valid
// under the new one, and the seed's rule applied: a semantic or authority
// change that keeps the tool's name is a violation, with the path to take
// instead. Weighed by usage, the same change says whom a rollout would
// reach (Weigh).
package toolchange

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/humanize"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// The release check's wire types are the API's (apiv1/revisions.go):
// toolchange computes them, the API and the plugin carry them.
type (
	Area    = apiv1.Area
	Verdict = apiv1.Verdict
	Finding = apiv1.Finding
)

// The areas.
const (
	AreaTool        Area = "tool"
	AreaInput       Area = "input"
	AreaOutput      Area = "output"
	AreaAnnotations Area = "annotations"
)

// Status says whether a tool is in the old list, the new one, or both.
type Status string

// The statuses.
const (
	StatusUnchanged Status = "unchanged"
	StatusChanged   Status = "changed"
	StatusAdded     Status = "added"
	StatusRemoved   Status = "removed"
)

// The verdicts, from best to worst.
const (
	// VerdictSafe: an additive change (or none) and the old arguments are
	// proved to stay valid.
	VerdictSafe Verdict = "safe"
	// VerdictNeedsDecision: a bounded migration, a removal, or a change
	// whose compatibility cannot be decided: someone must choose the
	// adapter, the rejection or the window.
	VerdictNeedsDecision Verdict = "needs_decision"
	// VerdictViolation: a semantic or authority change that keeps the
	// tool's name, which the seed's rule forbids.
	VerdictViolation Verdict = "violation"
)

// Change is the check of one tool.
type Change struct {
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Status says whether the tool was added, removed, changed or not.
	Status Status `json:"status"`
	// OldRevision and NewRevision are the revisions the definitions
	// advertise ("" when the tool is not in that list).
	OldRevision string `json:"old_revision,omitempty"`
	NewRevision string `json:"new_revision,omitempty"`
	// Class is the seed's class of the change, the worst of its findings:
	// "" when unchanged, additive, bounded_migration, semantic, authority
	// or removal.
	Class string `json:"class,omitempty"`
	// Verdict is safe, needs_decision or violation.
	Verdict Verdict `json:"verdict"`
	// Reason says why, in one sentence.
	Reason string `json:"reason"`
	// Path is the seed's path for this change: what to do before the
	// deploy.
	Path string `json:"path,omitempty"`
	// OldArguments answers question 1: is every argument object valid
	// under the old input schema still valid under the new one? Absent for
	// added and removed tools.
	OldArguments *Compatibility `json:"old_arguments,omitempty"`
	// OldReaders answers the same question for results: is every result
	// valid under the new output schema valid under the old one, which
	// clients planning with the old snapshot read it by? Absent when
	// neither definition has an output schema.
	OldReaders *Compatibility `json:"old_readers,omitempty"`
	// ResultVersionField is the schema_revision or result_version field
	// of the new output schema, "" when it has none.
	ResultVersionField string `json:"result_version_field,omitempty"`
	// RenamedTo, on a removed tool, is the added tool with the most
	// similar schema, which may replace it; RenamedFrom is the converse.
	RenamedTo   string `json:"renamed_to,omitempty"`
	RenamedFrom string `json:"renamed_from,omitempty"`
	// Findings are the differences, input first.
	Findings []Finding `json:"findings,omitempty"`
	// Usage is the use of the old revision in the window, when the check
	// was weighed (Weigh) and the tool was changed or removed.
	Usage *Usage `json:"usage,omitempty"`
}

// Report is the check of a whole tools/list change.
type Report struct {
	// Tools are the checks, tool by tool: the old list's order, then the
	// tools only the new list has.
	Tools []Change `json:"tools"`
	// AuthorityFields are the field names the check treated as widening
	// or redirecting an action.
	AuthorityFields []string `json:"authority_fields"`
	// From and To are the window the usage was read over, when the report
	// was weighed.
	From *time.Time `json:"from,omitempty"`
	To   *time.Time `json:"to,omitempty"`
	// UnknownCallers says how the calls that did not say which revision
	// they were planned with were judged, when the report was weighed:
	// at_risk (the default) or safe (WeighOptions.UnknownSafe).
	UnknownCallers string `json:"unknown_callers,omitempty"`
	// OldCache is the old list's cache hint, when it had one: clients
	// allowed to keep the old list plan with it for that long after the
	// deploy, whatever list_changed says.
	OldCache *Cache `json:"old_cache,omitempty"`
}

// Pass reports whether every tool's change is safe.
func (r Report) Pass() bool {
	for _, c := range r.Tools {
		if c.Verdict != VerdictSafe {
			return false
		}
	}
	return true
}

// DefaultAuthorityFields are the fields the seed names as widening or
// redirecting an action when a revision adds them: a target environment,
// an account, a repository, a host, a user, a confirmation text.
var DefaultAuthorityFields = []string{"environment", "account_id", "repository", "host", "user", "confirmation"}

// Options tune Compare.
type Options struct {
	// AuthorityFields are the field names that widen or redirect an
	// action; nil means DefaultAuthorityFields. Names match ignoring case,
	// "_" and "-" (account_id matches accountId).
	AuthorityFields []string
}

// classRank orders the change classes from mildest to worst.
var classRank = map[string]int{
	"": 0, otelschema.ChangeClassAdditive.String(): 1, otelschema.ChangeClassBoundedMigration.String(): 2,
	otelschema.ChangeClassSemantic.String(): 3, otelschema.ChangeClassAuthority.String(): 4, otelschema.ChangeClassRemoval.String(): 5,
}

var (
	classAdditive  = otelschema.ChangeClassAdditive.String()
	classMigration = otelschema.ChangeClassBoundedMigration.String()
	classSemantic  = otelschema.ChangeClassSemantic.String()
	classAuthority = otelschema.ChangeClassAuthority.String()
	classRemoval   = otelschema.ChangeClassRemoval.String()
)

// Compare checks the change from the old list to the new one.
func Compare(old, new List, opts Options) Report {
	fields := opts.AuthorityFields
	if fields == nil {
		fields = DefaultAuthorityFields
	}
	c := comparer{authority: map[string]bool{}}
	for _, f := range fields {
		c.authority[normalName(f)] = true
	}
	r := Report{AuthorityFields: slices.Clone(fields)}
	for _, o := range old.Tools {
		n, ok := new.Tool(o.Name)
		if !ok {
			r.Tools = append(r.Tools, removed(o))
			continue
		}
		r.Tools = append(r.Tools, c.tool(o, n))
	}
	for _, n := range new.Tools {
		if _, ok := old.Tool(n.Name); !ok {
			r.Tools = append(r.Tools, added(n))
		}
	}
	pairRenames(&r, old, new)
	if old.Cache != nil && old.Cache.TTLMs > 0 {
		cache := *old.Cache
		r.OldCache = &cache
		for i := range r.Tools {
			if c := &r.Tools[i]; c.Verdict != VerdictSafe {
				c.Reason += "; " + cache.Reason()
			}
		}
	}
	return r
}

// Reason says, in words and with the figures, how long clients may keep
// the old list: the clause the release check appends to the reason of
// each change that is not safe, and the drift test to each verdict's.
func (c Cache) Reason() string {
	s := fmt.Sprintf("clients may keep the old list for up to %s without listing again (ttlMs %d", humanize.Age(c.TTLMs/1000), c.TTLMs)
	if c.Scope != "" {
		s += ", cacheScope " + c.Scope
	}
	return s + ")"
}

func removed(o Tool) Change {
	return Change{
		Tool: o.Name, Status: StatusRemoved, OldRevision: o.Revision, Class: classRemoval, Verdict: VerdictNeedsDecision,
		Findings: []Finding{{Area: AreaTool, Kind: "tool_removed", Class: classRemoval,
			Detail: fmt.Sprintf("`%s` is not in the new list", o.Name)}},
	}
}

func added(n Tool) Change {
	return Change{
		Tool: n.Name, Status: StatusAdded, NewRevision: n.Revision, Class: classAdditive, Verdict: VerdictSafe,
		Reason: "a new tool: no client planned with it",
		Path:   "advertise it and send notifications/tools/list_changed only once the new list is served",
		Findings: []Finding{{Area: AreaTool, Kind: "tool_added", Class: classAdditive,
			Detail: fmt.Sprintf("`%s` is new", n.Name)}},
	}
}

// pairRenames links each removed tool to the added tool whose schema is
// most like its own, and writes the removals' reasons and paths.
func pairRenames(r *Report, old, new List) {
	taken := map[string]bool{}
	for i := range r.Tools {
		c := &r.Tools[i]
		if c.Status != StatusRemoved {
			continue
		}
		o, _ := old.Tool(c.Tool)
		best, bestScore := "", 0.0
		for _, a := range r.Tools {
			if a.Status != StatusAdded || taken[a.Tool] {
				continue
			}
			n, _ := new.Tool(a.Tool)
			if s := similarity(o, n); s > bestScore {
				best, bestScore = a.Tool, s
			}
		}
		if bestScore >= 0.5 {
			taken[best] = true
			c.RenamedTo = best
			for j := range r.Tools {
				if r.Tools[j].Tool == best && r.Tools[j].Status == StatusAdded {
					r.Tools[j].RenamedFrom = c.Tool
					r.Tools[j].Reason = fmt.Sprintf("a new tool, with a schema like removed `%s`'s: no client planned with it", c.Tool)
				}
			}
			c.Findings = append(c.Findings, Finding{Area: AreaTool, Kind: "tool_renamed", Class: classRemoval,
				Detail: fmt.Sprintf("new `%s` has a similar schema (%.0f%% of the fields in common) and may replace it", best, 100*bestScore)})
			c.Reason = fmt.Sprintf("removed; `%s` looks like its replacement", best)
			c.Path = fmt.Sprintf("calls to `%s` must fail clearly: a tool execution error (TOOL_REMOVED) that names `%s`, before any side effect; never a success that does nothing", c.Tool, best)
			continue
		}
		c.Reason = "removed, with no similar new tool"
		c.Path = fmt.Sprintf("calls to `%s` must fail clearly: a tool execution error (TOOL_REMOVED) that says the capability no longer exists, before any side effect; never a success that does nothing", c.Tool)
	}
}

// similarity is the share of input and output field names two tools have
// in common (Jaccard), 0 when neither has fields.
func similarity(a, b Tool) float64 {
	fa, fb := fieldNames(a), fieldNames(b)
	if len(fa) == 0 && len(fb) == 0 {
		return 0
	}
	common := 0
	for k := range fa {
		if fb[k] {
			common++
		}
	}
	return float64(common) / float64(len(fa)+len(fb)-common)
}

func fieldNames(t Tool) map[string]bool {
	out := map[string]bool{}
	var walk func(prefix string, s any)
	walk = func(prefix string, s any) {
		m, _ := obj(s)
		for k, v := range properties(m) {
			out[prefix+k] = true
			walk(prefix+k+".", v)
		}
	}
	walk("in:", t.Input)
	walk("out:", t.Output)
	return out
}

// normalName folds a field name for matching: lower case, without "_"
// and "-".
func normalName(s string) string {
	return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
}
