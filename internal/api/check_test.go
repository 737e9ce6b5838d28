package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

// post sends body to target as JSON.
func post(t *testing.T, h http.Handler, target string, body []byte) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// checkRequest is the README's example change (examples/tools-list): the
// fixture's deploy_preview gains a required region (2 → 3), create_issue
// renames issue.id (3 → 4), delete_branch (4) is removed, search_docs
// stays.
func checkRequest(t *testing.T) []byte {
	t.Helper()
	var req apiv1.CheckRequest
	for _, f := range []struct {
		path string
		dest *json.RawMessage
	}{{"../../examples/tools-list/old.json", &req.Old}, {"../../examples/tools-list/new.json", &req.New}} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		*f.dest = b
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeCheck(t *testing.T, r response) apiclient.CheckBody {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var b apiclient.CheckBody
	if err := json.Unmarshal(r.body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func change(t *testing.T, b apiclient.CheckBody, tool string) toolchange.Change {
	t.Helper()
	i := slices.IndexFunc(b.Tools, func(c toolchange.Change) bool { return c.Tool == tool })
	if i < 0 {
		t.Fatalf("no check of %s in %+v", tool, b.Tools)
	}
	return b.Tools[i]
}

// TestCheckWeighed runs the release check over the report fixture's week
// and checks the usage figures, counted by hand from the fixture's events.
func TestCheckWeighed(t *testing.T) {
	s, fx := newServer(t, reporttest.TenantA)
	_, c := openAPI(t, s.Handler())
	r := post(t, s.Handler(), "/api/v1/check", checkRequest(t))
	validate(t, c, "/paths/"+pointer("/api/v1/check")+"/post/responses/200/content/application~1json/schema", r.body)
	b := decodeCheck(t, r)
	if b.Pass || !b.To.Equal(fx.Now) || b.To.Sub(b.From).Hours() != 7*24 {
		t.Errorf("pass %v over [%s, %s), want false over the week to %s", b.Pass, b.From, b.To, fx.Now)
	}

	// deploy_preview planned with 2: 93 calls from cursor@0.48.0, 14 from
	// claude-desktop@1.2.0, in 15 sessions and 7 runs, the oldest 75
	// minutes, write; 42 more still planned with 1.
	d := change(t, b, "deploy_preview")
	u := d.Usage
	if d.Verdict != toolchange.VerdictNeedsDecision || u == nil || u.Revision != "2" || u.Calls != 107 || u.Sessions != 15 || u.Runs != 7 ||
		u.MaxSessionAgeS != 4500 || u.MaxPrivilege != "write" || u.OlderCalls != 42 || !slices.Equal(u.OlderRevisions, []string{"1"}) {
		t.Fatalf("deploy_preview: %+v %+v", d, u)
	}
	if want := []apiv1.ClientUsage{{Client: "cursor@0.48.0", Calls: 93, MaxSessionAgeS: agePtr(4500), MaxPrivilege: "write"},
		{Client: "claude-desktop@1.2.0", Calls: 14, MaxSessionAgeS: agePtr(2460), MaxPrivilege: "write"}}; !reflect.DeepEqual(u.Clients, want) {
		t.Errorf("deploy_preview clients %+v, want %+v", u.Clients, want)
	}
	if want := "107 calls in 7d from 2 clients (`cursor@0.48.0` 93, `claude-desktop@1.2.0` 14) planned with revision `2`; " +
		"they send no `region`; with `region` required and no adapter they will be rejected; " +
		"the longest session among them is 75m old; the highest privilege write; " +
		"5 more calls from 1 client (`goose@1.0.0` 5) did not say which revision they were planned with: whether the change reaches them is unknown"; u.Rollout != want {
		t.Errorf("deploy_preview rollout\n got %q\nwant %q", u.Rollout, want)
	}
	// And goose@1.0.0's 5 calls in one session, which did not say which
	// revision they were planned with: named in the reason.
	if u.UnknownCalls != 5 || u.UnknownSessions != 1 || len(u.UnknownClients) != 1 || u.UnknownClients[0].Client != "goose@1.0.0" ||
		!strings.HasSuffix(d.Reason, "; 5 calls in the last 7d did not say which revision they were planned with (unknown, not assumed safe)") {
		t.Errorf("deploy_preview unknown: %q %+v", d.Reason, u)
	}
	if b.UnknownCallers != "at_risk" {
		t.Errorf("unknown callers judged %q, want at_risk", b.UnknownCallers)
	}

	// create_issue planned with 3: 11 calls; the tool's 18 stale
	// rejections (from clients on 2), its propagation (5 sessions notified,
	// 4 refreshed) and 1 automatic retry across a semantic or authority
	// change.
	ci := change(t, b, "create_issue")
	if u := ci.Usage; ci.Verdict != toolchange.VerdictViolation || u.Calls != 11 || u.Sessions != 11 || u.StaleRejections != 18 ||
		u.RetriesAcrossChange != 1 || u.Propagation == nil || u.Propagation.NotifiedSessions != 5 || u.Propagation.RefreshedSessions != 4 ||
		!strings.Contains(u.Rollout, "their clients will read results their snapshot does not describe") {
		t.Errorf("create_issue: %+v %+v", ci, u)
	}

	// delete_branch planned with 4: 7 calls, destructive; one rejected call
	// (planned with 3) had started its side effect; 2 retries across a
	// change.
	db := change(t, b, "delete_branch")
	if u := db.Usage; db.Class != "removal" || u.Calls != 7 || u.MaxPrivilege != "destructive" || u.RejectedSideEffects != 1 ||
		u.RetriesAcrossChange != 2 || !strings.Contains(u.Rollout, "after the rollout they will fail with TOOL_REMOVED") || u.UnknownCalls != 2 {
		t.Errorf("delete_branch: %+v %+v", db, u)
	}
	if sd := change(t, b, "search_docs"); sd.Status != toolchange.StatusUnchanged || sd.Usage != nil {
		t.Errorf("search_docs: %+v", sd)
	}

	// Leaving cursor out leaves claude-desktop's 14 calls.
	b = decodeCheck(t, post(t, s.Handler(), "/api/v1/check?exclude_client=cursor", checkRequest(t)))
	if u := change(t, b, "deploy_preview").Usage; u.Calls != 14 || len(u.Clients) != 1 {
		t.Errorf("deploy_preview without cursor: %+v", u)
	}

	// In the last half hour no call used an old revision: the change that
	// needed a decision and that nobody called is safe, the violation of
	// the seed's rule is not. goose@1.0.0's 2 calls to the removed
	// delete_branch did not say their revision: the removal stays
	// needs_decision, unless they are judged safe as asked.
	b = decodeCheck(t, post(t, s.Handler(), "/api/v1/check?window=30m", checkRequest(t)))
	if d := change(t, b, "deploy_preview"); d.Verdict != toolchange.VerdictSafe || d.Usage.Calls != 0 ||
		!strings.Contains(d.Reason, "no call in the last 30m was planned with revision `2` or an older one") {
		t.Errorf("deploy_preview over 30m: %+v", d)
	}
	if ci := change(t, b, "create_issue"); ci.Verdict != toolchange.VerdictViolation || b.Pass {
		t.Errorf("create_issue over 30m: %+v, pass %v", ci, b.Pass)
	}
	if db := change(t, b, "delete_branch"); db.Verdict != toolchange.VerdictNeedsDecision || db.Usage.Calls != 0 || db.Usage.OlderCalls != 0 ||
		db.Usage.UnknownCalls != 2 || db.Reason != "removed, with no similar new tool; 2 calls in the last 30m did not say which revision they were planned with (unknown, not assumed safe), and none said revision `4` or an older one" {
		t.Errorf("delete_branch over 30m: %q %+v", db.Reason, db.Usage)
	}
	b = decodeCheck(t, post(t, s.Handler(), "/api/v1/check?window=30m&unknown_callers=safe", checkRequest(t)))
	if db := change(t, b, "delete_branch"); db.Verdict != toolchange.VerdictSafe || b.UnknownCallers != "safe" ||
		!strings.HasSuffix(db.Reason, "; but no call in the last 30m said it was planned with revision `4` or an older one, and the 2 calls that did not say which revision they were planned with were judged safe as asked") {
		t.Errorf("delete_branch over 30m, unknown judged safe: %q, unknown callers %q", db.Reason, b.UnknownCallers)
	}
	// Leaving goose out leaves no call to delete_branch at all.
	b = decodeCheck(t, post(t, s.Handler(), "/api/v1/check?window=30m&exclude_client=goose", checkRequest(t)))
	if db := change(t, b, "delete_branch"); db.Verdict != toolchange.VerdictSafe || db.Usage.UnknownCalls != 0 {
		t.Errorf("delete_branch over 30m without goose: %q %+v", db.Reason, db.Usage)
	}
}

func TestCheckErrors(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	good := checkRequest(t)
	cases := []struct {
		target string
		body   string
		status int
		param  string
		want   string
	}{
		{"/api/v1/check", `{"old":`, 400, "", "cannot parse the request"},
		{"/api/v1/check", `{"old":{},"new":{"tools":[]}}`, 400, "old", "old: invalid tools/list"},
		{"/api/v1/check", `{"new":{"tools":[]}}`, 400, "service", "without an old list, the check needs the service"},
		{"/api/v1/check?service=nobody", `{"new":{"tools":[]}}`, 400, "service", `service "nobody" has advertised no tool definition`},
		{"/api/v1/check", `{"old":{"tools":[]},"new":{"tools":[{"name":"a"}]}}`, 400, "new", `new: invalid tools/list: tool 0: tool "a": no inputSchema`},
		{"/api/v1/check?tool=x", string(good), 400, "tool", "unknown parameter"},
		{"/api/v1/check?window=0d", string(good), 400, "window", "invalid window"},
		{"/api/v1/check?window=7d&from=-3d", string(good), 400, "window", "give window or from, not both"},
		{"/api/v1/check?unknown_callers=maybe", string(good), 400, "unknown_callers", "want at_risk or safe"},
		{"/api/v1/check", strings.Repeat(" ", 2*toolchange.MaxListBytes+65<<10), 413, "", "larger than"},
	}
	for _, tc := range cases {
		t.Run(tc.target+" "+tc.want, func(t *testing.T) {
			p := checkProblem(t, post(t, s.Handler(), tc.target, []byte(tc.body)), tc.status)
			if p.Parameter != tc.param || !strings.Contains(p.Detail, tc.want) {
				t.Errorf("problem %+v, want parameter %q and %q", p, tc.param, tc.want)
			}
		})
	}
}

// TestCheckTenantAndScope posts the check with apiclient over a server
// that runs with tokens: each tenant's token weighs it by that tenant's
// calls only, and a token without the read scope, or none, is refused.
func TestCheckTenantAndScope(t *testing.T) {
	tokens, tk := newTokens(t)
	s, _ := liveServer(t, api.DefaultConfig(), tokens)
	var req apiv1.CheckRequest
	if err := json.Unmarshal(checkRequest(t), &req); err != nil {
		t.Fatal(err)
	}
	calls := func(token string) (uint64, error) {
		cl := &apiclient.Client{BaseURL: "http://" + s.Addr(), Token: token}
		var b apiclient.CheckBody
		if err := cl.PostJSON(context.Background(), "/api/v1/check", url.Values{"window": {"7d"}}, req, &b); err != nil {
			return 0, err
		}
		return change(t, b, "deploy_preview").Usage.Calls, nil
	}
	// Tenant A: the 107 calls planned with 2; tenant B (globex): its 22.
	for who, want := range map[string]uint64{"a": 107, "b": 22} {
		if got, err := calls(tk[who]); err != nil || got != want {
			t.Errorf("token %s: %d calls (%v), want %d", who, got, err, want)
		}
	}
	for token, status := range map[string]int{"": http.StatusUnauthorized, tk["a-ingest"]: http.StatusForbidden} {
		_, err := calls(token)
		var p *apiv1.Problem
		if !errors.As(err, &p) || p.Status != status {
			t.Errorf("token %q: %v, want a %d problem", token, err, status)
		}
	}
}

// agePtr is a known session age.
func agePtr(s int64) *int64 { return &s }

// TestCheckMarkdown: the check answers the Markdown of mcpdrift check when
// Accept names text/markdown before JSON, and JSON otherwise.
func TestCheckMarkdown(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	send := func(accept string) response {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "/api/v1/check", bytes.NewReader(checkRequest(t)))
		req.Header.Set("Content-Type", "application/json")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	}
	b := decodeCheck(t, send(""))
	var want bytes.Buffer
	if err := b.Report().Markdown(&want); err != nil {
		t.Fatal(err)
	}
	for accept, markdown := range map[string]bool{
		"":                                  false,
		"application/json":                  false,
		"*/*":                               false,
		"application/json, text/markdown":   false,
		"text/markdown":                     true,
		"text/markdown;q=0.9, */*;q=0.1":    true,
		"text/html, text/markdown, */*;q=0": true,
	} {
		r := send(accept)
		ct := r.header.Get("Content-Type")
		switch {
		case r.status != http.StatusOK || r.header.Get("Vary") != "Accept":
			t.Errorf("Accept %q: %d, Vary %q", accept, r.status, r.header.Get("Vary"))
		case markdown && (!strings.HasPrefix(ct, "text/markdown") || !bytes.Equal(r.body, want.Bytes())):
			t.Errorf("Accept %q: %s %.200s, want the Markdown of mcpdrift check", accept, ct, r.body)
		case !markdown && !strings.HasPrefix(ct, "application/json"):
			t.Errorf("Accept %q: %s, want JSON", accept, ct)
		}
	}
}
