package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
)

// TestRouteAnswers: an unknown report is a 404 problem naming it, a path
// served with other methods a 405 problem with Allow, an unknown path a
// 404, and the health endpoints answer HEAD.
func TestRouteAnswers(t *testing.T) {
	s, fx := newServer(t, reporttest.TenantA)
	send := func(method, target string) response {
		t.Helper()
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	}
	for _, tc := range []struct {
		target, detail string
	}{
		{"/api/v1/reports/nope", `unknown report "nope"`},
		{"/api/v1/reports/tools", `unknown report "tools"`},
	} {
		p := checkProblem(t, send(http.MethodGet, tc.target), http.StatusNotFound)
		if p.Parameter != "report" || !strings.Contains(p.Detail, tc.detail) {
			t.Errorf("%s: problem names %q with %q", tc.target, p.Parameter, p.Detail)
		}
	}
	for _, tc := range []struct {
		method, target, allow string
	}{
		{http.MethodPost, "/api/v1/reports/stale-usage", "GET"},
		{http.MethodDelete, "/api/v1/tools", "GET"},
		{http.MethodPut, "/healthz", "GET, HEAD"},
	} {
		r := send(tc.method, tc.target)
		p := checkProblem(t, r, http.StatusMethodNotAllowed)
		if got := r.header.Get("Allow"); !sameMethods(got, tc.allow) {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.target, got, tc.allow)
		}
		if !strings.Contains(p.Detail, tc.method) {
			t.Errorf("%s %s: detail %q", tc.method, tc.target, p.Detail)
		}
	}
	checkProblem(t, send(http.MethodGet, "/api/v2/nothing"), http.StatusNotFound)
	day := fx.Now.UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	if r := send(http.MethodGet, "/api/v1/reports/stale-usage?from="+day); r.status != http.StatusOK || !strings.Contains(string(r.body), day+"T00:00:00Z") {
		t.Errorf("from=%s: %d %.300s; want 200 from its midnight", day, r.status, r.body)
	}
	for _, target := range []string{"/healthz", "/readyz"} {
		if r := send(http.MethodHead, target); r.status != http.StatusOK {
			t.Errorf("HEAD %s: %d %s", target, r.status, r.body)
		}
	}
}

// sameMethods reports whether two Allow values list the same methods.
func sameMethods(a, b string) bool {
	set := func(s string) map[string]bool {
		m := map[string]bool{}
		for f := range strings.SplitSeq(s, ",") {
			m[strings.TrimSpace(f)] = true
		}
		return m
	}
	x, y := set(a), set(b)
	if len(x) != len(y) {
		return false
	}
	for k := range x {
		if !y[k] {
			return false
		}
	}
	return true
}

// TestParseTimeDate: a date is its midnight, UTC; an impossible date is an
// error.
func TestParseTimeDate(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	got, err := api.ParseTime("2026-11-30", now)
	if err != nil || !got.Equal(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("ParseTime(2026-11-30) = %v, %v", got, err)
	}
	for _, bad := range []string{"2026-11-31", "2026-1-30", "30-11-2026"} {
		if _, err := api.ParseTime(bad, now); err == nil || !strings.Contains(err.Error(), "a date") {
			t.Errorf("ParseTime(%s): %v, want an error naming the date form", bad, err)
		}
	}
}
