package queries

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
)

// Bounds of a series' buckets.
const (
	// MaxSeriesBuckets bounds the buckets of one series: a step that would
	// cut the window into more is refused.
	MaxSeriesBuckets = 10000
	// DefaultSeriesBuckets is about how many buckets a series without a
	// step has: its step is the window's length divided by it, rounded
	// up as any step is.
	DefaultSeriesBuckets = 100
)

// SeriesOptions say how a series cuts its window.
type SeriesOptions struct {
	// Step is the buckets' length, rounded up to the resolution the rollup
	// tiers hold the window's start at (whole minutes, hours or days); zero
	// asks for DefaultSeriesBuckets buckets.
	Step time.Duration
	// GroupBy names the dimensions each point is split by, from the
	// report's own (SeriesDimensions); none sums every row of a bucket.
	GroupBy []string
}

// Series is a report's counts per bucket of its window: one point per
// bucket and group, every bucket present (zero where nothing happened).
// A bucket starts at a multiple of Step since the Unix epoch; the first and
// the last are cut by the window [From, To), which is the window the
// report itself reads (Runner.Window), so that a series sums to the
// report's totals.
type Series[T any] struct {
	From    time.Time     `json:"from"`
	To      time.Time     `json:"to"`
	Step    time.Duration `json:"step"`
	GroupBy []string      `json:"group_by"`
	Points  []T           `json:"rows"`
}

// groups are the dimensions a series can group by; a query's text selects
// each as itself when set, as ” when not.
type groups struct {
	Tool, RevisionClient, RevisionServer, Client, Outcome, ErrorCode, Adapter, Kind, Service bool
	Privilege, Approval, Environment                                                         bool
}

var allGroups = groups{true, true, true, true, true, true, true, true, true, true, true, true}

// dimensionFields maps a dimension's name to its flag in groups.
var dimensionFields = map[string]func(*groups) *bool{
	"tool":            func(g *groups) *bool { return &g.Tool },
	"revision_client": func(g *groups) *bool { return &g.RevisionClient },
	"revision_server": func(g *groups) *bool { return &g.RevisionServer },
	"client":          func(g *groups) *bool { return &g.Client },
	"outcome":         func(g *groups) *bool { return &g.Outcome },
	"error_code":      func(g *groups) *bool { return &g.ErrorCode },
	"adapter":         func(g *groups) *bool { return &g.Adapter },
	"kind":            func(g *groups) *bool { return &g.Kind },
	"service":         func(g *groups) *bool { return &g.Service },
	"privilege":       func(g *groups) *bool { return &g.Privilege },
	"approval":        func(g *groups) *bool { return &g.Approval },
	"environment":     func(g *groups) *bool { return &g.Environment },
}

// seriesDimensions are the dimensions each report's series can group by,
// by report name (the API's path segment).
var seriesDimensions = map[string][]string{
	"tools":              {"tool"},
	"stale-usage":        {"tool", "revision_client", "revision_server", "client"},
	"rejections":         {"tool", "revision_client", "revision_server", "outcome", "error_code", "client"},
	"repairs":            {"tool"},
	"adapter-retirement": {"adapter", "tool"},
	"propagation":        {"tool"},
	"violations":         {"kind", "tool", "client", "service", "outcome"},
	"revision-sources":   {"tool", "client"},
	"contract-errors":    {"client", "tool"},
	"audit": {"tool", "client", "outcome", "revision_client", "revision_server", "adapter", "privilege", "approval",
		"service", "environment"},
}

// sameContractSeries are the series that count stale calls: they leave out
// the pairs of revisions that are one contract under two names
// (Runner.sameContracts), as the stale-usage report's rows do.
var sameContractSeries = []string{"stale-usage", "propagation", "audit"}

// SeriesDimensions returns the dimensions the named report's series can
// group by, and whether the report has a series.
func SeriesDimensions(report string) ([]string, bool) {
	d, ok := seriesDimensions[report]
	return slices.Clone(d), ok
}

// SeriesReports lists the reports that have a series.
func SeriesReports() []string {
	out := make([]string, 0, len(seriesDimensions))
	for name := range seriesDimensions {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// groupsOf checks groupBy against the report's dimensions.
func groupsOf(report string, groupBy []string) (groups, error) {
	var g groups
	allowed := seriesDimensions[report]
	for _, name := range groupBy {
		if !slices.Contains(allowed, name) {
			return groups{}, fmt.Errorf("%w: the %s series cannot group by %q; it groups by %s", ErrInvalidFilter, report, name, strings.Join(allowed, ", "))
		}
		*dimensionFields[name](&g) = true
	}
	return g, nil
}

func ceilDuration(d, unit time.Duration) time.Duration {
	return (d + unit - 1) / unit * unit
}

// bucketOf is the start of the bucket of step that holds t: a multiple of
// step since the Unix epoch, as the queries compute it (time.Truncate counts
// from the year 1, which differs for a step that does not divide a day).
func bucketOf(t time.Time, step time.Duration) time.Time {
	return time.Unix(0, t.UnixNano()-t.UnixNano()%int64(step)).UTC()
}

// seriesPlan resolves the window and the step of a series: the window as
// every report reads it (Plan), covered by buckets of the tiers whose
// buckets each lie in one step (the coarsest is the day for a step of whole
// days, the hour for whole hours, else the minute).
func (r *Runner) seriesPlan(f Filter, s SeriesOptions) (Plan, time.Duration, error) {
	if s.Step < 0 {
		return Plan{}, 0, fmt.Errorf("%w: step must be positive, not %s", ErrInvalidFilter, s.Step)
	}
	p := r.Plan(f.From, f.To)
	if s.Step == 0 {
		s.Step = (p.To.Sub(p.From) + DefaultSeriesBuckets - 1) / DefaultSeriesBuckets
	}
	step := r.seriesStep(p, s.Step)
	if n := (p.To.Sub(bucketOf(p.From, step)) + step - 1) / step; n > MaxSeriesBuckets {
		return Plan{}, 0, fmt.Errorf("%w: a step of %s cuts the window %s to %s into %d buckets, more than %d: ask for a longer step",
			ErrInvalidFilter, step, p.From.Format(time.RFC3339), p.To.Format(time.RFC3339), n, MaxSeriesBuckets)
	}
	top := TierMinute
	for _, t := range []Tier{TierDay, TierHour} {
		if step%t.step() == 0 {
			top = t
			break
		}
	}
	p.Spans = [3][]Span{}
	decompose(&p.Spans, p.BucketsFrom, p.BucketsTo, top)
	return p, step, nil
}

// seriesStep rounds step up to the resolution the tiers hold the plan's
// start at: whole minutes while the minutely tier holds it, whole hours
// while the hourly tier does, whole days beyond.
func (r *Runner) seriesStep(p Plan, step time.Duration) time.Duration {
	minuteFloor, hourFloor := floors(r.now().UTC(), r.retentionDays)
	res := finestAt(p.From, minuteFloor, hourFloor).step()
	return max(ceilDuration(step, res), res)
}

// bindSeries binds a series call: the plan (Plan.bind), the groups, the
// step in seconds as {step}, and the first and the last bucket's start
// bounds as {series_from} and {series_to}, which WITH FILL completes the
// series between.
func (p Plan) bindSeries(f Filter, g groups, step time.Duration) call {
	c := p.bind(f)
	c.shape.G = g
	c.params.Int("step", int64(step/time.Second))
	c.params["series_from"] = bucketOf(p.From, step).Format(bucketLayout)
	last := bucketOf(p.To, step)
	if last.Before(p.To) {
		last = last.Add(step)
	}
	c.params["series_to"] = last.Format(bucketLayout)
	return c
}

// series runs the named series query of report for f, reading the
// rollups that can answer it (the fine ones to group by client); bind, if
// any, binds the report's own parameters.
func series[T any](ctx context.Context, r *Runner, report, query string, f Filter, s SeriesOptions, bind ...func(*call)) (Series[T], error) {
	if err := f.validate(); err != nil {
		return Series[T]{}, err
	}
	g, err := groupsOf(report, s.GroupBy)
	if err != nil {
		return Series[T]{}, err
	}
	p, step, err := r.seriesPlan(f, s)
	if err != nil {
		return Series[T]{}, err
	}
	if RollupsFor(f) == RollupsFine || g.Client {
		if _, ok := r.templates[query+FineSuffix]; ok {
			query += FineSuffix
		}
	}
	c := p.bindSeries(f, g, step)
	for _, b := range bind {
		b(&c)
	}
	if slices.Contains(sameContractSeries, report) {
		same, err := r.sameContracts(ctx, f)
		if err != nil {
			return Series[T]{}, err
		}
		c.bindSameContract(same)
	}
	if query == "violations_series" {
		removed, err := r.removedAdapters(ctx, f.Tenant)
		if err != nil {
			return Series[T]{}, err
		}
		c.params.Strings("removed_adapters", removed)
		c.shape.Removed = len(removed) > 0
	}
	points := []T{}
	if err := r.run(ctx, query, c, &points); err != nil {
		return Series[T]{}, err
	}
	groupBy := slices.Clone(s.GroupBy)
	if groupBy == nil {
		groupBy = []string{}
	}
	return Series[T]{From: p.From, To: p.To, Step: step, GroupBy: groupBy, Points: points}, nil
}

// seriesDim is the column of a dimension in a series query's text:
// {{dim .F.G.Tool "t.tool" "tool"}} selects expr as name when the series
// groups by it, ” as name when not, so that every series has the same
// columns and its GROUP BY and ORDER BY name them all.
func seriesDim(grouped bool, expr, name string) string {
	if grouped {
		return expr + " AS " + name
	}
	return "'' AS " + name
}

// The points of each report's series are apiv1's (apiv1/points.go).

// ToolsSeries is the tools' calls per bucket.
func (r *Runner) ToolsSeries(ctx context.Context, f Filter, s SeriesOptions) (Series[apiv1.ToolPoint], error) {
	return series[apiv1.ToolPoint](ctx, r, "tools", "tools_series", f, s)
}

// StaleUsageSeries is the stale-usage report's calls per bucket.
func (r *Runner) StaleUsageSeries(ctx context.Context, f Filter, s SeriesOptions) (Series[apiv1.StaleUsagePoint], error) {
	return series[apiv1.StaleUsagePoint](ctx, r, "stale-usage", "stale_usage_series", f, s)
}

// RejectionsSeries is the rejected calls per bucket.
func (r *Runner) RejectionsSeries(ctx context.Context, f Filter, s SeriesOptions) (Series[apiv1.RejectionPoint], error) {
	return series[apiv1.RejectionPoint](ctx, r, "rejections", "rejections_series", f, s)
}

// RepairsSeries is the repairs report's counts per bucket.
func (r *Runner) RepairsSeries(ctx context.Context, f Filter, s SeriesOptions) (Series[apiv1.RepairPoint], error) {
	return series[apiv1.RepairPoint](ctx, r, "repairs", "repairs_series", f, s)
}

// AdapterRetirementSeries is the calls through adapters per bucket.
func (r *Runner) AdapterRetirementSeries(ctx context.Context, f Filter, s SeriesOptions) (Series[apiv1.AdapterPoint], error) {
	return series[apiv1.AdapterPoint](ctx, r, "adapter-retirement", "adapter_retirement_series", f, s)
}

// PropagationSeries is the notification propagation per bucket of the
// notifications.
func (r *Runner) PropagationSeries(ctx context.Context, f Filter, s SeriesOptions) (Series[apiv1.PropagationPoint], error) {
	return series[apiv1.PropagationPoint](ctx, r, "propagation", "propagation_series", f, s)
}

// ViolationsSeries is the safety violations per bucket.
func (r *Runner) ViolationsSeries(ctx context.Context, f Filter, s SeriesOptions) (Series[apiv1.ViolationPoint], error) {
	return series[apiv1.ViolationPoint](ctx, r, "violations", "violations_series", f, s)
}

// AuditSeries is the audited calls per bucket, under the audit's filters.
// Callers must hold the audit permission, as for Audit.
func (r *Runner) AuditSeries(ctx context.Context, f AuditFilter, s SeriesOptions) (Series[apiv1.AuditPoint], error) {
	return series[apiv1.AuditPoint](ctx, r, "audit", "audit_series", f.Filter, s, func(c *call) {
		c.params.String("run_id", f.RunID)
		c.params.String("session_id", f.SessionID)
		c.params.String("request_id", f.RequestID)
		c.shape.RunID, c.shape.SessionID, c.shape.RequestID = f.RunID != "", f.SessionID != "", f.RequestID != ""
	})
}
