package queries_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/testing/fixture"
	"github.com/mcpdrift/mcpdrift/queries"
)

// TestCheckUsage checks the release check's usage figures against the
// fixture's events, counted by hand (calls of the tool whose client
// revision is the one named, in the week before fixture.Now).
func TestCheckUsage(t *testing.T) {
	r := runner(t)
	rows, err := r.CheckUsage(ctx(t), week(fixture.TenantA), []string{"deploy_preview", "create_issue", "delete_branch"})
	if err != nil {
		t.Fatal(err)
	}
	find := func(tool, rev string) queries.CheckUsageRow {
		t.Helper()
		for _, row := range rows {
			if row.Tool == tool && row.RevisionClient == rev {
				return row
			}
		}
		t.Fatalf("no check usage row for %s revision %s in %+v", tool, rev, rows)
		return queries.CheckUsageRow{}
	}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// deploy_preview planned with 2: cursor@0.48.0 93 calls (10+d a day
	// and the 2 mixed-revision calls; its oldest session 75 minutes),
	// claude-desktop@1.2.0 14 (2 a day, 41 minutes); 15 sessions, 7 runs,
	// all write, none rejected.
	want := queries.CheckUsageRow{Tool: "deploy_preview", RevisionClient: "2",
		Calls: 107, Sessions: 15, Runs: 7, Clients: 2, MaxPrivilege: "write", MaxSessionAgeS: 4500,
		FirstSeen: at("2099-03-09T13:00:00Z"), LastSeen: at("2099-03-15T14:41:00Z"),
		Callers: []apiv1.ClientUsage{
			{Client: "cursor@0.48.0", Calls: 93, MaxSessionAgeS: agePtr(4500), MaxPrivilege: "write"},
			{Client: "claude-desktop@1.2.0", Calls: 14, MaxSessionAgeS: agePtr(2460), MaxPrivilege: "write"},
		}}
	if got := find("deploy_preview", "2"); !reflect.DeepEqual(got, want) {
		t.Errorf("deploy_preview 2:\n got %+v\nwant %+v", got, want)
	}
	// And 42 calls still planned with 1 (35 claude-desktop@0.9.1, 7
	// legacy-bot), normalised by the adapter.
	if got := find("deploy_preview", "1"); got.Calls != 42 || got.Clients != 2 || got.MaxSessionAgeS != 468000 {
		t.Errorf("deploy_preview 1: %+v", got)
	}
	// create_issue planned with 3: 11 calls in 11 sessions, no run; with 2:
	// the 18 stale rejections. One automatic retry crossed a semantic or
	// authority change.
	if got := find("create_issue", "3"); got.Calls != 11 || got.Sessions != 11 || got.Runs != 0 || got.Clients != 2 ||
		got.StaleRejections != 0 || got.RetriesAcrossChange != 1 || got.MaxSessionAgeS != 3665 {
		t.Errorf("create_issue 3: %+v", got)
	}
	if got := find("create_issue", "2"); got.Calls != 18 || got.StaleRejections != 18 || got.RejectedSideEffects != 0 {
		t.Errorf("create_issue 2: %+v", got)
	}
	// delete_branch planned with 4: claude-desktop@1.2.0 6, ci-runner@2.0.0
	// 1, destructive; with 3, one rejected call had started its side effect.
	// Two automatic retries crossed a semantic or authority change.
	if got := find("delete_branch", "4"); got.Calls != 7 || got.Sessions != 2 || got.Runs != 1 || got.MaxPrivilege != "destructive" ||
		got.RetriesAcrossChange != 2 || len(got.Callers) != 2 || got.Callers[0].Client != "claude-desktop@1.2.0" || got.Callers[0].Calls != 6 {
		t.Errorf("delete_branch 4: %+v", got)
	}
	if got := find("delete_branch", "3"); got.Calls != 7 || got.RejectedSideEffects != 1 {
		t.Errorf("delete_branch 3: %+v", got)
	}
	// The calls that did not say which revision they were planned with
	// have their row, revision "": goose@1.0.0's 5 deploy_preview calls
	// in one session, and its 2 delete_branch calls, destructive.
	if got := find("deploy_preview", ""); got.Calls != 5 || got.Sessions != 1 || got.Clients != 1 || got.MaxPrivilege != "write" ||
		len(got.Callers) != 1 || got.Callers[0].Client != "goose@1.0.0" || got.Callers[0].Calls != 5 || got.Callers[0].MaxSessionAgeS != nil {
		t.Errorf("deploy_preview without a revision: %+v", got)
	}
	if got := find("delete_branch", ""); got.Calls != 2 || got.Sessions != 1 || got.MaxPrivilege != "destructive" || !got.LastSeen.Equal(at("2099-03-16T11:50:00Z")) {
		t.Errorf("delete_branch without a revision: %+v", got)
	}
	for _, row := range rows {
		if row.Tool == "search_docs" {
			t.Errorf("a tool the check does not name: %+v", row)
		}
	}
}

// agePtr is a known session age.
func agePtr(s int64) *int64 { return &s }
