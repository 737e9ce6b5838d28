package queries

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
)

// TestJudgeUnknownCallers checks the verdicts at the edges the report's
// figures cannot show alone: calls that did not say their session age or
// privilege, a removed tool's success through the adapter, and reasons
// without empty slots.
func TestJudgeUnknownCallers(t *testing.T) {
	now := time.Date(2099, 3, 16, 12, 0, 0, 0, time.UTC)
	defaults := RetirementOptions{MaxCalls: 5, MaxShare: -1}
	safe := defaults
	safe.UnknownSafe = true
	for _, tc := range []struct {
		name     string
		row      apiv1.AdapterRow
		callers  []rawCaller
		unknown  []rawUnknownCaller
		o        RetirementOptions
		verdict  string
		reason   string
		blocking []string
	}{{
		name: "unknown age is at risk",
		row:  apiv1.AdapterRow{Tool: "t", Calls: 3, MaxPrivilege: "read", UnknownAgeCalls: 2},
		callers: []rawCaller{
			{Name: "a", Version: "1", Calls: 2, MaxPrivilege: "read", UnknownAge: 2},
			{Name: "b", Calls: 1, MaxSessionAgeS: 60, MaxPrivilege: "read"},
		},
		o:        defaults,
		verdict:  VerdictAtRisk,
		reason:   "3 calls within the threshold, but its callers include 2 calls without a session age (unknown, not assumed safe)",
		blocking: []string{"a@1"},
	}, {
		name:     "unknown privilege is at risk",
		row:      apiv1.AdapterRow{Tool: "t", Calls: 1, MaxSessionAgeS: ptr(int64(60)), UnknownPrivilegeCalls: 1},
		callers:  []rawCaller{{Name: "a", Calls: 1, MaxSessionAgeS: 60, UnknownPrivilege: 1}},
		o:        defaults,
		verdict:  VerdictAtRisk,
		reason:   "1 call within the threshold, but its callers include 1 call without a privilege (unknown, not assumed safe)",
		blocking: []string{"a"},
	}, {
		name:    "unknown judged safe on request, no empty slot",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 1, UnknownAgeCalls: 1, UnknownPrivilegeCalls: 1},
		callers: []rawCaller{{Name: "a", Calls: 1, UnknownAge: 1, UnknownPrivilege: 1}},
		o:       safe,
		verdict: VerdictReady,
		reason:  "1 call within the threshold, from sessions of unknown age with unknown privilege; 1 call without a session age and 1 call without a privilege, judged safe as asked",
	}, {
		name:     "long and unknown together",
		row:      apiv1.AdapterRow{Tool: "t", Calls: 4, MaxSessionAgeS: ptr(int64(90000)), MaxPrivilege: "write", UnknownAgeCalls: 1},
		callers:  []rawCaller{{Name: "a", Calls: 3, MaxSessionAgeS: 90000, MaxPrivilege: "write"}, {Name: "b", Calls: 1, MaxPrivilege: "write", UnknownAge: 1}},
		o:        defaults,
		verdict:  VerdictAtRisk,
		reason:   "4 calls within the threshold, but its callers include a session 25h old (long-running from 24h) and 1 call without a session age (unknown, not assumed safe)",
		blocking: []string{"a", "b"},
	}, {
		name:    "known and short is ready",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 2, MaxSessionAgeS: ptr(int64(600)), MaxPrivilege: "read"},
		callers: []rawCaller{{Name: "a", Calls: 2, MaxSessionAgeS: 600, MaxPrivilege: "read"}},
		o:       defaults,
		verdict: VerdictReady,
		reason:  "2 calls within the threshold, from sessions at most 10m old with read privilege",
	}, {
		name:     "a removed tool's success blocks",
		row:      apiv1.AdapterRow{Tool: "t", Calls: 1, MaxSessionAgeS: ptr(int64(60)), MaxPrivilege: "read", RemovedToolSuccesses: 1},
		callers:  []rawCaller{{Name: "a", Calls: 1, MaxSessionAgeS: 60, MaxPrivilege: "read"}},
		o:        safe,
		verdict:  VerdictBlocked,
		reason:   "1 removed_tool_success violation through it in the window: a removed tool's call succeeded",
		blocking: []string{"a"},
	}, {
		name:     "calls to its tool without a client revision put an unused adapter at risk",
		row:      apiv1.AdapterRow{Tool: "t", UnknownRevisionCalls: 5000},
		unknown:  []rawUnknownCaller{{Name: "goose", Version: "1.0.0", Calls: 4000}, {Name: "inspector", Calls: 1000}},
		o:        defaults,
		verdict:  VerdictAtRisk,
		reason:   "no calls through it in the window, but 5000 calls to t did not say which revision they were planned with (unknown, not assumed safe)",
		blocking: []string{"goose@1.0.0", "inspector"},
	}, {
		name:    "calls without a client revision judged safe on request",
		row:     apiv1.AdapterRow{Tool: "t", UnknownRevisionCalls: 1},
		unknown: []rawUnknownCaller{{Name: "goose", Version: "1.0.0", Calls: 1}},
		o:       safe,
		verdict: VerdictReady,
		reason:  "no calls in the window; 1 call to t did not say which revision it was planned with, judged safe as asked",
	}, {
		name:     "known, short and a revision unknown",
		row:      apiv1.AdapterRow{Tool: "t", Calls: 2, MaxSessionAgeS: ptr(int64(600)), MaxPrivilege: "read", UnknownRevisionCalls: 3},
		callers:  []rawCaller{{Name: "a", Calls: 2, MaxSessionAgeS: 600, MaxPrivilege: "read"}},
		unknown:  []rawUnknownCaller{{Name: "b", Calls: 2}, {Name: "a", Calls: 1}},
		o:        defaults,
		verdict:  VerdictAtRisk,
		reason:   "2 calls within the threshold, but 3 calls to t did not say which revision they were planned with (unknown, not assumed safe)",
		blocking: []string{"a", "b"},
	}, {
		name:    "known, short and a revision unknown, judged safe on request",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 2, MaxSessionAgeS: ptr(int64(600)), MaxPrivilege: "read", UnknownRevisionCalls: 3},
		callers: []rawCaller{{Name: "a", Calls: 2, MaxSessionAgeS: 600, MaxPrivilege: "read"}},
		unknown: []rawUnknownCaller{{Name: "b", Calls: 2}, {Name: "a", Calls: 1}},
		o:       safe,
		verdict: VerdictReady,
		reason:  "2 calls within the threshold, from sessions at most 10m old with read privilege; 3 calls to t without a client revision, judged safe as asked",
	}, {
		name:     "long-running callers and a revision unknown",
		row:      apiv1.AdapterRow{Tool: "t", Calls: 4, MaxSessionAgeS: ptr(int64(90000)), MaxPrivilege: "write", UnknownRevisionCalls: 2},
		callers:  []rawCaller{{Name: "a", Calls: 4, MaxSessionAgeS: 90000, MaxPrivilege: "write"}},
		unknown:  []rawUnknownCaller{{Name: "c", Version: "2", Calls: 2}},
		o:        defaults,
		verdict:  VerdictAtRisk,
		reason:   "4 calls within the threshold, but its callers include a session 25h old (long-running from 24h), and 2 calls to t did not say which revision they were planned with (unknown, not assumed safe)",
		blocking: []string{"a", "c@2"},
	}, {
		name:     "blocked: only the callers through the adapter block it",
		row:      apiv1.AdapterRow{Tool: "t", Calls: 8, MaxSessionAgeS: ptr(int64(60)), MaxPrivilege: "read", UnknownRevisionCalls: 9},
		callers:  []rawCaller{{Name: "a", Calls: 8, MaxSessionAgeS: 60, MaxPrivilege: "read"}},
		unknown:  []rawUnknownCaller{{Name: "b", Calls: 9}},
		o:        defaults,
		verdict:  VerdictBlocked,
		reason:   "8 calls in the window, over the threshold of 5",
		blocking: []string{"a"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := tc.o.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			a := tc.row
			judge(&a, tc.callers, tc.unknown, o, now)
			if a.Verdict != tc.verdict || a.Reason != tc.reason {
				t.Errorf("verdict %q, reason %q\nwant %q, %q", a.Verdict, a.Reason, tc.verdict, tc.reason)
			}
			if strings.Contains(a.Reason, "  ") || strings.Contains(a.Reason, " with  ") {
				t.Errorf("reason has an empty slot: %q", a.Reason)
			}
			var got []string
			for _, c := range a.BlockingClients {
				got = append(got, c.Client)
			}
			if strings.Join(got, ",") != strings.Join(tc.blocking, ",") {
				t.Errorf("blocking clients %v, want %v", got, tc.blocking)
			}
			// Every client of a call without a client revision is a
			// caller, with its count, whether or not it called through
			// the adapter.
			var unknown uint64
			for _, c := range a.Callers {
				unknown += c.UnknownRevisionCalls
			}
			if len(tc.unknown) > 0 && unknown != a.UnknownRevisionCalls {
				t.Errorf("callers %+v count %d calls without a client revision, want %d", a.Callers, unknown, a.UnknownRevisionCalls)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
