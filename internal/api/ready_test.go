package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/selfmetrics"
	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// downStore is a Pinger whose store cannot be reached.
type downStore struct{}

func (downStore) Ping(context.Context) error { return errors.New("connection refused") }

// TestReadyChecks checks that /readyz answers 200 while every check passes
// and a 503 problem naming the first failing check otherwise.
func TestReadyChecks(t *testing.T) {
	fx := reporttest.Open(t)
	opts := schema.DefaultOptions()
	opts.Database = fx.Database
	missingDB := opts
	missingDB.Database = "no_such_db"
	ok := func(context.Context) error { return nil }
	full := func(context.Context) error { return errors.New("spool nearly full: 1000 of 1024 bytes used") }

	cases := []struct {
		name   string
		store  api.Pinger
		opts   []api.Option
		status int
		detail string // in the problem's detail
	}{
		{"all pass", fx.Store, []api.Option{
			api.WithReadyCheck("migrations", selfmetrics.MigrationsApplied(fx.Store, opts)),
			api.WithReadyCheck("spool", ok),
		}, http.StatusOK, ""},
		{"store unreachable", downStore{}, []api.Option{
			api.WithReadyCheck("migrations", selfmetrics.MigrationsApplied(fx.Store, opts)),
		}, http.StatusServiceUnavailable, "readiness check store failed: store unreachable: connection refused"},
		{"migrations missing", fx.Store, []api.Option{
			api.WithReadyCheck("migrations", selfmetrics.MigrationsApplied(fx.Store, missingDB)),
			api.WithReadyCheck("spool", ok),
		}, http.StatusServiceUnavailable, "readiness check migrations failed: schema migrations not applied"},
		{"spool full", fx.Store, []api.Option{
			api.WithReadyCheck("migrations", selfmetrics.MigrationsApplied(fx.Store, opts)),
			api.WithReadyCheck("spool", full),
		}, http.StatusServiceUnavailable, "readiness check spool failed: spool nearly full"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := api.New(api.DefaultConfig(), tc.store, fx.Runner, "test", nil, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			r := get(t, s.Handler(), "/readyz", "")
			if tc.status == http.StatusOK {
				if r.status != http.StatusOK || string(r.body) != `{"status":"ready"}`+"\n" {
					t.Fatalf("readyz: %d %s", r.status, r.body)
				}
				return
			}
			p := checkProblem(t, r, tc.status)
			if !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("detail %q, want it to contain %q", p.Detail, tc.detail)
			}
			if r.header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
		})
	}
}

// TestMetricsRoute checks that /metrics serves the registry, without a
// token, and that the API's auth failures are counted there.
func TestMetricsRoute(t *testing.T) {
	fx := reporttest.Open(t)
	reg := prometheus.NewRegistry()
	s, err := api.New(api.DefaultConfig(), fx.Store, fx.Runner, "test", nil, api.WithMetrics(selfmetrics.Handler(reg)))
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(selfmetrics.NewAPICollector(s))
	r := get(t, s.Handler(), "/metrics", "")
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `mcpdrift_auth_failures_total{listener="api"} 0`) {
		t.Fatalf("metrics: %d %s", r.status, r.body)
	}
}

// TestRequestMetrics checks that every request is timed under its route
// template, never its raw path: a report, a request no route matches, and
// a request refused for its token.
func TestRequestMetrics(t *testing.T) {
	fx := reporttest.Open(t)
	tokens, set := newTokens(t)
	requests := selfmetrics.NewHTTPRequests()
	reg := prometheus.NewRegistry()
	reg.MustRegister(requests)
	s, err := api.New(api.DefaultConfig(), fx.Store, fx.Runner, "test", nil,
		api.WithMetrics(selfmetrics.Handler(reg)), api.WithTokens(tokens),
		api.WithRequestObserver(requests.Listener("api")),
		api.WithClock(func() time.Time { return fx.Now }))
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	send := func(target, token string) int {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, r := range []struct {
		target, token string
		status        int
	}{
		{"/api/v1/reports/stale-usage?tool=get_forecast", set["a"], 200},
		{"/api/v1/reports/stale-usage?from=-30d", set["a"], 200},
		{"/api/v1/reports/stale-usage", "", 401},
		{"/api/v1/no/such/path/a1b2c3", set["a"], 404},
		{"/healthz", "", 200},
	} {
		if got := send(r.target, r.token); got != r.status {
			t.Fatalf("%s: status %d, want %d", r.target, got, r.status)
		}
	}
	body := string(get(t, h, "/metrics", "").body)
	for _, line := range []string{
		`mcpdrift_http_request_duration_seconds_count{code="200",listener="api",method="GET",route="/api/v1/reports/stale-usage"} 2`,
		`mcpdrift_http_request_duration_seconds_count{code="401",listener="api",method="GET",route="/api/v1/reports/stale-usage"} 1`,
		`mcpdrift_http_request_duration_seconds_count{code="404",listener="api",method="GET",route="unmatched"} 1`,
		`mcpdrift_http_request_duration_seconds_count{code="200",listener="api",method="GET",route="/healthz"} 1`,
	} {
		if !strings.Contains(body, "\n"+line+"\n") {
			t.Errorf("no line %q in\n%s", line, body)
		}
	}
	if strings.Contains(body, "a1b2c3") || strings.Contains(body, "get_forecast") {
		t.Error("a raw path or query is a label")
	}
}
