package queries_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/testing/fixture"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
)

// TestHandComputedFigures checks figures worked out by hand from the
// fixture's comments, independently of the golden files.
func TestHandComputedFigures(t *testing.T) {
	r := runner(t)
	c := ctx(t)
	a := week(fixture.TenantA)

	t.Run("StaleUsage", func(t *testing.T) {
		rows, err := r.StaleUsage(c, a)
		if err != nil {
			t.Fatal(err)
		}
		find := func(tool, rc, rs string) apiv1.StaleUsageRow {
			t.Helper()
			for _, row := range rows {
				if row.Tool == tool && row.RevisionClient == rc && row.RevisionServer == rs {
					return row
				}
			}
			t.Fatalf("no stale usage row for %s %s→%s", tool, rc, rs)
			return apiv1.StaleUsageRow{}
		}
		// deploy_preview 1→2: 35 from claude-desktop@0.9.1 (8-d a day) and
		// 7 from legacy-bot's run; none in the week before, which the store
		// does not hold whole (its first call is at Now-10d), so no trend.
		// The deployer advertised both revisions: 2 drops the optional
		// dry_run of 1 and sets additionalProperties false, two bounded
		// migrations, the first of which the summary says.
		d := find("deploy_preview", "1", "2")
		staleTrue := true
		class, change := "bounded_migration", dropDryRun
		want := apiv1.StaleUsageRow{Tool: "deploy_preview", RevisionClient: "1", RevisionServer: "2", Stale: &staleTrue,
			Calls: 42, Normalized: 42, Sessions: 8, Runs: 1, Clients: 2,
			FirstSeen: fixture.Now.Add(-7*24*time.Hour + 3*time.Hour), LastSeen: fixture.Now.Add(-20 * time.Hour),
			CallsPrevious: 0, PreviousFrom: fixture.Now.Add(-14 * 24 * time.Hour), Trend: nil,
			ChangeClass: &class, Change: &change}
		if !reflect.DeepEqual(d, want) {
			t.Errorf("deploy_preview 1→2:\n got %+v\nwant %+v", d, want)
		}
		// deploy_preview 2→2: cursor 10+d a day (91), claude-desktop@1.2.0
		// 2 a day (14), 2 mixed-revision calls.
		if d := find("deploy_preview", "2", "2"); d.Calls != 107 || d.Current != 107 || d.Stale == nil || *d.Stale || d.Sessions != 15 || d.Runs != 7 {
			t.Errorf("deploy_preview 2→2: %+v", d)
		}
		// create_issue 2→3: 10 first rejections, 2 failed retries, 6 in the
		// propagation sessions.
		if d := find("create_issue", "2", "3"); d.Rejected != 18 || d.Sessions != 14 || d.Clients != 2 {
			t.Errorf("create_issue 2→3: %+v", d)
		}
		// send_payment old→new: 4 removed, 1 current (removal), 3 normalised.
		if d := find("send_payment", "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae", "sha256:fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9"); d.Removed != 4 || d.Current != 1 || d.Normalized != 3 || d.Clients != 3 {
			t.Errorf("send_payment old→new: %+v", d)
		}
		// search_docs: 70 + 1680 background in prod, 10 in staging.
		if d := find("search_docs", "2", "2"); d.Calls != 1760 {
			t.Errorf("search_docs calls = %d, want 1760", d.Calls)
		}
		prod := a
		prod.Environment = "prod"
		rows, err = r.StaleUsage(c, prod)
		if err != nil {
			t.Fatal(err)
		}
		if d := find("search_docs", "2", "2"); d.Calls != 1750 {
			t.Errorf("search_docs calls in prod = %d, want 1750", d.Calls)
		}
	})

	t.Run("Rejections", func(t *testing.T) {
		rows, err := r.Rejections(c, a)
		if err != nil {
			t.Fatal(err)
		}
		type key struct{ tool, code, client string }
		got := map[key]apiv1.RejectionRow{}
		for _, row := range rows {
			got[key{row.Tool, row.ErrorCode, row.ClientName + "@" + row.ClientVersion}] = row
		}
		for k, w := range map[key]struct {
			rejected, toolCalls, violations uint64
		}{
			{"create_issue", "STALE_TOOL_SCHEMA", "claude-desktop@0.9.1"}: {12, 37, 0},
			{"create_issue", "STALE_TOOL_SCHEMA", "claude-desktop@1.2.0"}: {6, 37, 0},
			// Of delete_branch's 3 + 4 + 1 + 6 calls and goose's 2
			// without a client revision.
			{"delete_branch", "INCOMPATIBLE_TOOL_SCHEMA", "ci-runner@2.0.0"}: {4, 16, 1},
			{"send_payment", "INVALID_ARGUMENTS", "cursor@0.48.0"}:           {3, 23, 1},
			// The 4 calls to the removed revision (TOOL_REMOVED), of the
			// tool's 12 + 3 + 2 + 4 + 1 + 1 = 23.
			{"send_payment", "TOOL_REMOVED", "legacy-bot@1.0.0"}: {4, 23, 0},
		} {
			g, ok := got[k]
			if !ok || g.Rejected != w.rejected || g.ToolCalls != w.toolCalls || g.SideEffectViolations != w.violations {
				t.Errorf("%v: got %+v, want %+v", k, g, w)
			}
			if ok && g.RejectionRate != float64(w.rejected)/float64(w.toolCalls) {
				t.Errorf("%v: rate %v, want %d/%d", k, g.RejectionRate, w.rejected, w.toolCalls)
			}
		}
		if len(rows) != 5 {
			t.Errorf("%d rejection rows, want 5", len(rows))
		}
	})

	t.Run("Repairs", func(t *testing.T) {
		rows, err := r.Repairs(c, a)
		if err != nil {
			t.Fatal(err)
		}
		// send_payment has rejections (3 invalid, 4 removed) but no
		// retry and no repair: amplification 0 of 7, 0 of 3 invalid and 0
		// of 4 removed, none (null) for the kinds it had no rejection of.
		if len(rows) != 3 || rows[0].Tool != "create_issue" || rows[2].Tool != "send_payment" ||
			rows[2].Rejections != 7 || rows[2].Amplification == nil || *rows[2].Amplification != 0 || rows[2].AutomaticSuccessRate != nil {
			t.Fatalf("repairs rows: %+v", rows)
		}
		type kinds struct {
			stale, incompatible, invalid, removed             uint64
			afterStale, afterIncompatible, afterInvalid       uint64
			afterRemoved, afterOther                          uint64
			ampStale, ampIncompatible, ampInvalid, ampRemoved string
		}
		for i, want := range []kinds{
			// create_issue: 18 stale rejections; 8 of its 9 retries
			// said they followed one, the person's approved retry did not.
			{18, 0, 0, 0, 8, 0, 0, 0, 1, js(8.0 / 18), "null", "null", "null"},
			// delete_branch: 4 calls rejected_incompatible, then one
			// automatic retry across the authority change.
			{0, 4, 0, 0, 0, 1, 0, 0, 0, "null", "0.25", "null", "null"},
			{0, 0, 3, 4, 0, 0, 0, 0, 0, "null", "null", "0", "0"},
		} {
			r := rows[i]
			got := kinds{r.StaleRejections, r.IncompatibleRejections, r.InvalidRejections, r.RemovedCalls,
				r.RetriesAfterStale, r.RetriesAfterIncompatible, r.RetriesAfterInvalid, r.RetriesAfterRemoved, r.RetriesAfterOther,
				js(r.AmplificationStale), js(r.AmplificationIncompatible), js(r.AmplificationInvalid), js(r.AmplificationRemoved)}
			if got != want {
				t.Errorf("%s by kind: got %+v, want %+v", r.Tool, got, want)
			}
			if sum := r.RetriesAfterStale + r.RetriesAfterIncompatible + r.RetriesAfterInvalid + r.RetriesAfterRemoved + r.RetriesAfterOther; sum != r.RetryCalls {
				t.Errorf("%s: retries by kind sum to %d, want the %d retry calls", r.Tool, sum, r.RetryCalls)
			}
		}
		ci := rows[0]
		// 18 stale rejections, create_issue's only rejections: 9 retries
		// per 18 rejected calls.
		if ci.StaleRejections != 18 || ci.Rejections != 18 || ci.RetryCalls != 9 || ci.Amplification == nil || *ci.Amplification != 0.5 ||
			ci.RefreshRetries != 5 || ci.ModelRepairs != 2 || ci.HumanApprovals != 2 || ci.HumanApprovalsDenied != 1 ||
			ci.Abandons != 1 || ci.AutomaticRepairs != 7 || ci.AutomaticSucceeded != 6 || ci.AutomaticFailed != 1 ||
			ci.AutomaticSuccessRate == nil || *ci.AutomaticSuccessRate != 6.0/7 {
			t.Errorf("create_issue repairs: %+v", ci)
		}
		// Successful automatic durations 800 1200 1500 2100 4000 6000: the
		// median lies between the third and the fourth. The one successful
		// human approval took 180000.
		if p := ci.AutomaticRepairP50Ms; p == nil || *p < 1500 || *p > 2100 {
			t.Errorf("create_issue automatic time to repair p50 = %v, want 1500..2100", js(p))
		}
		if p := ci.AutomaticRepairP95Ms; p == nil || *p > 6000 || *p < 4000 {
			t.Errorf("create_issue automatic time to repair p95 = %v, want 4000..6000, not a person's wait", js(p))
		}
		if p, q := ci.HumanRepairP50Ms, ci.HumanRepairP95Ms; p == nil || *p != 180000 || q == nil || *q != 180000 {
			t.Errorf("create_issue human time to repair p50, p95 = %v, %v, want 180000", js(p), js(q))
		}
		// delete_branch: 1 automatic refresh_retry that succeeded, 1
		// abandon, no human approval.
		if db := rows[1]; db.HumanRepairP50Ms != nil || db.AutomaticSuccessRate == nil {
			t.Errorf("delete_branch repairs: %s", js(db))
		}
	})

	t.Run("AdapterRetirement", func(t *testing.T) {
		verdicts := func(f queries.Filter) map[string]apiv1.AdapterRow {
			t.Helper()
			rows, err := r.AdapterRetirement(c, f, retire)
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]apiv1.AdapterRow{}
			for _, row := range rows {
				m[row.AdapterID] = row
			}
			return m
		}
		got := verdicts(a)
		for id, w := range map[string]struct {
			verdict         string
			calls, wouldRej uint64
		}{
			"deploy_preview/1-2": {queries.VerdictBlocked, 42, 42},
			"create_issue/1-3":   {queries.VerdictBlocked, 8, 8},
			"delete_branch/3-4":  {queries.VerdictAtRisk, 3, 3},
			"search_docs/1-2":    {queries.VerdictReady, 0, 0},
			// Its 1 call is a removed_tool_success violation.
			"send_payment/legacy": {queries.VerdictBlocked, 1, 1},
			"send_payment/shim":   {queries.VerdictAtRisk, 2, 2},
		} {
			g := got[id]
			if g.Verdict != w.verdict || g.Calls != w.calls || g.WouldBeRejected != w.wouldRej {
				t.Errorf("%s: verdict %q calls %d what-if %d, want %q %d %d (%s)", id, g.Verdict, g.Calls, g.WouldBeRejected, w.verdict, w.calls, w.wouldRej, g.Reason)
			}
		}
		if len(got) != 6 {
			t.Errorf("%d adapters, want 6", len(got))
		}
		dp := got["deploy_preview/1-2"]
		if dp.WindowEnd == nil || !dp.WindowEnd.Equal(fixture.Now.Add(20*24*time.Hour)) {
			t.Errorf("deploy_preview/1-2 window end %v, want the latest declaration's Now+20d", dp.WindowEnd)
		}
		// 42 through the adapter, 107 planned with 2 and goose's 5 that
		// did not say.
		if dp.ToolCalls != 154 || ageOf(dp.MaxSessionAgeS) != 468000 || dp.Sessions != 8 || len(dp.BlockingClients) != 2 || dp.BlockingClients[0].Client != "claude-desktop@0.9.1" || dp.BlockingClients[0].Calls != 35 {
			t.Errorf("deploy_preview/1-2: %+v", dp)
		}
		if g := got["send_payment/shim"]; g.Registered || g.MaxPrivilege != "credentialed" {
			t.Errorf("send_payment/shim: %+v", g)
		}
		if g := got["delete_branch/3-4"]; ageOf(g.MaxSessionAgeS) != 29*3600 || g.MaxPrivilege != "destructive" {
			t.Errorf("delete_branch/3-4: %+v", g)
		}
		// Unused in the window, last used at Now-10d+4m (5 calls from
		// Now-10d, a minute apart).
		if g := got["search_docs/1-2"]; !g.WindowEnded || g.LastSeen == nil || !g.LastSeen.Equal(fixture.Now.Add(-10*24*time.Hour+4*time.Minute)) || g.LastSeenInWindow {
			t.Errorf("search_docs/1-2: %+v", g)
		}
		if g := got["send_payment/legacy"]; g.RemovedToolSuccesses != 1 || !strings.Contains(g.Reason, "1 removed_tool_success violation") {
			t.Errorf("send_payment/legacy: %+v", g)
		}
		// Excluding ci-runner leaves create_issue/1-3 with cursor's 2 calls.
		for _, excl := range []string{"ci-runner", "ci-runner@2.0.0"} {
			f := a
			f.ExcludeClients = []string{excl}
			if g := verdicts(f)["create_issue/1-3"]; g.Verdict != queries.VerdictReady || g.Calls != 2 {
				t.Errorf("excluding %s: create_issue/1-3 %q with %d calls, want ready with 2", excl, g.Verdict, g.Calls)
			}
		}
	})

	t.Run("AdapterRetirementUnknownRevision", func(t *testing.T) {
		run := func(f queries.Filter, o queries.RetirementOptions) map[string]apiv1.AdapterRow {
			t.Helper()
			m := map[string]apiv1.AdapterRow{}
			for _, get := range []func(context.Context, queries.Filter, queries.RetirementOptions) ([]apiv1.AdapterRow, error){r.AdapterRetirement, r.RawAdapterRetirement} {
				rows, err := get(c, f, o)
				if err != nil {
					t.Fatal(err)
				}
				for _, row := range rows {
					if prev, ok := m[row.AdapterID]; ok && !reflect.DeepEqual(prev, row) {
						t.Errorf("%s: the rollups say %s, the events %s", row.AdapterID, js(prev), js(row))
					}
					m[row.AdapterID] = row
				}
			}
			return m
		}
		// goose@1.0.0 says no revision: 5 deploy_preview calls, 2
		// delete_branch calls; every other call of the fixture says one.
		got := run(a, retire)
		for id, want := range map[string]uint64{"deploy_preview/1-2": 5, "delete_branch/3-4": 2, "create_issue/1-3": 0, "search_docs/1-2": 0,
			"send_payment/legacy": 0, "send_payment/shim": 0} {
			if g := got[id].UnknownRevisionCalls; g != want {
				t.Errorf("%s: %d calls without a client revision, want %d", id, g, want)
			}
		}
		if c := got["deploy_preview/1-2"].Callers; len(c) != 3 || c[2].Client != "goose@1.0.0" || c[2].Calls != 0 || c[2].UnknownRevisionCalls != 5 {
			t.Errorf("deploy_preview/1-2 callers: %s", js(c))
		}
		// With the clients of its own calls excluded, no call goes
		// through deploy_preview/1-2, but goose's 5 may be stale callers:
		// at risk, unless judged safe as asked or goose is excluded too.
		f := a
		f.ExcludeClients = []string{"claude-desktop", "legacy-bot"}
		g := run(f, retire)["deploy_preview/1-2"]
		if g.Verdict != queries.VerdictAtRisk || g.Calls != 0 || g.UnknownRevisionCalls != 5 || len(g.BlockingClients) != 1 || g.BlockingClients[0].Client != "goose@1.0.0" ||
			g.Reason != "no calls through it in the window, but 5 calls to deploy_preview did not say which revision they were planned with (unknown, not assumed safe); it bridges 1 → 2: "+dropDryRun {
			t.Errorf("deploy_preview/1-2 without its callers: %s", js(g))
		}
		safe := retire
		safe.UnknownSafe = true
		if g := run(f, safe)["deploy_preview/1-2"]; g.Verdict != queries.VerdictReady || len(g.BlockingClients) != 0 ||
			g.Reason != "no calls in the window; 5 calls to deploy_preview did not say which revision they were planned with, judged safe as asked; it bridges 1 → 2: "+dropDryRun {
			t.Errorf("deploy_preview/1-2 without its callers, unknown judged safe: %s", js(g))
		}
		f.ExcludeClients = append(f.ExcludeClients, "goose@1.0.0")
		if g := run(f, retire)["deploy_preview/1-2"]; g.Verdict != queries.VerdictReady || g.UnknownRevisionCalls != 0 || len(g.Callers) != 0 {
			t.Errorf("deploy_preview/1-2 without goose either: %s", js(g))
		}
		// goose's delete_branch calls lie in the last half hour, under the
		// deployer service.
		f = queries.Filter{Tenant: fixture.TenantA, From: fixture.Now.Add(-30 * time.Minute), To: fixture.Now, Service: "deployer"}
		if g := run(f, retire)["delete_branch/3-4"]; g.Verdict != queries.VerdictAtRisk || g.Calls != 0 || g.UnknownRevisionCalls != 2 || g.ToolCalls != 2 {
			t.Errorf("delete_branch/3-4 over the last 30m: %s", js(g))
		}
		f.Service = "docs"
		if g, ok := run(f, retire)["delete_branch/3-4"]; ok {
			t.Errorf("delete_branch/3-4 of the docs service: %s", js(g))
		}
	})

	t.Run("Propagation", func(t *testing.T) {
		rows, err := r.Propagation(c, a)
		if err != nil {
			t.Fatal(err)
		}
		p50, p95, lagMax := 7500.0, 52800.0, int64(60000)
		want := []apiv1.PropagationRow{{Tool: "create_issue", NotifiedSessions: 5, RefreshedSessions: 4, NeverRefreshed: 1,
			LagP50Ms: &p50, LagP95Ms: &p95, LagMaxMs: &lagMax,
			StaleCallsAfterNotice: 5, StaleCallsAfterRefresh: 1, SessionsWithStaleCalls: 3}}
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("propagation:\n got %s\nwant %s", js(rows), js(want))
		}
	})

	t.Run("RevisionSources", func(t *testing.T) {
		rows, err := r.RevisionSources(c, a)
		if err != nil {
			t.Fatal(err)
		}
		got := map[[2]string]apiv1.RevisionSourceRow{}
		for _, row := range rows {
			if row.Declared+row.Listed+row.Inferred+row.Unknown != row.Calls {
				t.Errorf("%s × %s: the sources sum to %d of %d calls", row.Tool, row.Client, row.Declared+row.Listed+row.Inferred+row.Unknown, row.Calls)
			}
			got[[2]string{row.Tool, row.Client}] = row
		}
		share := func(n, d float64) *float64 { v := n / d; return &v }
		for k, w := range map[[2]string]apiv1.RevisionSourceRow{
			// 13 calls of cline's: 4 + 2 listed, 3 inferred, and 4 unknown:
			// 2 + 1 without a revision, 1 that says listed without one.
			{"list_projects", "cline@3.17.0"}: {Calls: 13, Listed: 6, Inferred: 3, Unknown: 4, UnknownShare: share(4, 13)},
			// goose@1.0.0 declares nothing and nothing is known of its
			// calls: unknown, all of them.
			{"deploy_preview", "goose@1.0.0"}: {Calls: 5, Unknown: 5, UnknownShare: share(5, 5)},
			{"delete_branch", "goose@1.0.0"}:  {Calls: 2, Unknown: 2, UnknownShare: share(2, 2)},
			// cursor says declared: counted as the calls that say nothing.
			{"list_projects", "cursor@0.48.0"}: {Calls: 3, Declared: 3, UnknownShare: share(0, 3)},
			// The 10 first stale rejections were listed, the 9 retries
			// state no source.
			{"create_issue", "claude-desktop@0.9.1"}: {Calls: 19, Declared: 9, Listed: 10, UnknownShare: share(0, 19)},
			// The 2 shim calls' old revision was inferred; 3 rejected
			// calls state none.
			{"send_payment", "cursor@0.48.0"}: {Calls: 5, Declared: 3, Inferred: 2, UnknownShare: share(0, 5)},
			// 91 calls that state nothing and the 2 mixed-revision calls
			// that say declared.
			{"deploy_preview", "cursor@0.48.0"}:     {Calls: 93, Declared: 93, UnknownShare: share(0, 93)},
			{"search_docs", "claude-desktop@1.2.0"}: {Calls: 1750, Declared: 1750, UnknownShare: share(0, 1750)},
		} {
			w.Tool, w.Client = k[0], k[1]
			if g := got[k]; !reflect.DeepEqual(g, w) {
				t.Errorf("%v:\n got %s\nwant %s", k, js(g), js(w))
			}
		}
		// Every tool × client pair that called in the week: 22.
		if len(rows) != 22 {
			t.Errorf("%d rows, want 22: %s", len(rows), js(rows))
		}
		// The client filter keeps cline's rows; within two days the
		// minutely tier serves the edges, and the run's calls at Now-5d
		// are left out.
		f := a
		f.From, f.Client = fixture.Now.Add(-36*time.Hour+17*time.Minute), "cline"
		rows, err = r.RevisionSources(c, f)
		if err != nil {
			t.Fatal(err)
		}
		want := []apiv1.RevisionSourceRow{{Tool: "list_projects", Client: "cline@3.17.0", Calls: 10, Listed: 4, Inferred: 3, Unknown: 3, UnknownShare: share(3, 10)}}
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("cline in the last 36 h:\n got %s\nwant %s", js(rows), js(want))
		}
	})

	t.Run("ContractErrors", func(t *testing.T) {
		t0 := fixture.Now.Add(-2*24*time.Hour + 6*time.Hour)
		rate := func(n, d float64) *float64 { v := n / d; return &v }
		fields := func(fs ...apiv1.ContractField) []apiv1.ContractField {
			return append([]apiv1.ContractField{}, fs...)
		}
		cd := apiv1.ContractErrorRow{Client: "claude-desktop@1.2.0", ContractErrors: 2,
			Fields:    fields(apiv1.ContractField{Tool: "create_issue", Field: "issue.id", ContractErrors: 2}),
			Refreshes: 6, FailedRefreshes: 1, RefreshFailureRate: rate(1, 6), Sessions: 5, LastSeen: t0.Add(3 * time.Minute)}
		cur := apiv1.ContractErrorRow{Client: "cursor@0.48.0", ContractErrors: 3,
			Fields: fields(apiv1.ContractField{Tool: "send_payment", Field: "transfer.id", ContractErrors: 2},
				apiv1.ContractField{Tool: "create_issue", Field: "issue.url", ContractErrors: 1}),
			Refreshes: 2, FailedRefreshes: 1, RefreshFailureRate: rate(1, 2), Sessions: 1, LastSeen: fixture.Now.Add(-3*time.Hour + 4*time.Minute)}
		cline := apiv1.ContractErrorRow{Client: "cline@3.17.0", ContractErrors: 1,
			Fields:    fields(apiv1.ContractField{Tool: "list_projects", Field: "projects[].id", ContractErrors: 1}),
			Refreshes: 2, FailedRefreshes: 1, RefreshFailureRate: rate(1, 2), Sessions: 1, LastSeen: fixture.Now.Add(-5*24*time.Hour + 7*time.Minute)}
		check := func(name string, f queries.Filter, want ...apiv1.ContractErrorRow) {
			t.Helper()
			rows, err := r.ContractErrors(c, f)
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = []apiv1.ContractErrorRow{}
			}
			if !reflect.DeepEqual(rows, want) {
				t.Errorf("%s:\n got %s\nwant %s", name, js(rows), js(want))
			}
		}
		check("week", a, cd, cline, cur)
		// The tool filter keeps the contract errors about the tool, and
		// every refresh: cline has none about create_issue, and its
		// refreshes still count.
		f := a
		f.Tool = "create_issue"
		curTool := cur
		curTool.ContractErrors, curTool.Fields = 1, fields(apiv1.ContractField{Tool: "create_issue", Field: "issue.url", ContractErrors: 1})
		clineTool := cline
		clineTool.ContractErrors, clineTool.Fields = 0, fields()
		check("tool create_issue", f, cd, clineTool, curTool)
		// A window that ends between cursor's two refreshes: the failed
		// one only, a rate of 1.
		f = a
		f.From, f.To = fixture.Now.Add(-3*time.Hour-time.Minute), fixture.Now.Add(-3*time.Hour+3*time.Minute+time.Second)
		curCut := cur
		curCut.Refreshes, curCut.RefreshFailureRate, curCut.LastSeen = 1, rate(1, 1), fixture.Now.Add(-3*time.Hour+3*time.Minute)
		check("cursor's failed refresh", f, curCut)
		// A window of contract errors and no refresh: the rate is null,
		// not 0.
		f.To = fixture.Now.Add(-3*time.Hour + 2*time.Minute + time.Second)
		curNone := cur
		curNone.Refreshes, curNone.FailedRefreshes, curNone.RefreshFailureRate, curNone.LastSeen = 0, 0, nil, fixture.Now.Add(-3*time.Hour+2*time.Minute)
		check("no refresh", f, curNone)
		// Excluding cursor and cline by name, and the service filter
		// (the client events carry the client's own service).
		f = a
		f.ExcludeClients = []string{"cursor", "cline@3.17.0"}
		check("excluded", f, cd)
		f = a
		f.Service = "cline"
		check("service", f, cline)
		// Tenant B: one refresh of cursor's and no contract error.
		b := week(fixture.TenantB)
		check("tenant B", b, apiv1.ContractErrorRow{Client: "cursor@0.48.0", Fields: fields(), Refreshes: 1, RefreshFailureRate: rate(0, 1),
			Sessions: 1, LastSeen: fixture.Now.Add(-24*time.Hour + time.Hour + 5*time.Second)})
	})

	t.Run("Violations", func(t *testing.T) {
		page, err := r.Violations(c, a, queries.Page{})
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		for _, v := range page.Rows {
			kinds[v.Kind]++
		}
		want := map[string]int{
			queries.ViolationSideEffectRejected: 2,
			queries.ViolationMixedRevision:      2,
			queries.ViolationRemovedToolSuccess: 2,
			queries.ViolationRetryAcrossChange:  3,
		}
		if !reflect.DeepEqual(kinds, want) || page.Next != "" {
			t.Errorf("violations by kind %v (next %q), want %v", kinds, page.Next, want)
		}
	})

	t.Run("Audit", func(t *testing.T) {
		page, err := r.Audit(c, queries.AuditFilter{Filter: a, RunID: "legacy-run-1"}, queries.Page{})
		if err != nil {
			t.Fatal(err)
		}
		// 7 deploy_preview calls and 4 removed send_payment calls; the call
		// at Now+30m is outside the window.
		if len(page.Rows) != 11 {
			t.Errorf("%d audited calls of legacy-run-1, want 11", len(page.Rows))
		}
		one, err := r.Audit(c, queries.AuditFilter{Filter: a, RequestID: page.Rows[0].RequestID}, queries.Page{})
		if err != nil {
			t.Fatal(err)
		}
		if len(one.Rows) != 1 || one.Rows[0].EventID != page.Rows[0].EventID {
			t.Errorf("audit by request id: %+v", one.Rows)
		}
	})
}

// dropDryRun is the summary of the fixture's deploy_preview 1 → 2: its
// first finding (dry_run removed, additionalProperties false), and the
// one more (additionalProperties narrowed).
const dropDryRun = "`dry_run` was removed and additionalProperties is false: an old call that sets it is rejected (and 1 more)"

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestRollupEqualsRaw checks that the rollup-served reports equal the same
// reports computed from the raw events, over windows that exercise every
// tier: whole days, ragged edges within the minutely retention, and edges
// older than it (widened to the hour), and over filters that the coarse
// rollups answer (none, tool, service and environment) and that only the
// fine ones can (a client, exclusions).
func TestRollupEqualsRaw(t *testing.T) {
	r := runner(t)
	c := ctx(t)
	now := fixture.Now
	windows := []struct {
		name     string
		from, to time.Time
	}{
		{"week", now.Add(-7 * 24 * time.Hour), now},
		{"ragged recent", now.Add(-36*time.Hour + 17*time.Minute + 23*time.Second), now.Add(-5*time.Minute + 30*time.Second)},
		{"ragged old", now.Add(-6*24*time.Hour + 13*time.Minute), now.Add(-3*24*time.Hour + 47*time.Minute)},
		{"one hour", now.Add(-2*24*time.Hour + 6*time.Hour - 10*time.Minute), now.Add(-2*24*time.Hour + 6*time.Hour + 50*time.Minute)},
		{"everything", now.Add(-30 * 24 * time.Hour), now.Add(24 * time.Hour)},
		// Through cline's list_projects calls a minute apart, sources of
		// every kind: minutes from the minutely tier.
		{"cline's minutes", now.Add(-5*time.Hour + 2*time.Minute + 30*time.Second), now.Add(-5*time.Hour + 8*time.Minute + 30*time.Second)},
	}
	filters := []struct {
		name string
		edit func(*queries.Filter)
	}{
		{"all", func(*queries.Filter) {}},
		{"tool", func(f *queries.Filter) { f.Tool = "create_issue" }},
		{"client name", func(f *queries.Filter) { f.Client = "claude-desktop" }},
		{"client version", func(f *queries.Filter) { f.Client = "claude-desktop@0.9.1" }},
		{"excluded", func(f *queries.Filter) { f.ExcludeClients = []string{"cursor", "legacy-bot@1.0.0"} }},
		{"a client that says no revision", func(f *queries.Filter) { f.Client = "goose" }},
		{"service and environment", func(f *queries.Filter) { f.Service, f.Environment = "docs", "staging" }},
		{"cline", func(f *queries.Filter) { f.Client = "cline@3.17.0" }},
	}
	for _, tenant := range []string{fixture.TenantA, fixture.TenantB} {
		for _, w := range windows {
			for _, fl := range filters {
				f := queries.Filter{Tenant: tenant, From: w.from, To: w.to}
				fl.edit(&f)
				t.Run(fmt.Sprintf("%s/%s/%s", tenant, w.name, fl.name), func(t *testing.T) {
					rolled, err := r.StaleUsage(c, f)
					if err != nil {
						t.Fatal(err)
					}
					raw, err := r.RawStaleUsage(c, f)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(rolled, raw) {
						t.Errorf("stale usage from the rollups differs from raw:\nrollup %s\n   raw %s", js(rolled), js(raw))
					}
					rj, err := r.Rejections(c, f)
					if err != nil {
						t.Fatal(err)
					}
					rawRj, err := r.RawRejections(c, f)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(rj, rawRj) {
						t.Errorf("rejections from the rollups differ from raw:\nrollup %s\n   raw %s", js(rj), js(rawRj))
					}
					rp, err := r.Repairs(c, f)
					if err != nil {
						t.Fatal(err)
					}
					rawRp, err := r.RawRepairs(c, f)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(rp, rawRp) {
						t.Errorf("repairs from the rollups differ from raw:\nrollup %s\n   raw %s", js(rp), js(rawRp))
					}
					ar, err := r.AdapterRetirement(c, f, retire)
					if err != nil {
						t.Fatal(err)
					}
					rawAr, err := r.RawAdapterRetirement(c, f, retire)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(ar, rawAr) {
						t.Errorf("adapter retirement from the rollups differs from raw:\nrollup %s\n   raw %s", js(ar), js(rawAr))
					}
					rs, err := r.RevisionSources(c, f)
					if err != nil {
						t.Fatal(err)
					}
					rawRs, err := r.RawRevisionSources(c, f)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(rs, rawRs) {
						t.Errorf("revision sources from the rollups differ from raw:\nrollup %s\n   raw %s", js(rs), js(rawRs))
					}
					if tenant == fixture.TenantA && w.name == "week" && fl.name == "all" && (len(raw) == 0 || len(rawRj) == 0 || len(rawRp) == 0 || len(rawAr) == 0 || len(rawRs) == 0) {
						t.Error("the comparison compared nothing")
					}
				})
			}
		}
	}
}

// TestMinuteTierLive writes calls at the real time and reads a ragged
// window of the last hour, which only the minutely tier can serve, with
// the real clock: stale usage, and revision sources of every kind.
func TestMinuteTierLive(t *testing.T) {
	st := openStore(t)
	c := ctx(t)
	r, err := queries.New(st, database)
	if err != nil {
		t.Fatal(err)
	}
	tenant := fmt.Sprintf("live-%d", time.Now().UnixNano())
	base := time.Now().UTC().Add(-50 * time.Minute)
	var events []otelschema.Event
	for i := 0; i < 300; i++ {
		events = append(events, otelschema.Event{
			ID: uint64(i + 1), Name: otelschema.EventCall, Time: base.Add(time.Duration(i) * 9 * time.Second).UnixNano(),
			Tool: "deploy_preview", SessionID: fmt.Sprintf("s%d", i%7), ClientName: "cursor", ClientVersion: "0.48.0",
			RevisionClient: fmt.Sprint(1 + i%2), RevisionServer: "2", Outcome: []otelschema.Outcome{otelschema.OutcomeNormalized, otelschema.OutcomeCurrent, otelschema.OutcomeRejectedStale}[i%3],
			ErrorCode: "STALE_TOOL_SCHEMA", RevisionClientSource: otelschema.RevisionSource(i % 4),
		})
		if i%5 == 0 {
			events[i].RevisionClient = ""
		}
	}
	if err := st.Write(c, store.Batch{Tenant: tenant, Events: events}); err != nil {
		t.Fatal(err)
	}
	f := queries.Filter{Tenant: tenant, From: base.Add(7*time.Minute + 13*time.Second), To: base.Add(41*time.Minute + 2*time.Second)}
	if p := r.Plan(f.From, f.To); len(p.Spans[queries.TierMinute]) == 0 {
		t.Fatalf("plan %+v reads no minutes", p)
	}
	rolled, err := r.StaleUsage(c, f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := r.RawStaleUsage(c, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) == 0 || !reflect.DeepEqual(rolled, raw) {
		t.Errorf("minutely stale usage differs from raw:\nrollup %s\n   raw %s", js(rolled), js(raw))
	}
	sources, err := r.RevisionSources(c, f)
	if err != nil {
		t.Fatal(err)
	}
	rawSources, err := r.RawRevisionSources(c, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(rawSources) != 1 || rawSources[0].Listed == 0 || rawSources[0].Inferred == 0 || rawSources[0].Unknown == 0 || !reflect.DeepEqual(sources, rawSources) {
		t.Errorf("minutely revision sources differ from raw, or miss a source:\nrollup %s\n   raw %s", js(sources), js(rawSources))
	}
}

// TestTenantIsolation runs every report for each tenant and checks that
// nothing of the other tenant shows up.
func TestTenantIsolation(t *testing.T) {
	r := runner(t)
	c := ctx(t)
	marker := map[string][]string{
		fixture.TenantA: {"globex", "globex-agent", "globex-secret"},
		fixture.TenantB: {"acme", "claude-desktop", "legacy-bot", "create_issue", "send_payment", "ci-runner"},
	}
	for tenant, foreign := range marker {
		out := allReports(t, r, week(tenant))
		for _, m := range foreign {
			if strings.Contains(out, m) {
				t.Errorf("tenant %s's reports mention %q of the other tenant", tenant, m)
			}
		}
	}
	// Tenant B's own figures are its own: 7 calls a day through its adapter.
	rows, err := r.AdapterRetirement(c, week(fixture.TenantB), retire)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Calls != 49 || rows[0].Clients != 1 {
		t.Errorf("tenant B adapters: %s", js(rows))
	}
}

// allReports runs every report for f and returns their JSON.
func allReports(t *testing.T, r *queries.Runner, f queries.Filter) string {
	t.Helper()
	c := ctx(t)
	var out []any
	add := func(v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	add(r.Tools(c, f))
	add(r.StaleUsage(c, f))
	add(r.RawStaleUsage(c, f))
	add(r.Rejections(c, f))
	add(r.RawRejections(c, f))
	add(r.Repairs(c, f))
	add(r.AdapterRetirement(c, f, retire))
	add(r.Propagation(c, f))
	add(r.Violations(c, f, queries.Page{}))
	add(r.Audit(c, queries.AuditFilter{Filter: f}, queries.Page{Limit: queries.MaxPageLimit}))
	add(r.RawRepairs(c, f))
	add(r.RawAdapterRetirement(c, f, retire))
	add(r.RevisionSources(c, f))
	add(r.RawRevisionSources(c, f))
	add(r.ContractErrors(c, f))
	return js(out)
}

var hostile = []string{
	"'", `\`, `\'`, "[]", "x' OR tenant != '", "{tenant:String}", "{{.Database}}",
	"acme'; DROP TABLE mcpdrift.events; --", "%", "['a']", "a\x00b",
	"\n", "\t", "\r\n", "🙂", "\xff\xfe", strings.Repeat("A", 10000), `"`, fixture.HostileTool + "'",
}

// TestHostileStrings passes hostile strings through every filter field:
// the reports return nothing (or, for an exclusion, exactly what they
// return without it), never an error.
func TestHostileStrings(t *testing.T) {
	r := runner(t)
	base := week(fixture.TenantA)
	baseline := allReports(t, r, base)
	fields := []struct {
		name string
		set  func(*queries.Filter, string)
	}{
		{"tenant", func(f *queries.Filter, s string) { f.Tenant = s }},
		{"tool", func(f *queries.Filter, s string) { f.Tool = s }},
		{"service", func(f *queries.Filter, s string) { f.Service = s }},
		{"environment", func(f *queries.Filter, s string) { f.Environment = s }},
		{"client", func(f *queries.Filter, s string) { f.Client = s }},
	}
	strs := hostile
	if testing.Short() {
		strs = hostile[:4]
	}
	for i, s := range strs {
		for _, fd := range fields {
			t.Run(fmt.Sprintf("%s/%d", fd.name, i), func(t *testing.T) {
				f := base
				fd.set(&f, s)
				if empty := allReports(t, r, f); !isEmptyReports(empty, fd.name == "tool") {
					t.Errorf("filter %s = %q returned data: %.500s", fd.name, s, empty)
				}
			})
		}
		t.Run(fmt.Sprintf("exclude/%d", i), func(t *testing.T) {
			f := base
			f.ExcludeClients = []string{s, "", s + s}
			if got := allReports(t, r, f); got != baseline {
				t.Errorf("excluding %q changed the reports", s)
			}
		})
		t.Run(fmt.Sprintf("audit/%d", i), func(t *testing.T) {
			c := ctx(t)
			for _, af := range []queries.AuditFilter{{Filter: base, RunID: s}, {Filter: base, SessionID: s}, {Filter: base, RequestID: s}} {
				page, err := r.Audit(c, af, queries.Page{})
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Rows) != 0 {
					t.Errorf("audit filter %q returned %d rows", s, len(page.Rows))
				}
			}
		})
	}
	// The real tool whose name looks like an injection is found by name.
	f := base
	f.Tool = fixture.HostileTool
	rows, err := r.StaleUsage(ctx(t), f)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Calls != 1 {
		t.Errorf("tool %q: %s", fixture.HostileTool, js(rows))
	}
}

// isEmptyReports reports whether the JSON of allReports holds no rows: the
// adapter registry still lists the tenant's adapters when a call filter
// matches nothing, and the contract-errors report the clients' refreshes
// when toolFilter says a tool filter does (a refresh re-lists every tool),
// so they are checked apart.
func isEmptyReports(s string, toolFilter bool) bool {
	var parts []json.RawMessage
	if err := json.Unmarshal([]byte(s), &parts); err != nil {
		return false
	}
	for i, p := range parts {
		switch i {
		case 6, 11: // adapters: registry rows may remain, but without calls
			var rows []apiv1.AdapterRow
			if json.Unmarshal(p, &rows) != nil {
				return false
			}
			for _, a := range rows {
				if a.Calls != 0 || !a.Registered {
					return false
				}
			}
		case 14: // contract errors: a tool filter leaves the refreshes
			var rows []apiv1.ContractErrorRow
			if json.Unmarshal(p, &rows) != nil || (!toolFilter && len(rows) != 0) {
				return false
			}
			for _, r := range rows {
				if r.ContractErrors != 0 || len(r.Fields) != 0 {
					return false
				}
			}
		case 8, 9: // pages
			var page struct {
				Rows []json.RawMessage `json:"rows"`
			}
			if json.Unmarshal(p, &page) != nil || len(page.Rows) != 0 {
				return false
			}
		default:
			if string(p) != "[]" {
				return false
			}
		}
	}
	return true
}

// TestPagination walks the violations and the audit page by page and
// checks that the pages add up to the whole.
func TestPagination(t *testing.T) {
	r := runner(t)
	c := ctx(t)
	a := week(fixture.TenantA)
	all, err := r.Violations(c, a, queries.Page{Limit: queries.MaxPageLimit})
	if err != nil {
		t.Fatal(err)
	}
	var walked []apiv1.ViolationRow
	page := queries.Page{Limit: 2}
	for n := 0; ; n++ {
		p, err := r.Violations(c, a, page)
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, p.Rows...)
		if p.Next == "" {
			break
		}
		if n > 20 {
			t.Fatal("pagination does not end")
		}
		page.After = p.Next
	}
	if !reflect.DeepEqual(walked, all.Rows) {
		t.Errorf("violations by pages of 2:\n%s\nwant\n%s", js(walked), js(all.Rows))
	}

	audit := queries.AuditFilter{Filter: a}
	whole, err := r.Audit(c, audit, queries.Page{Limit: queries.MaxPageLimit})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Next == "" {
		t.Fatal("the audit fits one page of the maximum: the test needs more calls")
	}
	var rows []apiv1.AuditRow
	page = queries.Page{Limit: 333}
	for len(rows) < len(whole.Rows) {
		p, err := r.Audit(c, audit, page)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, p.Rows...)
		page.After = p.Next
	}
	if !reflect.DeepEqual(rows[:len(whole.Rows)], whole.Rows) {
		t.Error("audit pages of 333 differ from one page of 1000")
	}
}

func TestInvalidInput(t *testing.T) {
	r := runner(t)
	c := ctx(t)
	a := week(fixture.TenantA)
	if _, err := r.StaleUsage(c, queries.Filter{From: a.From, To: a.To}); !errors.Is(err, queries.ErrInvalidFilter) {
		t.Errorf("no tenant: %v", err)
	}
	if _, err := r.StaleUsage(c, queries.Filter{Tenant: "acme", From: a.To, To: a.From}); !errors.Is(err, queries.ErrInvalidFilter) {
		t.Errorf("from after to: %v", err)
	}
	for _, cur := range []string{"x", "!!!", "djE=", "djF8MXwy", "djF8eHwxfA", strings.Repeat("A", 4000)} {
		if _, err := r.Violations(c, a, queries.Page{After: cur}); !errors.Is(err, queries.ErrInvalidCursor) {
			t.Errorf("cursor %.20q: %v", cur, err)
		}
	}
	if _, err := r.Audit(c, queries.AuditFilter{Filter: a}, queries.Page{Limit: queries.MaxPageLimit + 1}); !errors.Is(err, queries.ErrInvalidFilter) {
		t.Errorf("limit over the maximum: %v", err)
	}
	if _, err := r.AdapterRetirement(c, a, queries.RetirementOptions{MaxCalls: -1, MaxShare: -1}); !errors.Is(err, queries.ErrInvalidFilter) {
		t.Errorf("no threshold: %v", err)
	}
}

// TestFiltersNarrow checks that each filter of the common filter removes
// calls from the stale-usage report and keeps some, for the rollup-served
// query and its raw twin alike: both render a filter's condition only when
// it is set (see shape), so their equality alone would not show that a set
// filter reached the SQL.
func TestFiltersNarrow(t *testing.T) {
	r := runner(t)
	c := ctx(t)
	a := week(fixture.TenantA)
	total := func(rows []apiv1.StaleUsageRow) (n uint64) {
		for _, row := range rows {
			n += row.Calls
		}
		return n
	}
	all, err := r.StaleUsage(c, a)
	if err != nil {
		t.Fatal(err)
	}
	filters := []struct {
		name string
		edit func(*queries.Filter)
	}{
		{"tool", func(f *queries.Filter) { f.Tool = "create_issue" }},
		{"service", func(f *queries.Filter) { f.Service = "docs" }},
		{"environment", func(f *queries.Filter) { f.Environment = "staging" }},
		{"client name", func(f *queries.Filter) { f.Client = "claude-desktop" }},
		{"client version", func(f *queries.Filter) { f.Client = "claude-desktop@0.9.1" }},
		{"excluded", func(f *queries.Filter) { f.ExcludeClients = []string{"cursor"} }},
	}
	for _, fl := range filters {
		t.Run(fl.name, func(t *testing.T) {
			f := a
			fl.edit(&f)
			for _, run := range []struct {
				name string
				fn   func(context.Context, queries.Filter) ([]apiv1.StaleUsageRow, error)
			}{{"rollups", r.StaleUsage}, {"raw", r.RawStaleUsage}} {
				rows, err := run.fn(c, f)
				if err != nil {
					t.Fatal(err)
				}
				if n := total(rows); n == 0 || n >= total(all) {
					t.Errorf("%s: %d calls with the filter, %d without", run.name, n, total(all))
				}
				for _, row := range rows {
					if f.Tool != "" && row.Tool != f.Tool {
						t.Errorf("%s: row of tool %q with the filter tool=%q", run.name, row.Tool, f.Tool)
					}
				}
			}
		})
	}
}

// TestTrendAgainstPreviousPeriod writes calls at the edges of a window and
// of the equal period before it — over days and hours, and within the last
// day, where the minutely tier cuts the edges by time — and checks the
// previous period's calls and the trend of stale usage against counts made
// here and against the raw twin; then that a tenant whose first call lies
// inside the previous period gets no trend. No other test has calls there.
func TestTrendAgainstPreviousPeriod(t *testing.T) {
	st := openStore(t)
	r := runner(t)
	c := ctx(t)
	now := fixture.Now
	windows := []struct {
		name     string
		from, to time.Time
	}{
		// Three days and eighteen hours, the period before it read from
		// whole days and hours.
		{"days", now.Add(-9*24*time.Hour - 6*time.Hour), now.Add(-5*24*time.Hour - 12*time.Hour)},
		// Nine hours and twelve minutes and a half within the last day:
		// both periods' edges are cut by time.
		{"minutes", now.Add(-20*time.Hour - 12*time.Minute - 30*time.Second), now.Add(-11 * time.Hour)},
	}
	var id uint64
	for _, w := range windows {
		tenant := fmt.Sprintf("trend-%s-%d", w.name, time.Now().UnixNano())
		p := r.Plan(w.from, w.to)
		var events []otelschema.Event
		call := func(tool string, at time.Time) {
			id++
			events = append(events, otelschema.Event{ID: id, Name: otelschema.EventCall, Time: at.UnixNano(),
				Service: "billing", Tool: tool, SessionID: fmt.Sprint("s", id%3), RunID: fmt.Sprint("r", id%4),
				ClientName: "cursor", ClientVersion: "0.48.0", RevisionClient: "1", RevisionServer: "2",
				Outcome: otelschema.OutcomeNormalized, AdapterID: "refund/v1-v2"})
		}
		tool := "refund-" + w.name
		// Before the previous period: history, counted nowhere.
		call("other", p.PreviousFrom.Add(-time.Hour))
		call(tool, p.PreviousFrom.Add(-time.Second))
		// The previous period: 3 calls, at its edges and between.
		call(tool, p.PreviousFrom)
		call(tool, p.PreviousFrom.Add(p.From.Sub(p.PreviousFrom)/2))
		call(tool, p.From.Add(-time.Second))
		// The window: 4 calls, 4 > 1.2 × 3.
		call(tool, p.From)
		call(tool, p.From.Add(time.Second))
		call(tool, p.From.Add(p.To.Sub(p.From)/2))
		call(tool, p.To.Add(-time.Second))
		call(tool, p.To)
		if err := st.Write(c, store.Batch{Tenant: tenant, Events: events}); err != nil {
			t.Fatal(err)
		}
		f := queries.Filter{Tenant: tenant, From: w.from, To: w.to, Tool: tool}
		rows, err := r.StaleUsage(c, f)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := r.RawStaleUsage(c, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Calls != 4 || rows[0].CallsPrevious != 3 || !rows[0].PreviousFrom.Equal(p.PreviousFrom) ||
			rows[0].Trend == nil || *rows[0].Trend != queries.TrendRising {
			t.Errorf("%s: stale usage %s, want 4 calls against 3 from %v: rising", w.name, js(rows), p.PreviousFrom)
		}
		if !reflect.DeepEqual(rows, raw) {
			t.Errorf("%s: rollups %s, raw %s", w.name, js(rows), js(raw))
		}

		// A tenant whose first call lies inside the previous period: the
		// store does not hold all of it, so no trend.
		fresh := tenant + "-fresh"
		events = events[:0]
		call(tool, p.From.Add(-time.Second))
		call(tool, p.From)
		if err := st.Write(c, store.Batch{Tenant: fresh, Events: events}); err != nil {
			t.Fatal(err)
		}
		f.Tenant = fresh
		rows, err = r.StaleUsage(c, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Calls != 1 || rows[0].CallsPrevious != 1 || rows[0].Trend != nil {
			t.Errorf("%s, fresh: stale usage %s, want 1 call, 1 before and no trend", w.name, js(rows))
		}
	}
}

// ageOf is a session age, -1 when unknown.
func ageOf(s *int64) int64 {
	if s == nil {
		return -1
	}
	return *s
}
