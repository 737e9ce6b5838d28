package queries_test

import (
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/fixture"
	"github.com/mcpdrift/mcpdrift/queries"
)

func TestSeriesSmoke(t *testing.T) {
	r := runner(t)
	c := ctx(t)
	a := week(fixture.TenantA)
	s, err := r.StaleUsageSeries(c, a, queries.SeriesOptions{Step: 24 * time.Hour, GroupBy: []string{"tool", "revision_client"}})
	t.Logf("%+v %v", s, err)
	for _, run := range []func() (any, error){
		func() (any, error) { return r.ToolsSeries(c, a, queries.SeriesOptions{Step: 24 * time.Hour}) },
		func() (any, error) { return r.RejectionsSeries(c, a, queries.SeriesOptions{Step: 24 * time.Hour, GroupBy: []string{"client"}}) },
		func() (any, error) { return r.RepairsSeries(c, a, queries.SeriesOptions{Step: 24 * time.Hour}) },
		func() (any, error) { return r.AdapterRetirementSeries(c, a, queries.SeriesOptions{Step: 24 * time.Hour, GroupBy: []string{"adapter"}}) },
		func() (any, error) { return r.PropagationSeries(c, a, queries.SeriesOptions{Step: 24 * time.Hour}) },
		func() (any, error) { return r.ViolationsSeries(c, a, queries.SeriesOptions{Step: 24 * time.Hour, GroupBy: []string{"kind"}}) },
	} {
		v, err := run()
		t.Logf("%+v %v", v, err)
	}
}
