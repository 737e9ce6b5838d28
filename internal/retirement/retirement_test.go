package retirement

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
	defaults := Options{MaxCalls: 5, MaxShare: -1}
	safe := defaults
	safe.UnknownSafe = true
	for _, tc := range []struct {
		name     string
		row      apiv1.AdapterRow
		callers  []Caller
		unknown  []UnknownCaller
		o        Options
		verdict  string
		reason   string
		blocking []string
	}{{
		name: "unknown age is at risk",
		row:  apiv1.AdapterRow{Tool: "t", Calls: 3, MaxPrivilege: "read", UnknownAgeCalls: 2},
		callers: []Caller{
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
		callers:  []Caller{{Name: "a", Calls: 1, MaxSessionAgeS: 60, UnknownPrivilege: 1}},
		o:        defaults,
		verdict:  VerdictAtRisk,
		reason:   "1 call within the threshold, but its callers include 1 call without a privilege (unknown, not assumed safe)",
		blocking: []string{"a"},
	}, {
		name:    "unknown judged safe on request, no empty slot",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 1, UnknownAgeCalls: 1, UnknownPrivilegeCalls: 1},
		callers: []Caller{{Name: "a", Calls: 1, UnknownAge: 1, UnknownPrivilege: 1}},
		o:       safe,
		verdict: VerdictReady,
		reason:  "1 call within the threshold, from sessions of unknown age with unknown privilege; 1 call without a session age and 1 call without a privilege, judged safe as asked",
	}, {
		name:     "long and unknown together",
		row:      apiv1.AdapterRow{Tool: "t", Calls: 4, MaxSessionAgeS: ptr(int64(90000)), MaxPrivilege: "write", UnknownAgeCalls: 1},
		callers:  []Caller{{Name: "a", Calls: 3, MaxSessionAgeS: 90000, MaxPrivilege: "write"}, {Name: "b", Calls: 1, MaxPrivilege: "write", UnknownAge: 1}},
		o:        defaults,
		verdict:  VerdictAtRisk,
		reason:   "4 calls within the threshold, but its callers include a session 25h old (long-running from 24h) and 1 call without a session age (unknown, not assumed safe)",
		blocking: []string{"a", "b"},
	}, {
		name:    "known and short is ready",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 2, MaxSessionAgeS: ptr(int64(600)), MaxPrivilege: "read"},
		callers: []Caller{{Name: "a", Calls: 2, MaxSessionAgeS: 600, MaxPrivilege: "read"}},
		o:       defaults,
		verdict: VerdictReady,
		reason:  "2 calls within the threshold, from sessions at most 10m old with read privilege",
	}, {
		name:     "a removed tool's success blocks",
		row:      apiv1.AdapterRow{Tool: "t", Calls: 1, MaxSessionAgeS: ptr(int64(60)), MaxPrivilege: "read", RemovedToolSuccesses: 1},
		callers:  []Caller{{Name: "a", Calls: 1, MaxSessionAgeS: 60, MaxPrivilege: "read"}},
		o:        safe,
		verdict:  VerdictBlocked,
		reason:   "1 removed_tool_success violation through it in the window: a removed tool's call succeeded",
		blocking: []string{"a"},
	}, {
		name:     "calls to its tool without a client revision put an unused adapter at risk",
		row:      apiv1.AdapterRow{Tool: "t", UnknownRevisionCalls: 5000},
		unknown:  []UnknownCaller{{Name: "goose", Version: "1.0.0", Calls: 4000}, {Name: "inspector", Calls: 1000}},
		o:        defaults,
		verdict:  VerdictAtRisk,
		reason:   "no calls through it in the window, but 5000 calls to t did not say which revision they were planned with (unknown, not assumed safe)",
		blocking: []string{"goose@1.0.0", "inspector"},
	}, {
		name:    "calls without a client revision judged safe on request",
		row:     apiv1.AdapterRow{Tool: "t", UnknownRevisionCalls: 1},
		unknown: []UnknownCaller{{Name: "goose", Version: "1.0.0", Calls: 1}},
		o:       safe,
		verdict: VerdictReady,
		reason:  "no calls in the window; 1 call to t did not say which revision it was planned with, judged safe as asked",
	}, {
		name:     "known, short and a revision unknown",
		row:      apiv1.AdapterRow{Tool: "t", Calls: 2, MaxSessionAgeS: ptr(int64(600)), MaxPrivilege: "read", UnknownRevisionCalls: 3},
		callers:  []Caller{{Name: "a", Calls: 2, MaxSessionAgeS: 600, MaxPrivilege: "read"}},
		unknown:  []UnknownCaller{{Name: "b", Calls: 2}, {Name: "a", Calls: 1}},
		o:        defaults,
		verdict:  VerdictAtRisk,
		reason:   "2 calls within the threshold, but 3 calls to t did not say which revision they were planned with (unknown, not assumed safe)",
		blocking: []string{"a", "b"},
	}, {
		name:    "known, short and a revision unknown, judged safe on request",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 2, MaxSessionAgeS: ptr(int64(600)), MaxPrivilege: "read", UnknownRevisionCalls: 3},
		callers: []Caller{{Name: "a", Calls: 2, MaxSessionAgeS: 600, MaxPrivilege: "read"}},
		unknown: []UnknownCaller{{Name: "b", Calls: 2}, {Name: "a", Calls: 1}},
		o:       safe,
		verdict: VerdictReady,
		reason:  "2 calls within the threshold, from sessions at most 10m old with read privilege; 3 calls to t without a client revision, judged safe as asked",
	}, {
		name:     "long-running callers and a revision unknown",
		row:      apiv1.AdapterRow{Tool: "t", Calls: 4, MaxSessionAgeS: ptr(int64(90000)), MaxPrivilege: "write", UnknownRevisionCalls: 2},
		callers:  []Caller{{Name: "a", Calls: 4, MaxSessionAgeS: 90000, MaxPrivilege: "write"}},
		unknown:  []UnknownCaller{{Name: "c", Version: "2", Calls: 2}},
		o:        defaults,
		verdict:  VerdictAtRisk,
		reason:   "4 calls within the threshold, but its callers include a session 25h old (long-running from 24h), and 2 calls to t did not say which revision they were planned with (unknown, not assumed safe)",
		blocking: []string{"a", "c@2"},
	}, {
		name:     "blocked: only the callers through the adapter block it",
		row:      apiv1.AdapterRow{Tool: "t", Calls: 8, MaxSessionAgeS: ptr(int64(60)), MaxPrivilege: "read", UnknownRevisionCalls: 9},
		callers:  []Caller{{Name: "a", Calls: 8, MaxSessionAgeS: 60, MaxPrivilege: "read"}},
		unknown:  []UnknownCaller{{Name: "b", Calls: 9}},
		o:        defaults,
		verdict:  VerdictBlocked,
		reason:   "8 calls in the window, over the threshold of 5",
		blocking: []string{"a"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := tc.o.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			a := tc.row
			Judge(&a, tc.callers, tc.unknown, o, now)
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

// TestJudgeThresholds checks the reasons of the thresholds, a privileged
// caller and a declared window that has ended, each alone.
func TestJudgeThresholds(t *testing.T) {
	now := time.Date(2099, 3, 16, 12, 0, 0, 0, time.UTC)
	ended := now.Add(-time.Hour)
	later := now.Add(time.Hour)
	for _, tc := range []struct {
		name    string
		row     apiv1.AdapterRow
		callers []Caller
		o       Options
		verdict string
		reason  string
		ended   bool
	}{{
		name:    "share over its threshold",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 3, Share: 0.25, MaxSessionAgeS: ptr(int64(60)), MaxPrivilege: "read"},
		callers: []Caller{{Name: "a", Calls: 3, MaxSessionAgeS: 60, MaxPrivilege: "read"}},
		o:       Options{MaxCalls: -1, MaxShare: 0.1},
		verdict: VerdictBlocked,
		reason:  "25.00% of t's calls, over the threshold of 10.00%",
	}, {
		name:    "count and share over both",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 2, Share: 0.5, MaxSessionAgeS: ptr(int64(60)), MaxPrivilege: "read"},
		callers: []Caller{{Name: "a", Calls: 2, MaxSessionAgeS: 60, MaxPrivilege: "read"}},
		o:       Options{MaxCalls: 1, MaxShare: 0.1},
		verdict: VerdictBlocked,
		reason:  "2 calls in the window, over the threshold of 1; 50.00% of t's calls, over the threshold of 10.00%",
	}, {
		name:    "share within its threshold",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 3, Share: 0.05, MaxSessionAgeS: ptr(int64(60)), MaxPrivilege: "read"},
		callers: []Caller{{Name: "a", Calls: 3, MaxSessionAgeS: 60, MaxPrivilege: "read"}},
		o:       Options{MaxCalls: -1, MaxShare: 0.1},
		verdict: VerdictReady,
		reason:  "3 calls within the threshold, from sessions at most 60s old with read privilege",
	}, {
		name:    "a destructive caller is at risk",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 1, MaxSessionAgeS: ptr(int64(60)), MaxPrivilege: "destructive"},
		callers: []Caller{{Name: "a", Calls: 1, MaxSessionAgeS: 60, MaxPrivilege: "destructive"}},
		o:       Options{MaxCalls: 5, MaxShare: -1},
		verdict: VerdictAtRisk,
		reason:  "1 call within the threshold, but its callers include destructive calls",
	}, {
		name:    "a session as old as the long-session age is long",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 1, MaxSessionAgeS: ptr(int64(3600)), MaxPrivilege: "read"},
		callers: []Caller{{Name: "a", Calls: 1, MaxSessionAgeS: 3600, MaxPrivilege: "read"}},
		o:       Options{MaxCalls: 5, MaxShare: -1, LongSession: time.Hour},
		verdict: VerdictAtRisk,
		reason:  "1 call within the threshold, but its callers include a session 60m old (long-running from 60m)",
	}, {
		name:    "an ended window is said when not ready",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 1, MaxSessionAgeS: ptr(int64(60)), MaxPrivilege: "read", WindowEnd: &ended},
		callers: []Caller{{Name: "a", Calls: 1, MaxSessionAgeS: 60, MaxPrivilege: "read"}},
		o:       Options{},
		verdict: VerdictBlocked,
		reason:  "1 call in the window, over the threshold of 0; its declared window ended 2099-03-16T11:00:00Z",
		ended:   true,
	}, {
		name:    "an ended window is not said when ready",
		row:     apiv1.AdapterRow{Tool: "t", WindowEnd: &ended},
		o:       Options{},
		verdict: VerdictReady,
		reason:  "no calls in the window",
		ended:   true,
	}, {
		name:    "a window not yet ended",
		row:     apiv1.AdapterRow{Tool: "t", Calls: 1, MaxSessionAgeS: ptr(int64(60)), MaxPrivilege: "read", WindowEnd: &later},
		callers: []Caller{{Name: "a", Calls: 1, MaxSessionAgeS: 60, MaxPrivilege: "read"}},
		o:       Options{},
		verdict: VerdictBlocked,
		reason:  "1 call in the window, over the threshold of 0",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := tc.o.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			a := tc.row
			Judge(&a, tc.callers, nil, o, now)
			if a.Verdict != tc.verdict || a.Reason != tc.reason || a.WindowEnded != tc.ended {
				t.Errorf("verdict %q, reason %q, ended %v\nwant %q, %q, %v", a.Verdict, a.Reason, a.WindowEnded, tc.verdict, tc.reason, tc.ended)
			}
			if a.ServiceNames == nil || a.BlockingClients == nil {
				t.Errorf("service names %v, blocking clients %v: want empty lists, not null", a.ServiceNames, a.BlockingClients)
			}
		})
	}
}

// TestJudgeTopClients checks that the blocking clients are the most
// calling ones, at most TopClients of them.
func TestJudgeTopClients(t *testing.T) {
	a := apiv1.AdapterRow{Tool: "t", Calls: 10}
	callers := []Caller{{Name: "small", Calls: 1}, {Name: "big", Version: "2", Calls: 6}, {Name: "mid", Calls: 3}}
	o, err := Options{TopClients: 2}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	Judge(&a, callers, nil, o, time.Time{})
	var got []string
	for _, c := range a.BlockingClients {
		got = append(got, c.Client)
	}
	if strings.Join(got, ",") != "big@2,mid" {
		t.Errorf("blocking clients %v, want big@2,mid", got)
	}
}

// TestWithDefaults checks the thresholds refused and the defaults filled.
func TestWithDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		err  string
		want Options
	}{
		{"zero", Options{}, "", Options{LongSession: DefaultLongSession, TopClients: DefaultTopClients}},
		{"kept", Options{MaxCalls: 3, MaxShare: -1, LongSession: time.Hour, TopClients: 1}, "", Options{MaxCalls: 3, MaxShare: -1, LongSession: time.Hour, TopClients: 1}},
		{"both disabled", Options{MaxCalls: -1, MaxShare: -1}, "at least one of max calls and max share must be enabled", Options{}},
		{"share over 1", Options{MaxShare: 1.5}, "max share 1.5 is over 1", Options{}},
		{"negative session", Options{LongSession: -time.Second}, "long session and top clients must not be negative", Options{}},
		{"negative top", Options{TopClients: -1}, "long session and top clients must not be negative", Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.o.WithDefaults()
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("%+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestBridges checks what the reason says of the registry's change.
func TestBridges(t *testing.T) {
	none, safe, summary := "", "safe", "field b added"
	for _, tc := range []struct {
		name         string
		class, chang *string
		want         string
	}{
		{"registry does not know", nil, nil, "r"},
		{"no change", &none, &none, "r; the registry finds no change from 1 to 2 for it to bridge"},
		{"a change", &safe, &summary, "r; it bridges 1 → 2: field b added"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := apiv1.AdapterRow{Reason: "r", RevisionFrom: "1", RevisionTo: "2", RegistryChangeClass: tc.class, Change: tc.chang}
			Bridges(&a)
			if a.Reason != tc.want {
				t.Errorf("reason %q, want %q", a.Reason, tc.want)
			}
		})
	}
}

// TestClientUsages checks the names and the order of the callers.
func TestClientUsages(t *testing.T) {
	got := ClientUsages([]Caller{{Calls: 1}, {Name: "b", Calls: 2, MaxSessionAgeS: 5}, {Name: "a", Version: "1", Calls: 2}})
	var names []string
	for _, u := range got {
		names = append(names, u.Client)
	}
	if strings.Join(names, ",") != "a@1,b,(unknown client)" {
		t.Errorf("callers %v, want a@1,b,(unknown client)", names)
	}
	if got[0].MaxSessionAgeS != nil || got[1].MaxSessionAgeS == nil || *got[1].MaxSessionAgeS != 5 {
		t.Errorf("session ages %v, %v: want nil for none said, 5", got[0].MaxSessionAgeS, got[1].MaxSessionAgeS)
	}
}
