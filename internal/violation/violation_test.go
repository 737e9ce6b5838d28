package violation

import "testing"

// TestDetail checks each kind's sentence, with and without its optional
// parts, as the views of versions 4 to 16 wrote it (migration 0014): the
// rows stored before version 17 keep that text, so a row rendered now must
// read the same.
func TestDetail(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Facts
		want string
	}{
		{"side effect, all parts", Facts{Kind: KindSideEffectRejected, Outcome: "rejected_stale", ErrorCode: "E_STALE", ExternalTarget: "payments", ExternalRequests: 2},
			"rejected_stale with E_STALE after its side effect had started on payments (external requests: 2)"},
		{"side effect, bare", Facts{Kind: KindSideEffectRejected, Outcome: "rejected_invalid"},
			"rejected_invalid after its side effect had started"},
		{"side effect, no request counted", Facts{Kind: KindSideEffectRejected, Outcome: "rejected_incompatible", ExternalTarget: "db", ExternalRequests: 0},
			"rejected_incompatible after its side effect had started on db"},
		{"mixed revision", Facts{Kind: KindMixedRevision, RevisionValidated: "r1", RevisionServer: "r2"},
			"validated under revision r1, executed under revision r2"},
		{"removed revision", Facts{Kind: KindRemovedToolSuccess, Outcome: "current", ChangeClass: "removal", AdapterID: "a"},
			"current call to a removed revision (change class removal)"},
		{"removal adapter", Facts{Kind: KindRemovedToolSuccess, Outcome: "normalized", ChangeClass: "additive", AdapterID: "t/1-2"},
			"normalized call to a removed tool through removal adapter t/1-2"},
		{"retry call", Facts{Kind: KindRetryAcrossChange, EventName: "mcp.drift.call", RetryOf: "req-1", RetryAttempt: 2, ChangeClass: "semantic"},
			"automatic retry of req-1 (attempt 2) across a change of class semantic"},
		{"retry repair", Facts{Kind: KindRetryAcrossChange, EventName: EventRepair, RepairResult: "failure", ChangeClass: "authority"},
			"automatic refresh_retry (failure) across a change of class authority"},
		{"unknown kind", Facts{Kind: "other", Outcome: "current"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Detail(tc.f); got != tc.want {
				t.Errorf("detail %q\nwant   %q", got, tc.want)
			}
		})
	}
}
