package toolchange

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/queries"
)

// weighLists is a tools/list change with one tool of each kind Weigh
// treats differently: deploy gains a required region (a bounded
// migration, needs_decision), search an optional limit (additive, safe),
// delete_branch is removed (needs_decision).
const (
	weighOld = `{"tools":[
	 {"name":"deploy","inputSchema":{"type":"object","properties":{"branch":{"type":"string"}},"required":["branch"]}},
	 {"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}},
	 {"name":"delete_branch","inputSchema":{"type":"object","properties":{"branch":{"type":"string"},"force":{"type":"boolean"}},"required":["branch"]}}]}`
	weighNew = `{"tools":[
	 {"name":"deploy","inputSchema":{"type":"object","properties":{"branch":{"type":"string"},"region":{"type":"string"}},"required":["branch","region"]}},
	 {"name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q"],"additionalProperties":false}}]}`
)

// TestWeighUnknownRevision weighs the change by usage rows as check_usage
// returns them, "" standing for the calls that did not say which revision
// they were planned with: those never count as safe unless asked.
func TestWeighUnknownRevision(t *testing.T) {
	old, err := Decode([]byte(weighOld))
	if err != nil {
		t.Fatal(err)
	}
	new, err := Decode([]byte(weighNew))
	if err != nil {
		t.Fatal(err)
	}
	base := Compare(old, new, Options{})
	rev := map[string][2]string{}
	for _, c := range base.Tools {
		rev[c.Tool] = [2]string{c.OldRevision, c.NewRevision}
	}
	to := time.Date(2099, 3, 16, 12, 0, 0, 0, time.UTC)
	from := to.Add(-14 * 24 * time.Hour)
	stock := []apiv1.ClientUsage{{Client: "goose@1.0.0", Calls: 4000}, {Client: "inspector@0.16.0", Calls: 1000}}
	inspector := []apiv1.ClientUsage{{Client: "inspector@0.16.0", Calls: 30}}
	unknown := func(tool string, n uint64, callers []apiv1.ClientUsage) queries.CheckUsageRow {
		return queries.CheckUsageRow{Tool: tool, RevisionClient: "", Calls: n, Sessions: 40, Clients: uint64(len(callers)), Callers: callers}
	}
	planned := func(tool, revision string, n uint64) queries.CheckUsageRow {
		return queries.CheckUsageRow{Tool: tool, RevisionClient: revision, Calls: n, Sessions: 1, Clients: 1,
			Callers: []apiv1.ClientUsage{{Client: "cursor@0.48.0", Calls: n}}, LastSeen: to.Add(-time.Hour)}
	}
	type want struct {
		verdict  Verdict
		unknown  uint64
		reason   string // a part of the reason
		notInIt  string // what the reason must not say
		rollout  string // a part of the rollout
		noChange bool   // the reason is the comparison's own
	}
	for _, tc := range []struct {
		name string
		rows []queries.CheckUsageRow
		o    WeighOptions
		pass bool
		want map[string]want
	}{{
		name: "a removed tool in heavy use by clients that say nothing is not safe",
		rows: []queries.CheckUsageRow{unknown("delete_branch", 5000, stock)},
		want: map[string]want{
			"delete_branch": {verdict: VerdictNeedsDecision, unknown: 5000,
				reason:  "; 5000 calls in the last 14d did not say which revision they were planned with (unknown, not assumed safe), and none said revision `",
				rollout: "5000 calls from 2 clients (`goose@1.0.0` 4000, `inspector@0.16.0` 1000) did not say which revision they were planned with: after the rollout they will fail with TOOL_REMOVED whatever they planned with"},
			"deploy": {verdict: VerdictSafe, reason: "; but no call in the last 14d was planned with revision"},
			"search": {verdict: VerdictSafe, noChange: true},
		},
	}, {
		name: "judged safe as asked",
		rows: []queries.CheckUsageRow{unknown("delete_branch", 5000, stock)},
		o:    WeighOptions{UnknownSafe: true},
		pass: true,
		want: map[string]want{
			"delete_branch": {verdict: VerdictSafe, unknown: 5000,
				reason: "or an older one, and the 5000 calls that did not say which revision they were planned with were judged safe as asked"},
			"deploy": {verdict: VerdictSafe},
			"search": {verdict: VerdictSafe, noChange: true},
		},
	}, {
		name: "a changed tool's unknown calls keep its decision open",
		rows: []queries.CheckUsageRow{unknown("deploy", 1, []apiv1.ClientUsage{{Client: "goose@1.0.0", Calls: 1}})},
		want: map[string]want{
			"deploy": {verdict: VerdictNeedsDecision, unknown: 1,
				reason:  "; 1 call in the last 14d did not say which revision it was planned with (unknown, not assumed safe), and none said revision",
				rollout: "; 1 call from 1 client (`goose@1.0.0` 1) did not say which revision it was planned with: whether the change reaches it is unknown"},
			"delete_branch": {verdict: VerdictSafe, notInIt: "did not say"},
		},
	}, {
		name: "known and unknown calls: the reason names both",
		rows: []queries.CheckUsageRow{planned("deploy", rev["deploy"][0], 7), unknown("deploy", 30, inspector)},
		want: map[string]want{
			"deploy": {verdict: VerdictNeedsDecision, unknown: 30,
				reason:  "; 30 calls in the last 14d did not say which revision they were planned with (unknown, not assumed safe)",
				notInIt: "none said",
				rollout: "; 30 more calls from 1 client (`inspector@0.16.0` 30) did not say which revision they were planned with: whether the change reaches them is unknown"},
		},
	}, {
		name: "known calls still need a decision when unknown ones are judged safe",
		rows: []queries.CheckUsageRow{planned("deploy", rev["deploy"][0], 7), unknown("deploy", 30, inspector)},
		o:    WeighOptions{UnknownSafe: true},
		want: map[string]want{
			"deploy": {verdict: VerdictNeedsDecision, unknown: 30,
				reason: "; 30 calls in the last 14d did not say which revision they were planned with, judged safe as asked"},
		},
	}, {
		name: "an additive change is safe whoever calls it",
		rows: []queries.CheckUsageRow{unknown("search", 5000, stock), planned("search", rev["search"][0], 9)},
		pass: true,
		want: map[string]want{
			"search": {verdict: VerdictSafe, unknown: 5000, noChange: true},
		},
	}, {
		name: "calls already planned with the new revision are not unknown",
		rows: []queries.CheckUsageRow{planned("deploy", rev["deploy"][1], 12)},
		pass: true,
		want: map[string]want{
			"deploy":        {verdict: VerdictSafe, reason: "; but no call in the last 14d was planned with revision"},
			"delete_branch": {verdict: VerdictSafe},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(old, new, Options{})
			r.Weigh(from, to, tc.rows, nil, tc.o)
			if r.Pass() != tc.pass {
				t.Errorf("Pass() = %v, want %v", r.Pass(), tc.pass)
			}
			for tool, w := range tc.want {
				i := slices.IndexFunc(r.Tools, func(c Change) bool { return c.Tool == tool })
				c, before := r.Tools[i], base.Tools[i]
				if c.Verdict != w.verdict {
					t.Errorf("%s: verdict %s, want %s (%s)", tool, c.Verdict, w.verdict, c.Reason)
				}
				if c.Usage == nil || c.Usage.UnknownCalls != w.unknown {
					t.Fatalf("%s: usage %+v, want %d unknown calls", tool, c.Usage, w.unknown)
				}
				if w.unknown > 0 && (c.Usage.UnknownSessions != 40 || len(c.Usage.UnknownClients) == 0) {
					t.Errorf("%s: unknown sessions %d, clients %v", tool, c.Usage.UnknownSessions, c.Usage.UnknownClients)
				}
				if !strings.Contains(c.Reason, w.reason) || (w.notInIt != "" && strings.Contains(c.Reason, w.notInIt)) {
					t.Errorf("%s: reason %q, want it to say %q and not %q", tool, c.Reason, w.reason, w.notInIt)
				}
				if w.noChange && c.Reason != before.Reason {
					t.Errorf("%s: reason %q, want the comparison's %q", tool, c.Reason, before.Reason)
				}
				if !strings.Contains(c.Usage.Rollout, w.rollout) {
					t.Errorf("%s: rollout %q, want it to say %q", tool, c.Usage.Rollout, w.rollout)
				}
			}
			var md strings.Builder
			if err := r.Markdown(&md); err != nil {
				t.Fatal(err)
			}
			for _, c := range r.Tools {
				if c.Usage == nil {
					continue
				}
				for _, s := range []string{"**Why:** " + text(c.Reason) + ".", "**What the rollout would do:** " + text(c.Usage.Rollout) + "."} {
					if !strings.Contains(md.String(), s) {
						t.Errorf("%s: the Markdown lacks %q:\n%s", c.Tool, s, md.String())
					}
				}
			}
			if safe := strings.Contains(md.String(), "judged safe, as asked"); safe != tc.o.UnknownSafe {
				t.Errorf("the Markdown says unknown callers are judged safe: %v, want %v", safe, tc.o.UnknownSafe)
			}
		})
	}
}

// TestCacheHint: the old list's ttlMs and cacheScope are read, named in
// the reasons of the changes that need a decision, and keep such a change
// from passing for want of calls when clients may keep the old list longer
// than the window looked back.
func TestCacheHint(t *testing.T) {
	cached := strings.Replace(weighOld, `{"tools":[`, `{"ttlMs":172800000,"cacheScope":"shared","tools":[`, 1)
	for _, doc := range []string{cached, `{"jsonrpc":"2.0","id":3,"result":` + cached + `}`} {
		old, err := Decode([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if old.Cache == nil || old.Cache.TTLMs != 172800000 || old.Cache.Scope != "shared" || old.Cache.TTL() != 48*time.Hour {
			t.Fatalf("cache hint %+v", old.Cache)
		}
	}
	for _, bad := range []string{`{"ttlMs":-1,"tools":[]}`, `{"ttlMs":1.5,"tools":[]}`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) accepted a ttlMs that is no count of milliseconds", bad)
		}
	}
	old, _ := Decode([]byte(cached))
	new, _ := Decode([]byte(weighNew))
	r := Compare(old, new, Options{})
	if r.OldCache == nil || r.OldCache.TTLMs != 172800000 {
		t.Fatalf("report cache %+v", r.OldCache)
	}
	for _, c := range r.Tools {
		hint := strings.Contains(c.Reason, "clients may keep the old list for up to 48h without listing again (ttlMs 172800000, cacheScope shared)")
		if (c.Verdict != VerdictSafe) != hint {
			t.Errorf("%s (%s): reason %q", c.Tool, c.Verdict, c.Reason)
		}
	}

	// Weighed over a day with no call at all: a window shorter than the
	// cache proves nothing; a week's does.
	to := time.Date(2099, 3, 16, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		window time.Duration
		want   Verdict
	}{{24 * time.Hour, VerdictNeedsDecision}, {7 * 24 * time.Hour, VerdictSafe}} {
		r := Compare(old, new, Options{})
		r.Weigh(to.Add(-tc.window), to, nil, nil, WeighOptions{})
		for _, c := range r.Tools {
			if c.Tool == "deploy" && c.Verdict != tc.want {
				t.Errorf("window %s: deploy is %s (%s), want %s", tc.window, c.Verdict, c.Reason, tc.want)
			}
			if c.Tool == "deploy" && tc.want == VerdictNeedsDecision && !strings.Contains(c.Reason, "may be cached for 48h, longer than the 24h window") {
				t.Errorf("window %s: reason %q", tc.window, c.Reason)
			}
		}
	}
}
