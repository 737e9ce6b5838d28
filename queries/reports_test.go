package queries_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/internal/testing/fixture"
	"github.com/mcpdrift/mcpdrift/queries"
)

// retire are the thresholds of the golden retirement reports: at most 5
// calls in the window, whatever their share.
var retire = queries.RetirementOptions{MaxCalls: 5, MaxShare: -1}

// goldenCase is one report run whose answer is pinned in
// testdata/golden.
type goldenCase struct {
	name string
	run  func() (any, error)
}

// goldenCases are the pinned report runs over the fixture.
func goldenCases(r *queries.Runner, c context.Context) []goldenCase {
	a, b := week(fixture.TenantA), week(fixture.TenantB)
	exclCI := a
	exclCI.ExcludeClients = []string{"ci-runner"}
	prod := a
	prod.Environment = "prod"
	issues := a
	issues.Tool = "create_issue"

	return []goldenCase{
		{"tools_a", func() (any, error) { return r.Tools(c, a) }},
		{"stale_usage_a", func() (any, error) { return r.StaleUsage(c, a) }},
		{"stale_usage_a_prod", func() (any, error) { return r.StaleUsage(c, prod) }},
		{"stale_usage_b", func() (any, error) { return r.StaleUsage(c, b) }},
		{"rejections_a", func() (any, error) { return r.Rejections(c, a) }},
		{"repairs_a", func() (any, error) { return r.Repairs(c, a) }},
		{"adapter_retirement_a", func() (any, error) { return r.AdapterRetirement(c, a, retire) }},
		{"adapter_retirement_a_exclude_ci", func() (any, error) { return r.AdapterRetirement(c, exclCI, retire) }},
		{"adapter_retirement_a_share", func() (any, error) {
			return r.AdapterRetirement(c, a, queries.RetirementOptions{MaxCalls: -1, MaxShare: 0.1, LongSession: 72 * time.Hour})
		}},
		{"adapter_retirement_b", func() (any, error) { return r.AdapterRetirement(c, b, retire) }},
		{"propagation_a", func() (any, error) { return r.Propagation(c, a) }},
		{"propagation_b", func() (any, error) { return r.Propagation(c, b) }},
		{"violations_a", func() (any, error) { return r.Violations(c, a, queries.Page{}) }},
		{"violations_b", func() (any, error) { return r.Violations(c, b, queries.Page{}) }},
		{"audit_a_session", func() (any, error) {
			return r.Audit(c, queries.AuditFilter{Filter: a, SessionID: "cd09-st-4"}, queries.Page{})
		}},
		{"audit_a_run", func() (any, error) {
			return r.Audit(c, queries.AuditFilter{Filter: a, RunID: "legacy-run-1"}, queries.Page{})
		}},
		{"tools_series_a", func() (any, error) { return r.ToolsSeries(c, a, byDay("tool")) }},
		{"stale_usage_series_a", func() (any, error) { return r.StaleUsageSeries(c, a, byDay("tool", "revision_client")) }},
		{"stale_usage_series_a_client", func() (any, error) { return r.StaleUsageSeries(c, a, byDay("client")) }},
		{"rejections_series_a", func() (any, error) { return r.RejectionsSeries(c, a, byDay("error_code")) }},
		{"repairs_series_a", func() (any, error) { return r.RepairsSeries(c, a, byDay()) }},
		{"adapter_retirement_series_a", func() (any, error) { return r.AdapterRetirementSeries(c, exclCI, byDay("adapter")) }},
		{"propagation_series_a", func() (any, error) { return r.PropagationSeries(c, a, byDay("tool")) }},
		{"violations_series_a", func() (any, error) { return r.ViolationsSeries(c, a, byDay("kind")) }},
		{"audit_series_a_run", func() (any, error) {
			return r.AuditSeries(c, queries.AuditFilter{Filter: a, RunID: "legacy-run-1"}, byDay("client", "outcome"))
		}},
		{"revision_sources_a", func() (any, error) { return r.RevisionSources(c, a) }},
		{"revision_sources_b", func() (any, error) { return r.RevisionSources(c, b) }},
		{"revision_sources_series_a", func() (any, error) { return r.RevisionSourcesSeries(c, a, byDay("client")) }},
		{"contract_errors_a", func() (any, error) { return r.ContractErrors(c, a) }},
		{"contract_errors_a_tool", func() (any, error) { return r.ContractErrors(c, issues) }},
		{"contract_errors_b", func() (any, error) { return r.ContractErrors(c, b) }},
		{"contract_errors_series_a", func() (any, error) { return r.ContractErrorsSeries(c, a, byDay("client")) }},
	}
}

// byDay is a series by day, grouped by the dimensions named.
func byDay(groupBy ...string) queries.SeriesOptions {
	return queries.SeriesOptions{Step: 24 * time.Hour, GroupBy: groupBy}
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases(runner(t), ctx(t)) {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.run()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, v)
		})
	}
}

// TestGoldenOnServers runs every report over the fixture on a ClickHouse
// server and on a 2-shard cluster, through the Distributed tables: each
// must answer what the embedded store answers, byte for byte (the golden
// files are the embedded answers; the raw reports are compared with the
// embedded store's in the same run).
func TestGoldenOnServers(t *testing.T) {
	for _, b := range clickhousetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			// One deadline for loading and every report: a cluster of
			// engines on a shared machine takes minutes.
			c, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			t.Cleanup(cancel)
			s := b.Open(t)
			if _, err := s.Migrate(c); err != nil {
				t.Fatal(err)
			}
			if err := loadFixture(c, s); err != nil {
				t.Fatal(err)
			}
			r, err := queries.New(s, s.Schema.Database, queries.WithClock(func() time.Time { return fixture.Now }),
				queries.WithChanges(registry.ChangeOf))
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range goldenCases(r, c) {
				t.Run(tc.name, func(t *testing.T) {
					v, err := tc.run()
					if err != nil {
						t.Fatal(err)
					}
					matchGolden(t, tc.name, v)
				})
			}
			// Every report, the raw ones included, as the embedded store
			// answers it.
			for _, tenant := range []string{fixture.TenantA, fixture.TenantB} {
				if got, want := allReports(t, r, week(tenant)), allReports(t, runner(t), week(tenant)); got != want {
					t.Errorf("tenant %s: the reports differ from the embedded store's:\n got: %s\nwant: %s", tenant, got, want)
				}
			}
		})
	}
}
