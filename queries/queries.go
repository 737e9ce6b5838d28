// Package queries holds mcpdrift's report queries: one embedded .sql file per
// report, parameters bound by the engine, rows decoded into typed structs.
// Only the database name, the family of rollups (.Coarse, see Rollups),
// which optional conditions a call needs and which dimensions a series
// groups by (.F, see shape) and how many ranges of each rollup tier its
// window reads (.R, see Plan.bind) are templated into the text; tiers.tmpl holds the fragments that several
// reports share (the union of the rollup tiers and the common filter),
// included with {{template}}.
//
// # Which table serves which report
//
//	Tools                                              recent_calls / calls_1h / calls_1d
//	StaleUsage                                         usage_1h / usage_1d (+ recent_calls), or calls_* for a client filter
//	Rejections                                         rejected_* and usage_* (or calls_*)
//	Repairs                                            usage_* (or calls_*) and repairs_1m / repairs_1h / repairs_1d
//	AdapterRetirement                                  adapted_*, usage_* (or calls_*) and adapters
//	Propagation                                        propagation_events (notices, refreshes, stale calls) and tool_revisions (list cache hints, pairs of one contract; their calls from events)
//	Violations                                         violation_candidates (violations, by kind) and adapter_call_candidates
//	Audit                                              audit_calls
//	RevisionSources                                    calls_1h / calls_1d (+ recent_calls)
//	ContractErrors                                     events (contract errors and refreshes, rare: no rollup)
//	RawStaleUsage, RawRejections, RawRepairs,
//	RawAdapterRetirement, RawRevisionSources           events (the raw fallback of the rollup reports)
//	RawPropagation, RawViolations                      events (the raw fallback of the narrow tables; RawPropagation reads tool_revisions as Propagation does)
//	ToolsSeries, StaleUsageSeries, RejectionsSeries,
//	RepairsSeries, AdapterRetirementSeries,
//	PropagationSeries, ViolationsSeries,
//	RevisionSourcesSeries, ContractErrorsSeries        the tables of their report, per bucket (series.go)
//
// Every report reads the same window (Runner.Window): exact while the
// minutely tier holds its edges, else widened to whole hours or days. The
// rollup-served reports read each part of it from the coarsest tier whose
// buckets fit (see Plan), so that their answer equals the raw table's over
// that window; the narrow and raw reports filter the events by it.
package queries

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"text/template"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/selftrace"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

//go:embed *.sql tiers.tmpl
var files embed.FS

// Sentinel errors.
var (
	// ErrInvalidFilter is returned for a filter the reports cannot run,
	// such as one without a tenant.
	ErrInvalidFilter = errors.New("invalid report filter")
	// ErrInvalidCursor is returned for a page cursor that this package did
	// not produce.
	ErrInvalidCursor = errors.New("invalid page cursor")
)

// Filter selects the events a report covers. Tenant is required; empty
// optional fields match everything.
type Filter struct {
	Tenant      string
	From, To    time.Time
	Tool        string
	Service     string
	Environment string
	// Client matches a client name ("cursor") or name@version
	// ("cursor@0.48.0").
	Client string
	// ExcludeClients removes the events of these clients, each given as a
	// name or as name@version.
	ExcludeClients []string
}

func (f Filter) validate() error {
	if f.Tenant == "" {
		return fmt.Errorf("%w: tenant must not be empty", ErrInvalidFilter)
	}
	if !f.From.Before(f.To) {
		return fmt.Errorf("%w: from (%s) must be before to (%s)", ErrInvalidFilter, f.From.Format(time.RFC3339), f.To.Format(time.RFC3339))
	}
	return nil
}

// params binds the filter with the window as given, for raw queries.
func (f Filter) params() store.Params {
	return f.paramsWindow(f.From, f.To)
}

func (f Filter) paramsWindow(from, to time.Time) store.Params {
	excl := f.ExcludeClients
	if excl == nil {
		excl = []string{}
	}
	p := store.Params{}.
		Time("from", from).
		Time("to", to).
		Strings("exclude_clients", excl)
	p.String("tenant", f.Tenant)
	p.String("tool", f.Tool)
	p.String("service", f.Service)
	p.String("environment", f.Environment)
	p.String("client", f.Client)
	return p
}

// Option configures a Runner.
type Option func(*Runner)

// WithRetentionDays tells the Runner the store's retention setting
// (schema.Options.RetentionDays), which bounds how long the hourly tier
// holds data. The default is schema.DefaultOptions().RetentionDays.
func WithRetentionDays(days int) Option { return func(r *Runner) { r.retentionDays = days } }

// WithClock sets the clock that decides which rollup tiers still hold a
// window's edges and whether a declared adapter window has ended. Tests
// pin it; the default is time.Now.
func WithClock(now func() time.Time) Option { return func(r *Runner) { r.now = now } }

// WithTracer has the Runner trace each report query with t (see package
// internal/selftrace): its name, the rollup tiers it reads and the rows it
// returned, with the store attributes (selftrace.StoreAttributes). A nil t
// traces nothing.
func WithTracer(t trace.Tracer, store ...attribute.KeyValue) Option {
	return func(r *Runner) { r.tracer, r.storeAttrs = t, store }
}

// Runner runs the reports against a store.
type Runner struct {
	tracer        trace.Tracer // nil: untraced
	storeAttrs    []attribute.KeyValue
	q             store.Querier
	database      string
	templates     map[string]*template.Template // by query name, FineSuffix included
	rendered      sync.Map                      // renderKey → store.Query
	retentionDays int
	now           func() time.Time
	changeOf      ChangeFunc       // nil: rows carry no change (WithChanges)
	sameContract  SameContractFunc // nil: every pair of revisions that differ is stale (WithSameContract)
}

// shape says which optional conditions a call of a report needs: those
// whose bound value can exclude a row. The SQL sent carries only those. A
// condition written to be vacuous when its parameter is empty (the tool
// filter as "{tool:String} is empty OR tool = {tool:String}") still costs
// the engine parsing, analysis and planning in every branch that repeats
// it, and a small report is mostly that cost.
type shape struct {
	Tool, Service, Environment bool
	// Client names a client; Exclude excludes some.
	Client, Exclude bool
	// RunID, SessionID and RequestID select audited calls.
	RunID, SessionID, RequestID bool
	// After is a page cursor; Removed says that {removed_adapters} names
	// at least one adapter (violations.sql).
	After, Removed bool
	// SameContract says that {same_contract} names at least one pair of
	// revisions that is one contract under two names, whose calls the
	// stale counts leave out (call.bindSameContract).
	SameContract bool
	// G says which dimensions a series groups by (series.go).
	G groups
}

// every is the shape with every condition: what Query returns.
var every = shape{true, true, true, true, true, true, true, true, true, true, true, allGroups}

// shape returns the conditions f needs: those of its fields that are set.
func (f Filter) shape() shape {
	return shape{Tool: f.Tool != "", Service: f.Service != "", Environment: f.Environment != "",
		Client: f.Client != "", Exclude: len(f.ExcludeClients) > 0}
}

// call is one report query as sent: the parameters it binds, and the shape
// and tier ranges its SQL is rendered for, decided where they are bound.
type call struct {
	params store.Params
	shape  shape
	ranges ranges
}

// call binds f with its window as given, for raw queries.
func (f Filter) call() call { return call{params: f.params(), shape: f.shape()} }

type renderKey struct {
	name   string
	shape  shape
	ranges ranges
}

// New renders every query for database and returns a Runner over q.
func New(q store.Querier, database string, opts ...Option) (*Runner, error) {
	shared, err := files.ReadFile("tiers.tmpl")
	if err != nil {
		return nil, fmt.Errorf("cannot read tiers.tmpl: %w", err)
	}
	base, err := template.New("tiers.tmpl").Option("missingkey=error").Funcs(template.FuncMap{"spans": inSpans, "dim": seriesDim, "list": func(s ...string) []string { return s }, "audit": auditOf}).Parse(string(shared))
	if err != nil {
		return nil, fmt.Errorf("cannot parse tiers.tmpl: %w", err)
	}
	entries, err := files.ReadDir(".")
	if err != nil {
		return nil, fmt.Errorf("cannot list queries: %w", err)
	}
	r := &Runner{
		q:             q,
		database:      database,
		templates:     map[string]*template.Template{},
		retentionDays: schema.DefaultOptions().RetentionDays,
		now:           time.Now,
	}
	for _, o := range opts {
		o(r)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".sql")
		if !ok {
			continue
		}
		raw, err := files.ReadFile(e.Name())
		if err != nil {
			return nil, fmt.Errorf("cannot read query %s: %w", e.Name(), err)
		}
		t, err := base.Clone()
		if err != nil {
			return nil, fmt.Errorf("cannot clone templates for %s: %w", e.Name(), err)
		}
		if t, err = t.New(e.Name()).Parse(string(raw)); err != nil {
			return nil, fmt.Errorf("cannot parse query %s: %w", e.Name(), err)
		}
		// Each query is rendered for the coarse rollups and for the fine
		// ones (see Rollups); a query whose text differs between the two
		// gets a second entry under name + FineSuffix. The renderings with
		// no optional condition and no tier range, and with every one, are
		// made (and so checked) here, the others on first use.
		shapes := []renderKey{{}, {shape: every, ranges: allRanges}}
		var sql [2][2]string // [coarse, fine][shapes]
		for i, coarse := range []bool{true, false} {
			for j, sh := range shapes {
				if sql[i][j], err = render(t, database, coarse, sh.shape, sh.ranges); err != nil {
					return nil, fmt.Errorf("cannot render query %s: %w", e.Name(), err)
				}
			}
		}
		names := []string{name}
		if sql[1] != sql[0] {
			names = append(names, name+FineSuffix)
		}
		for i, n := range names {
			r.templates[n] = t
			for j, sh := range shapes {
				r.rendered.Store(renderKey{n, sh.shape, sh.ranges}, store.Query{Name: n, SQL: sql[i][j]})
			}
		}
	}
	return r, nil
}

// render executes a query's template and drops its comment lines and blank
// lines: the engine would parse them on every call.
func render(t *template.Template, database string, coarse bool, sh shape, rg ranges) (string, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, struct {
		Database string
		Coarse   bool
		F        shape
		R        ranges
	}{database, coarse, sh, rg}); err != nil {
		return "", err
	}
	var out strings.Builder
	out.Grow(b.Len())
	for line := range strings.Lines(b.String()) {
		if trimmed := strings.TrimSpace(line); trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		out.WriteString(line)
	}
	return out.String(), nil
}

// query returns the named query rendered for c's shape and tier ranges.
func (r *Runner) query(name string, c call) (store.Query, error) {
	key := renderKey{name, c.shape, c.ranges}
	if q, ok := r.rendered.Load(key); ok {
		return q.(store.Query), nil
	}
	t, ok := r.templates[name]
	if !ok {
		return store.Query{}, fmt.Errorf("no query named %q", name)
	}
	sql, err := render(t, r.database, !strings.HasSuffix(name, FineSuffix), key.shape, key.ranges)
	if err != nil {
		return store.Query{}, fmt.Errorf("cannot render query %s: %w", name, err)
	}
	q := store.Query{Name: name, SQL: sql}
	r.rendered.Store(key, q)
	return q, nil
}

// Query returns the rendered SQL of the named report with every optional
// condition, for snapshot tests and EXPLAIN. A call sends only the
// conditions its parameters need (see shape).
func (r *Runner) Query(name string) (store.Query, bool) {
	q, ok := r.rendered.Load(renderKey{name, every, allRanges})
	if !ok {
		return store.Query{}, false
	}
	return q.(store.Query), true
}

func (r *Runner) run(ctx context.Context, name string, c call, dest any) (err error) {
	q, err := r.query(name, c)
	if err != nil {
		return err
	}
	if r.tracer != nil {
		var span trace.Span
		ctx, span = r.startQuery(ctx, name, c)
		defer func() { endQuery(span, dest, err) }()
	}
	if err := r.q.Query(ctx, q, c.params, dest); err != nil {
		return fmt.Errorf("cannot run report %s: %w", name, err)
	}
	return nil
}

// startQuery starts the span of the report query name, called as c.
func (r *Runner) startQuery(ctx context.Context, name string, c call) (context.Context, trace.Span) {
	var tiers []string
	for t := TierMinute; t <= TierDay; t++ {
		if c.ranges[t] > 0 || c.ranges[t+3] > 0 {
			tiers = append(tiers, t.String())
		}
	}
	attrs := append([]attribute.KeyValue{selftrace.KeyQuery.String(name), semconv.DBOperationName("SELECT")}, r.storeAttrs...)
	if tiers != nil {
		attrs = append(attrs, selftrace.KeyTiers.StringSlice(tiers))
	}
	return r.tracer.Start(ctx, "report query", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endQuery ends a report query's span with the rows decoded into dest, a
// pointer to a slice. The status says the query failed, not why: the
// store's message may quote the bound values.
func endQuery(span trace.Span, dest any, err error) {
	if v := reflect.ValueOf(dest); err == nil && v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Slice {
		span.SetAttributes(selftrace.KeyRows.Int(v.Elem().Len()))
	}
	if err != nil {
		span.SetStatus(codes.Error, "report query failed")
	}
	span.End()
}

// Tools lists the tools called in the window with their revisions and
// adapters. It is served from the call rollups.
func (r *Runner) Tools(ctx context.Context, f Filter) ([]apiv1.ToolRow, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	rows := []apiv1.ToolRow{}
	if err := r.run(ctx, "tools", r.Plan(f.From, f.To).bind(f), &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// auditSource is what tiers.tmpl's "audit_where" renders: the query's data
// and the table, events or audit_calls, whose audited calls it filters.
type auditSource struct {
	Q     any
	Table string
}

func auditOf(q any, table string) auditSource { return auditSource{Q: q, Table: table} }
