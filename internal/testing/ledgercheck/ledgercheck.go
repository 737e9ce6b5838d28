// Package ledgercheck compares the reports of a running mcpdrift with the
// ledger of the simulator run that fed it (internal/simulate): calls by
// tool and outcome (stale-usage), normalised calls and declared adapters
// (adapter-retirement), repairs by action (repairs) and violations by
// kind (violations, page by page). The end-to-end tests use it over the
// CLI and over the API alike.
package ledgercheck

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/queries"
)

// Fetch reads the report name, over the window of the run, with the extra
// parameters (limit, cursor) into dest, an *apiv1.ReportBody.
type Fetch func(dest any, name string, params map[string]string) error

// Result is what the reports held.
type Result struct {
	// StaleUsage and AdapterRetirement are the rows of those reports.
	StaleUsage        []apiv1.StaleUsageRow
	AdapterRetirement []apiv1.AdapterRow
	// Tools and Adapters are how many tools and adapters were compared.
	Tools, Adapters int
	// Violations counts the violations by report kind; Pages is how many
	// pages of the violations report were read.
	Violations map[string]int64
	Pages      int
}

// ViolationKinds maps the ledger's names of violations to the report's.
var ViolationKinds = map[string]string{
	"side_effect_on_rejection": queries.ViolationSideEffectRejected,
	"mixed_revision":           queries.ViolationMixedRevision,
	"removed_success":          queries.ViolationRemovedToolSuccess,
	"auto_retry_across_change": queries.ViolationRetryAcrossChange,
}

// Compare reads the reports with fetch and compares them with l. It
// returns what the reports held, a description of each difference, and
// an error when a report cannot be read.
func Compare(l simulate.Ledger, fetch Fetch) (Result, []string, error) {
	var res Result
	var diffs []string
	differ := func(what string, got, want any) {
		if !reflect.DeepEqual(got, want) {
			diffs = append(diffs, fmt.Sprintf("%s:\n report %v\n ledger %v", what, got, want))
		}
	}

	// Calls per tool × outcome.
	var stale apiv1.ReportBody[apiv1.StaleUsageRow]
	if err := fetch(&stale, "stale-usage", nil); err != nil {
		return res, nil, err
	}
	res.StaleUsage = stale.Rows
	calls := map[string]map[string]int64{}
	for _, r := range stale.Rows {
		m := calls[r.Tool]
		if m == nil {
			m = map[string]int64{}
			calls[r.Tool] = m
		}
		m["calls"] += int64(r.Calls)
		m["current"] += int64(r.Current)
		m["normalized"] += int64(r.Normalized)
		m["rejected"] += int64(r.Rejected)
		m["removed"] += int64(r.Removed)
		m["failed"] += int64(r.Failed)
	}
	want := map[string]map[string]int64{}
	for tool, byOutcome := range l.Calls {
		m := map[string]int64{"calls": 0, "current": 0, "normalized": 0, "rejected": 0, "removed": 0, "failed": 0}
		for outcome, n := range byOutcome {
			m["calls"] += n
			if strings.HasPrefix(outcome, "rejected_") {
				outcome = "rejected"
			}
			m[outcome] += n
		}
		want[tool] = m
	}
	differ("stale-usage calls by tool and outcome", calls, want)
	res.Tools = len(want)

	// Normalised calls per adapter, and the declared adapters.
	var retire apiv1.ReportBody[apiv1.AdapterRow]
	if err := fetch(&retire, "adapter-retirement", nil); err != nil {
		return res, nil, err
	}
	res.AdapterRetirement = retire.Rows
	normalized, declared := map[string]int64{}, map[string]bool{}
	for _, r := range retire.Rows {
		if r.WouldBeRejected > 0 {
			normalized[r.AdapterID] = int64(r.WouldBeRejected)
		}
		if r.Registered {
			declared[r.AdapterID] = true
		}
	}
	wantNorm, wantDecl := map[string]int64{}, map[string]bool{}
	for id, n := range l.Normalized {
		if n > 0 {
			wantNorm[id] = n
		}
	}
	for id := range l.Adapters {
		wantDecl[id] = true
	}
	differ("normalised calls by adapter", normalized, wantNorm)
	differ("declared adapters", declared, wantDecl)
	res.Adapters = len(wantNorm)

	// Repairs by action.
	var repairs apiv1.ReportBody[apiv1.RepairRow]
	if err := fetch(&repairs, "repairs", nil); err != nil {
		return res, nil, err
	}
	byAction := map[string]int64{}
	for _, r := range repairs.Rows {
		for action, n := range map[string]uint64{"refresh_retry": r.RefreshRetries, "model_repair": r.ModelRepairs,
			"human_approval": r.HumanApprovals, "abandon": r.Abandons} {
			if n > 0 {
				byAction[action] += int64(n)
			}
		}
	}
	differ("repairs by action", byAction, l.Repairs)

	// Retry calls by the rejection they followed; the report counts a
	// retry that followed no rejection (or did not say) as other.
	byAfter, wantAfter := map[string]int64{}, map[string]int64{}
	for _, r := range repairs.Rows {
		for after, n := range map[string]uint64{"rejected_stale": r.RetriesAfterStale, "rejected_incompatible": r.RetriesAfterIncompatible,
			"rejected_invalid": r.RetriesAfterInvalid, "removed": r.RetriesAfterRemoved, "other": r.RetriesAfterOther} {
			if n > 0 {
				byAfter[after] += int64(n)
			}
		}
	}
	for after, n := range l.RetriesAfter {
		switch after {
		case "rejected_stale", "rejected_incompatible", "rejected_invalid", "removed":
		default:
			after = "other"
		}
		if n > 0 {
			wantAfter[after] += n
		}
	}
	differ("retry calls by the rejection they followed", byAfter, wantAfter)

	// Violations by kind, page by page.
	wantKinds := map[string]int64{}
	for name, n := range l.Violations {
		kind := ViolationKinds[name]
		if kind == "" {
			return res, nil, fmt.Errorf("the ledger counts a violation %q that no report kind matches", name)
		}
		wantKinds[kind] += n
	}
	res.Violations = map[string]int64{}
	cursor := ""
	for {
		var page apiv1.ReportBody[apiv1.ViolationRow]
		params := map[string]string{"limit": strconv.Itoa(7)}
		if cursor != "" {
			params["cursor"] = cursor
		}
		if err := fetch(&page, "violations", params); err != nil {
			return res, nil, err
		}
		for _, r := range page.Rows {
			res.Violations[r.Kind]++
		}
		res.Pages++
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	differ(fmt.Sprintf("violations by kind (%d pages)", res.Pages), res.Violations, wantKinds)
	return res, diffs, nil
}
