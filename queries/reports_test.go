package queries_test

import (
	"time"

	"testing"

	"github.com/mcpdrift/mcpdrift/internal/fixture"
	"github.com/mcpdrift/mcpdrift/queries"
)

// retire are the thresholds of the golden retirement reports: at most 5
// calls in the window, whatever their share.
var retire = queries.RetirementOptions{MaxCalls: 5, MaxShare: -1}

func TestGolden(t *testing.T) {
	r := runner(t)
	c := ctx(t)
	a, b := week(fixture.TenantA), week(fixture.TenantB)
	exclCI := a
	exclCI.ExcludeClients = []string{"ci-runner"}
	prod := a
	prod.Environment = "prod"

	cases := []struct {
		name string
		run  func() (any, error)
	}{
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
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.run()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, v)
		})
	}
}
