package main

import (
	"strings"
	"testing"
)

// TestGate runs the release gate against a real API on loopback over the
// fixture (a week of traffic; the window below covers it) and checks the
// exit code and the pull-request comment of each verdict.
func TestGate(t *testing.T) {
	base, _ := fixtureAPI(t)
	cases := []struct {
		name   string
		args   []string
		code   int
		want   []string
		golden string
	}{
		{"ready", []string{"search_docs/1-2", "-max-calls", "5"}, 0,
			[]string{"### ✅ Adapter `search_docs/1-2` can be retired", "5 calls within the threshold", "(ended)"}, "gate_ready.md"},
		{"ready, unused", []string{"search_docs/1-2", "-window", "7d"}, 0,
			[]string{"can be retired", "no calls in the window", "| Last seen | 2099-03-06 12:04:00Z (not in the window) |", "No call in the window needed the adapter"}, ""},
		{"blocked", []string{"deploy_preview/1-2", "-max-calls", "5"}, 1,
			[]string{"cannot be retired yet: blocked", "42 calls in the window, over the threshold of 5", "| `claude-desktop@0.9.1` | 35 | 0 | 35m (and 7 calls without it) | write |", "| `legacy-bot@1.0.0` | 7 | 0 | 5d (and 1 call without it) | write |",
				"**42 calls** (27.27% of `deploy_preview`'s 154 calls) would have been rejected"}, "gate_blocked.md"},
		{"at risk", []string{"delete_branch/3-4", "-max-calls", "5"}, 1,
			[]string{"cannot be retired yet: at risk", "a session 29h old", "| `cursor@0.48.0` | 3 | 0 | 29h | destructive |",
				"and 2 calls to delete_branch did not say which revision they were planned with (unknown, not assumed safe)", "| `goose@1.0.0` | 0 | 2 | — | — |"}, "gate_at_risk.md"},
		{"default threshold is no call", []string{"send_payment/shim"}, 1,
			[]string{"2 calls in the window, over the threshold of 0", "at most 0 calls"}, ""},
		{"share", []string{"create_issue/1-3", "-max-share", "25%"}, 0,
			[]string{"can be retired", "at most 25.00% of the tool's calls", "8 calls within the threshold"}, ""},
		{"share over", []string{"create_issue/1-3", "--max-share=0.1"}, 1,
			[]string{"cannot be retired yet: blocked", "over the threshold of 10.00%"}, ""},
		// With the clients of its calls left out, none goes through
		// deploy_preview/1-2; but goose@1.0.0's 5 calls to deploy_preview
		// did not say which revision they were planned with.
		{"exclusions", []string{"deploy_preview/1-2", "-exclude-client", "claude-desktop", "-exclude-client", "legacy-bot@1.0.0"}, 1,
			[]string{"cannot be retired yet: at risk", "| Excluded clients | `claude-desktop`, `legacy-bot@1.0.0` |", "| Calls through the adapter | 0 |",
				"no calls through it in the window, but 5 calls to deploy_preview did not say which revision they were planned with (unknown, not assumed safe); it bridges 1 → 2: ",
				"| Calls to the tool without a client revision | 5 |", "| `goose@1.0.0` | 0 | 5 | — | — |"}, "gate_at_risk_unknown_revision.md"},
		{"exclusions, unknown revisions safe", []string{"deploy_preview/1-2", "-exclude-client", "claude-desktop", "-exclude-client", "legacy-bot@1.0.0", "-unknown-callers", "safe"}, 0,
			[]string{"can be retired", "5 calls to deploy_preview did not say which revision they were planned with, judged safe as asked", "count as safe"}, ""},
		{"exclusions and the client that says no revision", []string{"deploy_preview/1-2", "-exclude-client", "claude-desktop", "-exclude-client", "legacy-bot@1.0.0", "-exclude-client", "goose"}, 0,
			[]string{"can be retired", "no calls in the window; it bridges 1 → 2: \\`dry_run\\` was removed", "| Calls to the tool without a client revision | 0 |"}, ""},
		{"long session", []string{"delete_branch/3-4", "-max-calls", "5", "-long-session", "3d"}, 1,
			[]string{"at risk", "its callers include destructive calls, and 2 calls to delete", "sessions from 3d count as long-running"}, ""},
		// deploy_preview/1-2's 8 calls without a session age are what
		// stands in the way once 5d is not long-running.
		{"unknown callers", []string{"deploy_preview/1-2", "-max-calls", "50", "-long-session", "6d"}, 1,
			[]string{"at risk", "8 calls without a session age (unknown, not assumed safe)", "put an adapter at risk"}, ""},
		{"unknown callers safe", []string{"deploy_preview/1-2", "-max-calls", "50", "-long-session", "6d", "-unknown-callers", "safe"}, 0,
			[]string{"can be retired", "8 calls without a session age and 5 calls to deploy_preview without a client revision, judged safe as asked", "count as safe"}, ""},
		{"environment", []string{"deploy_preview/1-2", "-environment", "prod", "-service", "deployer", "-max-calls", "41"}, 1,
			[]string{"42 calls in the window, over the threshold of 41"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"gate", "adapter", tc.args[0], "-window", "14d"}, tc.args[1:]...)
			args = append(args, "-api", base)
			code, out, errOut := mcpdrift(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the comment lacks %q:\n%s", w, out)
				}
			}
			if tc.golden != "" {
				goldenFile(t, tc.golden, out)
			}
		})
	}
}

func TestGateErrors(t *testing.T) {
	base, _ := fixtureAPI(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"gate"}, "want: mcpdrift gate adapter <id>"},
		{[]string{"gate", "tool", "x"}, "want: mcpdrift gate adapter <id>"},
		{[]string{"gate", "adapter", "-window", "14d"}, "want: mcpdrift gate adapter <id>"},
		{[]string{"gate", "adapter", "nope/1-2", "-api", base}, `unknown adapter "nope/1-2": no server declared it and no call used it from 2099-03-09 12:00:00Z to 2099-03-16 12:00:00Z; known adapters: create_issue/1-3, delete_branch/3-4`}, // the reports' default window, 7 days
		{[]string{"gate", "adapter", "deploy_preview/1-2", "-window", "0d", "-api", base}, "-window: invalid window"},
		{[]string{"gate", "adapter", "deploy_preview/1-2", "-window", "7d", "-max-calls", "-3", "-api", base}, "-max-calls: invalid count"},
		{[]string{"gate", "adapter", "deploy_preview/1-2", "-environment", "staging", "-api", base}, `unknown adapter "deploy_preview/1-2"`},
		{[]string{"gate", "adapter", "deploy_preview/1-2", "-bogus", "-api", base}, "flag provided but not defined: -bogus"},
		{[]string{"gate", "adapter", "deploy_preview/1-2", "extra", "-api", base}, `unexpected argument "extra"`},
		{[]string{"gate", "adapter", "deploy_preview/1-2", "-api", closedAddr(t)}, "connection refused"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := mcpdrift(t, tc.args...)
			if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tc.want)
			}
		})
	}
}
