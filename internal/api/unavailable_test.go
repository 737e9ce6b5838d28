package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
)

// TestStoreDownIs503 serves the reports from a ClickHouse server of its
// own, then stops the server: every report answers 503 with Retry-After,
// as a problem, not 500, and /readyz turns unready.
func TestStoreDownIs503(t *testing.T) {
	clickhousetest.Require(t)
	ctx := context.Background()
	n, err := clickhousetest.StartServer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })
	cfg := clickhouse.DefaultConfig(n.DSN())
	st, err := clickhouse.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	reports, err := queries.New(st, cfg.Schema.Database)
	if err != nil {
		t.Fatal(err)
	}
	s, err := api.New(api.DefaultConfig(), st, reports, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := get(t, s.Handler(), "/api/v1/reports/adapter-retirement", ""); r.status != http.StatusOK {
		t.Fatalf("with the store up: %d %s", r.status, r.body)
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"adapter-retirement", "stale-usage", "rejections", "repairs"} {
		r := get(t, s.Handler(), "/api/v1/reports/"+name, "")
		p := checkProblem(t, r, http.StatusServiceUnavailable)
		if !strings.Contains(p.Detail, "store is unavailable") || r.header.Get("Retry-After") == "" {
			t.Errorf("%s with the store down: %q, Retry-After %q", name, p.Detail, r.header.Get("Retry-After"))
		}
	}
	checkProblem(t, get(t, s.Handler(), "/readyz", ""), http.StatusServiceUnavailable)
}
