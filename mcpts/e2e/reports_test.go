package e2e

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/app"
)

// api returns a client of the shared serve's API.
func api(p *app.Process) *apiclient.Client {
	return &apiclient.Client{BaseURL: "http://" + p.API().Addr()}
}

// report reads one report of env's events through the API, as a user does.
func report[T any](t *testing.T, p *app.Process, name, env string, extra url.Values) []T {
	t.Helper()
	q := url.Values{"from": {"-1h"}, "to": {"now"}, "environment": {env}}
	for k, v := range extra {
		q[k] = v
	}
	var body apiv1.ReportBody[T]
	if err := api(p).GetJSON(context.Background(), "/api/v1/reports/"+name, q, &body); err != nil {
		t.Fatalf("report %s: %v", name, err)
	}
	return body.Rows
}

func ratio(f *float64) string {
	if f == nil {
		return "null"
	}
	return fmt.Sprintf("%.3f", *f)
}

// flag prints a nullable flag of a report row, null when unknown.
func flag(b *bool) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprint(*b)
}

// checkReports reads the story's reports and compares them with the
// figures worked out by hand from its 23 events (storyEvents): the same in
// every pair of languages.
func checkReports(t *testing.T, p *app.Process, env string) {
	t.Helper()
	// Stale usage, per tool × client revision × server revision. The
	// client's held-back calls (C, D) are calls: the client's own events.
	var usage []string
	for _, u := range report[apiv1.StaleUsageRow](t, p, "stale-usage", env, nil) {
		usage = append(usage, fmt.Sprintf("%s %s→%s calls=%d current=%d normalized=%d rejected=%d removed=%d stale=%s sessions=%d clients=%d",
			u.Tool, u.RevisionClient, u.RevisionServer, u.Calls, u.Current, u.Normalized, u.Rejected, u.Removed, flag(u.Stale), u.Sessions, u.Clients))
	}
	slices.Sort(usage)
	wantUsage := []string{
		"delete_branch 1→ calls=1 current=0 normalized=0 rejected=0 removed=1 stale=true sessions=1 clients=1",    // C
		"deploy_preview 1→2 calls=2 current=0 normalized=1 rejected=1 removed=0 stale=true sessions=1 clients=1",  // A, D
		"deploy_preview 2→2 calls=1 current=1 normalized=0 rejected=0 removed=0 stale=false sessions=1 clients=1", // D's retry
		"sync_project 1→2 calls=1 current=0 normalized=0 rejected=1 removed=0 stale=true sessions=1 clients=1",    // B
		"sync_project 2→2 calls=1 current=1 normalized=0 rejected=0 removed=0 stale=false sessions=1 clients=1",   // B's retry
	}
	if !slices.Equal(usage, wantUsage) {
		t.Errorf("stale usage\n  %s\nwant\n  %s", strings.Join(usage, "\n  "), strings.Join(wantUsage, "\n  "))
	}

	// Rejections: one per tool, each its tool's share of calls.
	var rej []string
	for _, r := range report[apiv1.RejectionRow](t, p, "rejections", env, nil) {
		rej = append(rej, fmt.Sprintf("%s %s→%s %s %s %s@%s rejected=%d tool_calls=%d rate=%.3f side_effects=%d",
			r.Tool, r.RevisionClient, r.RevisionServer, r.Outcome, r.ErrorCode, r.ClientName, r.ClientVersion, r.Rejected, r.ToolCalls,
			r.RejectionRate, r.SideEffectViolations))
	}
	slices.Sort(rej)
	wantRej := []string{
		"delete_branch 1→ removed TOOL_REMOVED agent@0.9.0 rejected=1 tool_calls=1 rate=1.000 side_effects=0",
		"deploy_preview 1→2 rejected_stale STALE_TOOL_SCHEMA agent@0.9.0 rejected=1 tool_calls=3 rate=0.333 side_effects=0",
		"sync_project 1→2 rejected_incompatible INCOMPATIBLE_TOOL_SCHEMA agent@0.9.0 rejected=1 tool_calls=2 rate=0.500 side_effects=0",
	}
	if !slices.Equal(rej, wantRej) {
		t.Errorf("rejections\n  %s\nwant\n  %s", strings.Join(rej, "\n  "), strings.Join(wantRej, "\n  "))
	}

	// Repairs: each rejection followed by one retry a person approved,
	// but C's, abandoned; no automatic repair, so no automatic rate.
	var rep []string
	for _, r := range report[apiv1.RepairRow](t, p, "repairs", env, nil) {
		rep = append(rep, fmt.Sprintf("%s stale=%d rejections=%d incompatible=%d removed=%d retries=%d amplification=%s after_stale=%d after_incompatible=%d human=%d abandons=%d automatic=%d automatic_rate=%s",
			r.Tool, r.StaleRejections, r.Rejections, r.IncompatibleRejections, r.RemovedCalls, r.RetryCalls, ratio(r.Amplification),
			r.RetriesAfterStale, r.RetriesAfterIncompatible, r.HumanApprovals, r.Abandons, r.AutomaticRepairs, ratio(r.AutomaticSuccessRate)))
	}
	slices.Sort(rep)
	wantRep := []string{
		"delete_branch stale=0 rejections=1 incompatible=0 removed=1 retries=0 amplification=0.000 after_stale=0 after_incompatible=0 human=0 abandons=1 automatic=0 automatic_rate=null",
		"deploy_preview stale=1 rejections=1 incompatible=0 removed=0 retries=1 amplification=1.000 after_stale=1 after_incompatible=0 human=1 abandons=0 automatic=0 automatic_rate=null",
		"sync_project stale=0 rejections=1 incompatible=1 removed=0 retries=1 amplification=1.000 after_stale=0 after_incompatible=1 human=1 abandons=0 automatic=0 automatic_rate=null",
	}
	if !slices.Equal(rep, wantRep) {
		t.Errorf("repairs\n  %s\nwant\n  %s", strings.Join(rep, "\n  "), strings.Join(wantRep, "\n  "))
	}

	// The adapter: A went through it, one of deploy_preview's three calls;
	// any call blocks it (max_calls 0).
	adapters := report[apiv1.AdapterRow](t, p, "adapter-retirement", env, url.Values{"max_calls": {"0"}})
	if len(adapters) != 1 {
		t.Fatalf("adapters %+v, want deploy_preview-1-to-2", adapters)
	}
	a := adapters[0]
	var blocking []string
	for _, c := range a.BlockingClients {
		blocking = append(blocking, c.Client)
	}
	got := fmt.Sprintf("%s %s %s→%s %s registered=%v window_end=%v calls=%d tool_calls=%d share=%.3f would_be_rejected=%d sessions=%d clients=%d privilege=%s unknown_revision_calls=%d verdict=%s blocking=%v",
		a.AdapterID, a.Tool, a.RevisionFrom, a.RevisionTo, a.ChangeClass, a.Registered, a.WindowEnd != nil && a.WindowEnd.Equal(storyWindowEnd),
		a.Calls, a.ToolCalls, a.Share, a.WouldBeRejected, a.Sessions, a.Clients, a.MaxPrivilege, a.UnknownRevisionCalls, a.Verdict, blocking)
	want := "deploy_preview-1-to-2 deploy_preview 1→2 bounded_migration registered=true window_end=true calls=1 tool_calls=3 share=0.333 would_be_rejected=1 sessions=1 clients=1 privilege=write unknown_revision_calls=0 verdict=blocked blocking=[agent@0.9.0]"
	if got != want {
		t.Errorf("adapter\n  %s\nwant\n  %s", got, want)
	}

	// Propagation: the one session was notified of each tool and
	// refreshed. After the notice it sent A and D on deploy_preview's
	// revision 1, B on sync_project's, C on delete_branch's; after its
	// refresh, all but A. The client's own list_changed names no tool: its
	// row ("") counts the session's four stale calls after it, three after
	// the refresh.
	var prop []string
	for _, r := range report[apiv1.PropagationRow](t, p, "propagation", env, nil) {
		lag := "null"
		if r.LagMaxMs != nil {
			lag = "set"
			if *r.LagMaxMs < 0 || *r.LagMaxMs > int64(time.Minute/time.Millisecond) {
				lag = fmt.Sprint(*r.LagMaxMs)
			}
		}
		prop = append(prop, fmt.Sprintf("%s notified=%d refreshed=%d never=%d lag=%s after_notice=%d after_refresh=%d sessions_with_stale=%d",
			r.Tool, r.NotifiedSessions, r.RefreshedSessions, r.NeverRefreshed, lag, r.StaleCallsAfterNotice, r.StaleCallsAfterRefresh, r.SessionsWithStaleCalls))
	}
	slices.Sort(prop)
	wantProp := []string{
		" notified=1 refreshed=1 never=0 lag=set after_notice=4 after_refresh=3 sessions_with_stale=1",
		"delete_branch notified=1 refreshed=1 never=0 lag=set after_notice=1 after_refresh=1 sessions_with_stale=1",
		"deploy_preview notified=1 refreshed=1 never=0 lag=set after_notice=2 after_refresh=1 sessions_with_stale=1",
		"sync_project notified=1 refreshed=1 never=0 lag=set after_notice=1 after_refresh=1 sessions_with_stale=1",
	}
	if !slices.Equal(prop, wantProp) {
		t.Errorf("propagation\n  %s\nwant\n  %s", strings.Join(prop, "\n  "), strings.Join(wantProp, "\n  "))
	}

	// No violation: nothing rejected had started, no removed tool
	// succeeded, and both retries across a change were a person's.
	if v := report[apiv1.ViolationRow](t, p, "violations", env, nil); len(v) != 0 {
		t.Errorf("violations %+v, want none", v)
	}
}
