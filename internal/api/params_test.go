package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
)

// TestBadParameters: every malformed, unknown or conflicting parameter is
// a 400 problem naming it, never a 500.
func TestBadParameters(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	const (
		su = "/api/v1/reports/stale-usage"
		ar = "/api/v1/reports/adapter-retirement"
		vi = "/api/v1/reports/violations"
		au = "/api/v1/audit/calls"
	)
	foreign := base64.RawURLEncoding.EncodeToString([]byte("v9|x|y|z"))
	cases := []struct {
		target, param, detail string
	}{
		{su + "?from=yesterday", "from", "invalid time"},
		{su + "?from=-99999d", "from", "between 0 and 3650"},
		{su + "?from=-1x", "from", "invalid relative time"},
		{su + "?to=soon", "to", "invalid time"},
		{su + "?to=9999-12-31T23:59:59Z", "to", "between 1900-01-01T00:00:00Z and 2262"},
		{vi + "?from=1800-01-01T00:00:00Z", "from", "between 1900"},
		{au + "?to=2300-01-01T00:00:00Z", "to", "DateTime64(9)"},
		{su + "?from=-1d&to=-2d", "from", "must be before"},
		{su + "?from=now", "from", "must be before"},
		{su + "?toll=deploy_preview", "toll", "unknown parameter"},
		{su + "?tool=a&tool=b", "tool", "given 2 times"},
		{su + "?format=xml", "format", "unknown format"},
		{su + "?exclude_client=", "exclude_client", "must not be empty"},
		{su + "?window=14d", "window", "unknown parameter"},
		{su + "?limit=5", "limit", "unknown parameter"},
		{su + "?format=table&width=10", "width", "invalid width"},
		{su + "?format=wide&width=wide", "width", "invalid width"},
		{ar + "?window=0d", "window", "longer than zero"},
		{ar + "?window=fortnight", "window", "invalid window"},
		{ar + "?window=-3d", "window", "invalid window"},
		{ar + "?window=7d&from=-7d", "window", "not both"},
		{ar + "?window=7d&to=2099-02-30", "to", "invalid time"},
		{su + "?from=2026-11-31", "from", "invalid time"},
		{ar + "?max_calls=-1", "max_calls", "invalid count"},
		{ar + "?max_calls=many", "max_calls", "invalid count"},
		{ar + "?max_calls=5&max_calls=6", "max_calls", "given 2 times"},
		{ar + "?max_share=2", "max_share", "between 0 and 1"},
		{ar + "?max_share=150%25", "max_share", "between 0 and 1"},
		{ar + "?max_share=NaN", "max_share", "invalid share"},
		{ar + "?max_calls=5&max_share=0.5%", "max_share", "escape % as %25"},
		{su + "?tool=%zz", "tool", "malformed value"},
		{ar + "?long_session=0s", "long_session", "positive duration"},
		{ar + "?long_session=forever", "long_session", "positive duration"},
		{ar + "?top_clients=0", "top_clients", "from 1 to 100"},
		{ar + "?unknown_callers=ignore", "unknown_callers", "at_risk or safe"},
		{ar + "?run=r1", "run", "unknown parameter"},
		{vi + "?limit=0", "limit", "from 1 to 1000"},
		{vi + "?limit=5000", "limit", "from 1 to 1000"},
		{vi + "?limit=ten", "limit", "invalid limit"},
		{vi + "?cursor=%25%25%25", "cursor", "invalid cursor"},
		{vi + "?cursor=" + foreign, "cursor", "invalid cursor"},
		{au + "?limit=-1", "limit", "from 1 to 1000"},
		{au + "?run=a&run=b", "run", "given 2 times"},
		{au + "?cursor=bm9wZQ", "cursor", "invalid cursor"},
		{au + "?adapter=x", "adapter", "unknown parameter"},
		{"/api/v1/tools?max_calls=1", "max_calls", "unknown parameter"},
	}
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			r := get(t, s.Handler(), tc.target, "")
			p := checkProblem(t, r, http.StatusBadRequest)
			if p.Parameter != tc.param || !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("problem names %q with %q; want %q with %q", p.Parameter, p.Detail, tc.param, tc.detail)
			}
		})
	}
	t.Run("accept", func(t *testing.T) {
		r := get(t, s.Handler(), su, "image/png, application/xml;q=0.5")
		if p := checkProblem(t, r, http.StatusNotAcceptable); p.Parameter != "Accept" {
			t.Errorf("406 names %q", p.Parameter)
		}
	})
}

// checkProblem checks that r is an RFC 9457 problem with status and
// returns it.
func checkProblem(t *testing.T, r response, status int) apiv1.Problem {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var p apiv1.Problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Type != "about:blank" || p.Status != status || p.Title != http.StatusText(status) || p.Detail == "" {
		t.Errorf("problem %+v", p)
	}
	return p
}

func TestNegotiation(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	cases := []struct{ query, accept, want string }{
		{"", "", "application/json"},
		{"", "*/*", "application/json"},
		{"", "text/html,application/xhtml+xml,*/*;q=0.8", "application/json"},
		{"", "text/csv", "text/csv"},
		{"", "text/markdown", "text/markdown"},
		{"", "text/plain", "text/plain"},
		{"", "text/*", "text/csv"},
		{"", "text/*;q=0.9, text/markdown", "text/markdown"},
		{"", "application/json;q=0.1, text/csv;q=0.5", "text/csv"},
		{"", "text/csv;q=0, */*;q=0.1", "application/json"},
		{"?format=md", "text/csv", "text/markdown"},
		{"?format=markdown", "", "text/markdown"},
		{"?format=table", "application/json", "text/plain"},
		{"?format=json", "text/csv", "application/json"},
		{"?format=CSV", "", "text/csv"},
	}
	for _, tc := range cases {
		r := get(t, s.Handler(), "/api/v1/reports/repairs"+tc.query, tc.accept)
		ct := r.header.Get("Content-Type")
		if r.status != http.StatusOK || !strings.HasPrefix(ct, tc.want+";") {
			t.Errorf("%q with Accept %q: %d %q, want %s", tc.query, tc.accept, r.status, ct, tc.want)
		}
		if v := r.header.Get("Vary"); v != "Accept" {
			t.Errorf("Vary = %q", v)
		}
	}
	r := get(t, s.Handler(), "/api/v1/reports/repairs?format=csv", "")
	if cd := r.header.Get("Content-Disposition"); cd != `attachment; filename="mcpdrift-repairs.csv"` {
		t.Errorf("Content-Disposition = %q", cd)
	}
}

// failing is a Reports whose every report fails with err: the store cannot
// be made to fail on demand.
type failing struct {
	api.Reports
	err error
}

func (f failing) StaleUsage(context.Context, queries.Filter) ([]apiv1.StaleUsageRow, error) {
	return nil, f.err
}

func TestReportErrors(t *testing.T) {
	fx := reporttest.Open(t)
	cases := []struct {
		err        error
		status     int
		retryAfter bool
		hidden     string
	}{
		{fmt.Errorf("cannot run report stale_usage: %w", errors.New("clickhouse: secret table detail")), http.StatusInternalServerError, false, "secret"},
		{fmt.Errorf("%w: tenant must not be empty", queries.ErrInvalidFilter), http.StatusBadRequest, false, ""},
		{fmt.Errorf("%w: unknown format", queries.ErrInvalidCursor), http.StatusBadRequest, false, ""},
		{fmt.Errorf("cannot run report: %w", context.DeadlineExceeded), http.StatusServiceUnavailable, true, ""},
		{store.ErrClosed, http.StatusServiceUnavailable, true, ""},
	}
	for _, tc := range cases {
		s, err := api.New(api.DefaultConfig(), fx.Store, failing{fx.Runner, tc.err}, "test", nil,
			api.WithClock(func() time.Time { return fx.Now }))
		if err != nil {
			t.Fatal(err)
		}
		r := get(t, s.Handler(), "/api/v1/reports/stale-usage?format=csv", "")
		checkProblem(t, r, tc.status)
		if got := r.header.Get("Retry-After") != ""; got != tc.retryAfter {
			t.Errorf("%v: Retry-After set %v", tc.err, got)
		}
		if tc.hidden != "" && strings.Contains(string(r.body), tc.hidden) {
			t.Errorf("%v: the problem shows the cause: %s", tc.err, r.body)
		}
	}
}

func TestParseShare(t *testing.T) {
	f := func(s string, want float64, ok bool) {
		t.Helper()
		got, err := api.ParseShare(s)
		if (err == nil) != ok || (ok && got != want) {
			t.Errorf("ParseShare(%q) = %v, %v; want %v, ok %v", s, got, err, want, ok)
		}
	}
	f("0", 0, true)
	f("0.005", 0.005, true)
	f("0.5%", 0.005, true)
	f("100%", 1, true)
	f("1", 1, true)
	f("1.01", 0, false)
	f("-0.1", 0, false)
	f("Inf", 0, false)
	f("%", 0, false)
	f("", 0, false)
}
