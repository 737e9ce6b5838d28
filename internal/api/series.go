package api

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/render"
	"github.com/mcpdrift/mcpdrift/queries"
)

const seriesSuffix = "/series"

var (
	pStep = param{name: apiv1.ParamStep, schema: strSchema, example: "1h",
		desc: "The buckets' length (`5m`, `1h`, `1d`, or seconds: `300`), rounded up to whole minutes while the window starts within the minutely tier's days, to whole hours within the hourly tier's, to whole days beyond. Default: the window's length divided by " + strconv.Itoa(queries.DefaultSeriesBuckets) + ", rounded up the same way."}
	pGroupBy = param{name: apiv1.ParamGroupBy, repeat: true, schema: strSchema, example: "tool",
		desc: "A dimension to split the points by, repeatable or comma-separated; the dimensions of each series are in its description. None: one point per bucket."}
)

// seriesEndpoint is the series endpoint of the report at path.
func seriesEndpoint[T any](path, report, operationID, summary, description string,
	get func(context.Context, *Server, query, queries.Filter, queries.SeriesOptions) (queries.Series[T], error),
) *endpoint {
	dims, _ := queries.SeriesDimensions(report)
	return &endpoint{
		path: path + seriesSuffix, report: report, operationID: operationID, tag: "series",
		summary: summary,
		description: description + " One point per bucket of `step` and group, every bucket present (zero counts where nothing happened), over the window the report reads (its first and last buckets cut by it), so that the points sum to the report's figures. Buckets start at multiples of the step since the Unix epoch. Dimensions (`group_by`): `" +
			strings.Join(dims, "`, `") + "`.",
		params:  withFormat(filterParams, []param{pStep, pGroupBy}),
		rowType: reflect.TypeFor[T](),
		series:  true,
		run:     seriesRun(report, summary, get),
	}
}

// seriesRun answers a series endpoint: the filter and the series'
// parameters read, get runs the series.
func seriesRun[T any](report, summary string,
	get func(context.Context, *Server, query, queries.Filter, queries.SeriesOptions) (queries.Series[T], error),
) func(context.Context, *Server, query, string) (result, error) {
	return func(ctx context.Context, s *Server, q query, tenant string) (result, error) {
		f, err := q.filter(tenant, false)
		if err != nil {
			return result{}, err
		}
		opt, err := q.series()
		if err != nil {
			return result{}, err
		}
		ser, err := get(ctx, s, q, f, opt)
		if err != nil {
			return result{}, err
		}
		return result{
			body: apiv1.SeriesBody[T]{Report: report, From: ser.From, To: ser.To,
				StepSeconds: int64(ser.Step / time.Second), GroupBy: ser.GroupBy, Rows: ser.Points},
			report: report + "-series", from: ser.From, to: ser.To,
			subtitle: "step " + ser.Step.String(),
			table:    func(render.Format) render.Table { return pointsTable(summary, ser.Points) },
		}, nil
	}
}

// seriesEndpoints are the series of the reports that count over time, in
// the order of the reports.
var seriesEndpoints = withScopes([]*endpoint{
	seriesEndpoint("/api/v1/tools", "tools", "toolsSeries", "Calls per bucket",
		"The tools' calls per bucket.",
		func(ctx context.Context, s *Server, _ query, f queries.Filter, o queries.SeriesOptions) (queries.Series[apiv1.ToolPoint], error) {
			return s.reports.ToolsSeries(ctx, f, o)
		}),
	seriesEndpoint(reportsPrefix+"stale-usage", "stale-usage", "staleUsageSeries", "Stale-revision usage per bucket",
		"The stale-usage report's calls per bucket: every call, the stale ones and the outcomes. Served from the call rollups.",
		func(ctx context.Context, s *Server, _ query, f queries.Filter, o queries.SeriesOptions) (queries.Series[apiv1.StaleUsagePoint], error) {
			return s.reports.StaleUsageSeries(ctx, f, o)
		}),
	seriesEndpoint(reportsPrefix+"rejections", "rejections", "rejectionsSeries", "Rejected calls per bucket",
		"The rejected calls per bucket, and those whose side effect had already started. Served from the call rollups.",
		func(ctx context.Context, s *Server, _ query, f queries.Filter, o queries.SeriesOptions) (queries.Series[apiv1.RejectionPoint], error) {
			return s.reports.RejectionsSeries(ctx, f, o)
		}),
	seriesEndpoint(reportsPrefix+"repairs", "repairs", "repairsSeries", "Repairs per bucket",
		"The repairs report's counts per bucket, and each bucket's own times to repair (null when it has none). Served from the call and repair rollups.",
		func(ctx context.Context, s *Server, _ query, f queries.Filter, o queries.SeriesOptions) (queries.Series[apiv1.RepairPoint], error) {
			return s.reports.RepairsSeries(ctx, f, o)
		}),
	seriesEndpoint(reportsPrefix+"adapter-retirement", "adapter-retirement", "adapterRetirementSeries", "Calls through adapters per bucket",
		"The calls through adapters per bucket, those the adapter normalised (which would be rejected without it), and the calls of each adapter's tool. Served from the adapter and call rollups.",
		func(ctx context.Context, s *Server, _ query, f queries.Filter, o queries.SeriesOptions) (queries.Series[apiv1.AdapterPoint], error) {
			return s.reports.AdapterRetirementSeries(ctx, f, o)
		}),
	seriesEndpoint(reportsPrefix+"propagation", "propagation", "propagationSeries", "Notification propagation per bucket",
		"The sessions notified per bucket of their notification, how many refreshed, their refresh lags (null when none refreshed) and their stale calls after the notification.",
		func(ctx context.Context, s *Server, _ query, f queries.Filter, o queries.SeriesOptions) (queries.Series[apiv1.PropagationPoint], error) {
			return s.reports.PropagationSeries(ctx, f, o)
		}),
	seriesEndpoint(reportsPrefix+"violations", "violations", "violationsSeries", "Safety violations per bucket",
		"The safety violations per bucket, as the violations report lists them.",
		func(ctx context.Context, s *Server, _ query, f queries.Filter, o queries.SeriesOptions) (queries.Series[apiv1.ViolationPoint], error) {
			return s.reports.ViolationsSeries(ctx, f, o)
		}),
	seriesEndpoint(reportsPrefix+"revision-sources", "revision-sources", "revisionSourcesSeries", "Revision sources per bucket",
		"The calls per bucket by where their client revision came from (declared, listed, inferred, unknown), and the bucket's unknown share (null in a bucket without calls). Served from the call rollups.",
		func(ctx context.Context, s *Server, _ query, f queries.Filter, o queries.SeriesOptions) (queries.Series[apiv1.RevisionSourcePoint], error) {
			return s.reports.RevisionSourcesSeries(ctx, f, o)
		}),
	seriesEndpoint(reportsPrefix+"contract-errors", "contract-errors", "contractErrorsSeries", "Contract errors and refreshes per bucket",
		"The clients' contract errors per bucket, their refreshes and the failed ones (each refresh in the bucket of its time), and the bucket's refresh failure rate (null without a refresh). The `tool` filter restricts the contract errors only. Read from the events.",
		func(ctx context.Context, s *Server, _ query, f queries.Filter, o queries.SeriesOptions) (queries.Series[apiv1.ContractErrorPoint], error) {
			return s.reports.ContractErrorsSeries(ctx, f, o)
		}),
	auditSeries(),
})

// auditSeries is the call audit's series: the audit's own parameters, and
// its scope.
func auditSeries() *endpoint {
	e := seriesEndpoint("/api/v1/audit/calls", "audit", "auditCallsSeries", "Audited calls per bucket",
		"The audited calls per bucket under the audit's search (run, session, request id and the common filter): every call, the stale ones (client and server revisions that differ), those whose side effect had started, and their external requests. Read from the audited calls; needs the `audit` scope, as the audit.",
		func(ctx context.Context, s *Server, q query, f queries.Filter, o queries.SeriesOptions) (queries.Series[apiv1.AuditPoint], error) {
			return s.reports.AuditSeries(ctx, queries.AuditFilter{Filter: f, RunID: q.get(apiv1.ParamRun), SessionID: q.get(apiv1.ParamSession), RequestID: q.get(apiv1.ParamRequestID)}, o)
		})
	e.params = withFormat(filterParams, []param{pRun, pSession, pRequestID, pStep, pGroupBy})
	e.scope = auth.ScopeAudit
	return e
}

// allEndpoints are the report endpoints and their series, as the server
// routes them and the OpenAPI document lists them.
func allEndpoints() []*endpoint {
	return append(append([]*endpoint{}, endpoints...), seriesEndpoints...)
}

// series reads the step and the groups of a series.
func (q query) series() (queries.SeriesOptions, error) {
	var step time.Duration // zero: queries.DefaultSeriesBuckets buckets
	if s := q.get(apiv1.ParamStep); s != "" {
		var err error
		if n, perr := strconv.ParseInt(s, 10, 64); perr == nil {
			step = time.Duration(n) * time.Second
		} else if step, err = parseDuration(s); err != nil {
			return queries.SeriesOptions{}, badParam(apiv1.ParamStep, "invalid step %q: %v", s, err)
		}
		if step <= 0 || step > 3650*24*time.Hour {
			return queries.SeriesOptions{}, badParam(apiv1.ParamStep, "invalid step %q: want a duration longer than zero, at most 3650d", s)
		}
	}
	var groupBy []string
	for _, v := range q.v[apiv1.ParamGroupBy] {
		for g := range strings.SplitSeq(v, ",") {
			if g = strings.TrimSpace(g); g != "" {
				groupBy = append(groupBy, g)
			}
		}
	}
	return queries.SeriesOptions{Step: step, GroupBy: groupBy}, nil
}

// pointsTable lays out points for the text formats: a column per JSON
// field, times in RFC 3339, null latencies empty.
func pointsTable[T any](title string, points []T) render.Table {
	t := reflect.TypeFor[T]()
	tb := render.Table{Title: title}
	var fields []int
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		k := t.Field(i).Type.Kind()
		tb.Columns = append(tb.Columns, render.Column{Name: name, Title: name,
			Numeric: k == reflect.Uint64 || k == reflect.Pointer})
		fields = append(fields, i)
	}
	for _, p := range points {
		v := reflect.ValueOf(p)
		row := make([]string, len(fields))
		for j, i := range fields {
			switch f := v.Field(i).Interface().(type) {
			case time.Time:
				row[j] = f.UTC().Format(time.RFC3339)
			case *float64:
				if f != nil {
					row[j] = strconv.FormatFloat(*f, 'f', -1, 64)
				}
			default:
				row[j] = fmt.Sprint(f)
			}
		}
		tb.Rows = append(tb.Rows, row)
	}
	return tb
}
