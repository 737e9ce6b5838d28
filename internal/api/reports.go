package api

import (
	"context"
	"reflect"
	"slices"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/render"
	"github.com/mcpdrift/mcpdrift/queries"
)

// result is what an endpoint computed, ready to be written in any format.
type result struct {
	body     any
	report   string
	from, to time.Time
	next     string
	// table lays the rows out for a text format.
	table func(render.Format) render.Table
	// subtitle adds to the window line of text formats.
	subtitle string
}

// endpoint is one report endpoint: its route, what the OpenAPI document
// says of it, its parameters, and how it runs.
type endpoint struct {
	path        string
	report      string
	operationID string
	tag         string
	summary     string
	description string
	params      []param
	// rowType is the type of the rows; paged and thresholds shape the body.
	rowType    reflect.Type
	paged      bool
	thresholds bool
	// series endpoints answer an apiv1.SeriesBody of rowType.
	series bool
	// scope is what a token needs to use the endpoint.
	scope auth.Scope
	run   func(ctx context.Context, s *Server, q query, tenant string) (result, error)
}

const reportsPrefix = "/api/v1/reports/"

func withFormat(ps ...[]param) []param {
	var out []param
	for _, p := range ps {
		out = append(out, p...)
	}
	return append(out, pFormat, pWidth)
}

// endpoints lists the report endpoints in the order the OpenAPI document
// shows them.
var endpoints = withScopes([]*endpoint{
	{
		path: "/api/v1/tools", report: "tools", operationID: "listTools", tag: "reports",
		summary:     "Tools called in the window",
		description: "The tools called in the window with the revisions clients planned with, the revisions servers executed, the adapters that normalised calls, the call count and first/last seen. Served from the call rollups.",
		params:      withFormat(filterParams),
		rowType:     reflect.TypeFor[apiv1.ToolRow](),
		run: func(ctx context.Context, s *Server, q query, tenant string) (result, error) {
			f, err := q.filter(tenant, false)
			if err != nil {
				return result{}, err
			}
			rows, err := s.reports.Tools(ctx, f)
			if err != nil {
				return result{}, err
			}
			return result{body: apiv1.ReportBody[apiv1.ToolRow]{Report: "tools", From: f.From, To: f.To, Rows: rows},
				report: "tools", from: f.From, to: f.To,
				table: func(ff render.Format) render.Table { return render.Tools(rows, ff) }}, nil
		},
	},
	{
		path: reportsPrefix + "stale-usage", report: "stale-usage", operationID: "staleUsage", tag: "reports",
		summary:     "Stale-revision usage",
		description: "Per tool × client revision × server revision: calls, their outcomes (current, normalized, rejected, removed, failed), distinct sessions, runs and clients, first and last seen, and the trend against the equal period before the window. Served from the call rollups; the window is exact while the minutely tier holds its edges (the last two days), else whole hours, as every report reads it and states it.",
		params:      withFormat(filterParams),
		rowType:     reflect.TypeFor[apiv1.StaleUsageRow](),
		run: func(ctx context.Context, s *Server, q query, tenant string) (result, error) {
			return simple(ctx, q, tenant, "stale-usage", s.reports.StaleUsage, render.StaleUsage)
		},
	},
	{
		path: reportsPrefix + "rejections", report: "rejections", operationID: "rejections", tag: "reports",
		summary:     "Rejected calls",
		description: "Rejected calls by tool, revisions, outcome, error code and client, with the tool's rejection rate and the rejected calls whose side effect had already started (each a safety violation). Served from the call rollups.",
		params:      withFormat(filterParams),
		rowType:     reflect.TypeFor[apiv1.RejectionRow](),
		run: func(ctx context.Context, s *Server, q query, tenant string) (result, error) {
			return simple(ctx, q, tenant, "rejections", s.reports.Rejections, render.Rejections)
		},
	},
	{
		path: reportsPrefix + "repairs", report: "repairs", operationID: "repairs", tag: "reports",
		summary:     "Client repairs after stale rejections",
		description: "Per tool: stale rejections, retries and amplification (retries per stale rejection), repair actions (refresh and retry, model repair, human approval, abandon), the automatic repairs' success rate and the time to repair. Served from the call and repair rollups.",
		params:      withFormat(filterParams),
		rowType:     reflect.TypeFor[apiv1.RepairRow](),
		run: func(ctx context.Context, s *Server, q query, tenant string) (result, error) {
			return simple(ctx, q, tenant, "repairs", s.reports.Repairs, render.Repairs)
		},
	},
	{
		path: reportsPrefix + "adapter-retirement", report: "adapter-retirement", operationID: "adapterRetirement", tag: "reports",
		summary: "Can each adapter be retired?",
		description: "Every compatibility adapter, declared by a server or seen on calls, with its remaining use in the window and a verdict: " +
			"`ready` (within the thresholds, no long-running or privileged caller), `blocked` (over a threshold) or `at_risk` (within the thresholds, but some callers are long-running sessions or destructive/credentialed), " +
			"with the reason, the blocking clients and a what-if: the calls that would have been rejected without the adapter. Excluded clients are left out of every figure.",
		params:     withFormat(filterParams, []param{pWindow, pMaxCalls, pMaxShare, pLongSession, pUnknownCallers, pAdapter, pTopClients}),
		rowType:    reflect.TypeFor[apiv1.AdapterRow](),
		thresholds: true,
		run: func(ctx context.Context, s *Server, q query, tenant string) (result, error) {
			f, err := q.filter(tenant, true)
			if err != nil {
				return result{}, err
			}
			o, th, err := q.retirement()
			if err != nil {
				return result{}, err
			}
			rows, err := s.reports.AdapterRetirement(ctx, f, o)
			if err != nil {
				return result{}, err
			}
			if id := q.get(apiv1.ParamAdapter); id != "" {
				rows = slices.DeleteFunc(rows, func(r apiv1.AdapterRow) bool { return r.AdapterID != id })
			}
			return result{
				body:     apiv1.ReportBody[apiv1.AdapterRow]{Report: "adapter-retirement", From: f.From, To: f.To, Rows: rows, Thresholds: &th},
				report:   "adapter-retirement",
				from:     f.From,
				to:       f.To,
				subtitle: apiclient.DescribeThresholds(th),
				table:    func(ff render.Format) render.Table { return render.AdapterRetirement(rows, ff) },
			}, nil
		},
	},
	{
		path: reportsPrefix + "propagation", report: "propagation", operationID: "propagation", tag: "reports",
		summary:     "Notification propagation",
		description: "Per tool, how `notifications/tools/list_changed` reached the notified sessions: sessions that refreshed and never refreshed, the median, p95 and maximum lag to the first refresh, and the calls sent on an old revision after the notification. Computed from the raw events.",
		params:      withFormat(filterParams),
		rowType:     reflect.TypeFor[apiv1.PropagationRow](),
		run: func(ctx context.Context, s *Server, q query, tenant string) (result, error) {
			return simple(ctx, q, tenant, "propagation", s.reports.Propagation, render.Propagation)
		},
	},
	{
		path: reportsPrefix + "violations", report: "violations", operationID: "violations", tag: "reports",
		summary:     "Safety violations",
		description: "Rejected calls whose side effect had started (`side_effect_rejected`), calls validated under one revision and executed under another (`mixed_revision`), successful calls to a removed tool (`removed_tool_success`) and automatic retries across a semantic or authority change (`retry_across_change`), oldest first, one page at a time. Computed from the raw events.",
		params:      withFormat(filterParams, []param{pLimit, pCursor}),
		rowType:     reflect.TypeFor[apiv1.ViolationRow](),
		paged:       true,
		run: func(ctx context.Context, s *Server, q query, tenant string) (result, error) {
			f, err := q.filter(tenant, false)
			if err != nil {
				return result{}, err
			}
			p, err := q.page()
			if err != nil {
				return result{}, err
			}
			page, err := s.reports.Violations(ctx, f, p)
			if err != nil {
				return result{}, err
			}
			return result{
				body:   apiv1.ReportBody[apiv1.ViolationRow]{Report: "violations", From: f.From, To: f.To, Rows: page.Rows, Next: page.Next},
				report: "violations", from: f.From, to: f.To, next: page.Next,
				table: func(ff render.Format) render.Table { return render.Violations(page.Rows, ff) },
			}, nil
		},
	},
	{
		path: reportsPrefix + "revision-sources", report: "revision-sources", operationID: "revisionSources", tag: "reports",
		summary:     "Where the client revisions came from",
		description: "Per tool and client (name@version): the calls, and how many of them carried a client revision that the client declared (or did not say where it came from: read as declared), that the server listed to the session, that the server inferred from the arguments, or none at all (unknown, never read as current), with the unknown share: how much of the traffic the other reports' verdicts rest on each source. Served from the call rollups.",
		params:      withFormat(filterParams),
		rowType:     reflect.TypeFor[apiv1.RevisionSourceRow](),
		run: func(ctx context.Context, s *Server, q query, tenant string) (result, error) {
			return simple(ctx, q, tenant, "revision-sources", s.reports.RevisionSources, render.RevisionSources)
		},
	},
	{
		path: reportsPrefix + "contract-errors", report: "contract-errors", operationID: "contractErrors", tag: "reports",
		summary:     "Client contract errors and refreshes",
		description: "Per client (name@version), the client's half of the output contract: its contract errors (`dev.mcpdrift.contract_error`: a dependent call needed an output field and did not get it), by tool and field, and its tools/list refreshes (a distinct session and time: one refresh emits an event per changed tool), the failed ones and the failure rate (null without a refresh), its sessions and when it was last seen. The `tool` filter restricts the contract errors only: a refresh re-lists every tool, so a client's refreshes are counted whole. Read from the events, where both kinds are rare.",
		params:      withFormat(filterParams),
		rowType:     reflect.TypeFor[apiv1.ContractErrorRow](),
		run: func(ctx context.Context, s *Server, q query, tenant string) (result, error) {
			return simple(ctx, q, tenant, "contract-errors", s.reports.ContractErrors, render.ContractErrors)
		},
	},
	{
		path: "/api/v1/audit/calls", report: "audit", operationID: "auditCalls", tag: "audit",
		summary:     "Call audit",
		description: "One row per `tools/call`: raw and normalised arguments, handler build, approval decision, external target, revisions, run and session; searched by run, session, request id and the common filter, oldest first, one page at a time. Read from the audited calls, whose arguments are kept for the audit retention (at most the retention). The rows carry call arguments (redacted at ingest): with tokens, this endpoint needs a token with the `audit` scope; the `read` scope is refused with 403.",
		params:      withFormat(filterParams, []param{pRun, pSession, pRequestID, pLimit, pCursor}),
		rowType:     reflect.TypeFor[apiv1.AuditRow](),
		paged:       true,
		scope:       auth.ScopeAudit,
		run: func(ctx context.Context, s *Server, q query, tenant string) (result, error) {
			f, err := q.filter(tenant, false)
			if err != nil {
				return result{}, err
			}
			p, err := q.page()
			if err != nil {
				return result{}, err
			}
			af := queries.AuditFilter{Filter: f, RunID: q.get(apiv1.ParamRun), SessionID: q.get(apiv1.ParamSession), RequestID: q.get(apiv1.ParamRequestID)}
			page, err := s.reports.Audit(ctx, af, p)
			if err != nil {
				return result{}, err
			}
			return result{
				body:   apiv1.ReportBody[apiv1.AuditRow]{Report: "audit", From: f.From, To: f.To, Rows: page.Rows, Next: page.Next},
				report: "audit", from: f.From, to: f.To, next: page.Next,
				table: func(ff render.Format) render.Table { return render.Audit(page.Rows, ff) },
			}, nil
		},
	},
})

// withScopes gives the endpoints that name no scope the read scope.
func withScopes(es []*endpoint) []*endpoint {
	for _, e := range es {
		if e.scope == "" {
			e.scope = auth.ScopeRead
		}
	}
	return es
}

// simple runs a report that takes only the common filter.
func simple[T any](ctx context.Context, q query, tenant, name string,
	run func(context.Context, queries.Filter) ([]T, error), lay func([]T, render.Format) render.Table,
) (result, error) {
	f, err := q.filter(tenant, false)
	if err != nil {
		return result{}, err
	}
	rows, err := run(ctx, f)
	if err != nil {
		return result{}, err
	}
	return result{
		body:   apiv1.ReportBody[T]{Report: name, From: f.From, To: f.To, Rows: rows},
		report: name, from: f.From, to: f.To,
		table: func(ff render.Format) render.Table { return lay(rows, ff) },
	}, nil
}

// ReportNames lists the names of the reports, as `mcpdrift report` takes them.
func ReportNames() []string {
	names := make([]string, len(endpoints))
	for i, e := range endpoints {
		names[i] = e.report
	}
	return names
}

// ReportPath returns the API path of the named report.
func ReportPath(name string) (string, bool) {
	for _, e := range endpoints {
		if e.report == name {
			return e.path, true
		}
	}
	return "", false
}

// ReportParams returns the query parameters the named report takes.
func ReportParams(name string) []string {
	for _, e := range endpoints {
		if e.report == name {
			out := make([]string, len(e.params))
			for i, p := range e.params {
				out[i] = p.name
			}
			return out
		}
	}
	return nil
}
