package drifttest

import (
	"reflect"
	"testing"
)

// TestReconfirm: what a call event adds to an answer's verdict.
func TestReconfirm(t *testing.T) {
	for _, tc := range []struct {
		name    string
		verdict Verdict
		c       *Confirmation
		want    Verdict
	}{
		{"not read", VerdictRejected, nil, VerdictRejected},
		{"not found", VerdictUnadapted, &Confirmation{}, VerdictUnadapted},
		{"side effect the answer denied", VerdictRejected, &Confirmation{Found: true, Outcome: "rejected_stale", SideEffectStarted: true}, VerdictAfterSideEffect},
		{"removed after a side effect", VerdictRemoved, &Confirmation{Found: true, Outcome: "removed", SideEffectStarted: true}, VerdictAfterSideEffect},
		{"success with a side effect", VerdictCurrent, &Confirmation{Found: true, Outcome: "current", SideEffectStarted: true}, VerdictCurrent},
		{"adapter the answer did not name", VerdictUnadapted, &Confirmation{Found: true, Outcome: "normalized", AdapterID: "a"}, VerdictNormalized},
		{"adapter that dropped a field", VerdictNormalized, &Confirmation{Found: true, Outcome: "normalized", AdapterID: "a", Dropped: []string{"labels"}}, VerdictDroppedField},
		{"current stays unadapted", VerdictUnadapted, &Confirmation{Found: true, Outcome: "current"}, VerdictUnadapted},
	} {
		if got, why := Reconfirm(Result{Verdict: tc.verdict, Reason: "answer", Confirmed: tc.c}); got != tc.want || why == "" {
			t.Errorf("%s: %s (%q), want %s", tc.name, got, why, tc.want)
		}
	}
}

// TestDropped: a rename keeps the value under another name; a drop loses
// it; arguments not recorded as objects say nothing.
func TestDropped(t *testing.T) {
	for _, tc := range []struct {
		raw, normalized string
		want            []string
	}{
		{`{"title":"a","labels":["x"]}`, `{"title":"a","tags":["x"]}`, nil},
		{`{"title":"a","labels":["x"]}`, `{"title":"a"}`, []string{"labels"}},
		{`{"branch":"a"}`, `{"branch":"a","region":"eu-preview"}`, nil},
		{`{"b":1,"a":2}`, `{}`, []string{"a", "b"}},
		{`[redacted]`, `{}`, nil},
		{`{"a":1}`, ``, nil},
		// Nested: what was lost inside an object is named by its path; a
		// value moved to another place or depth is kept.
		{`{"target":{"branch":"a","ttl":3}}`, `{"target":{"branch":"a"}}`, []string{"target.ttl"}},
		{`{"target":{"branch":"a","ttl":3}}`, `{"branch":"a","options":{"ttl":3}}`, nil},
		{`{"target":{"branch":"a","opts":{"ttl":3,"x":"y"}}}`, `{"target":{"branch":"a","opts":{"x":"y"}}}`, []string{"target.opts.ttl"}},
		{`{"target":{"labels":["p1"]}}`, `{"target":{"labels":["p2"]}}`, []string{"target.labels"}},
		{`{"target":{}}`, `{"region":"eu"}`, []string{"target"}},
	} {
		if got := dropped(tc.raw, tc.normalized); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("dropped(%s, %s) = %v, want %v", tc.raw, tc.normalized, got, tc.want)
		}
	}
}
