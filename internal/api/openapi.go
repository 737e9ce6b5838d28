package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/retirement"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/queries"
)

// OpenAPI returns the OpenAPI 3.1 document of the API. It is built from the
// same endpoint and parameter tables the handlers use, and the response
// schemas from the Go types the handlers encode, so it cannot leave out a
// route, a parameter or a field.
func OpenAPI(version string) map[string]any {
	g := &schemaGen{schemas: map[string]any{}}
	problemRef := g.of(reflect.TypeFor[apiv1.Problem]())
	problemContent := map[string]any{"application/problem+json": map[string]any{"schema": problemRef}}
	responses := map[string]any{
		"BadRequest": map[string]any{
			"description": "A parameter is invalid or unknown, or the report is unknown; `parameter` names it.",
			"content":     problemContent,
		},
		"NotAcceptable": map[string]any{
			"description": "The Accept header allows none of the formats the endpoint serves.",
			"content":     problemContent,
		},
		"InternalError": map[string]any{
			"description": "The report could not be computed; the cause is in the server's log.",
			"content":     problemContent,
		},
		"Unauthorized": map[string]any{
			"description": "The server runs with tokens and the request carries no valid bearer token.",
			"headers":     map[string]any{"WWW-Authenticate": map[string]any{"schema": map[string]any{"type": "string"}, "description": "`Bearer realm=\"mcpdrift\"`, with `error=\"invalid_token\"` for a token the server does not know."}},
			"content":     problemContent,
		},
		"Forbidden": map[string]any{
			"description": "The token lacks the scope the endpoint needs (`read` for reports, `audit` for the call audit, `drifttest` to run the drift test).",
			"content":     problemContent,
		},
		"Unavailable": map[string]any{
			"description": "The report did not finish in time, or the store is unavailable; retry after `Retry-After` seconds.",
			"headers":     map[string]any{"Retry-After": map[string]any{"schema": map[string]any{"type": "integer"}, "description": "Seconds to wait before retrying."}},
			"content":     problemContent,
		},
	}
	ref := func(kind, name string) map[string]any {
		return map[string]any{"$ref": "#/components/" + kind + "/" + name}
	}

	parameters := map[string]any{}
	paths := map[string]any{}
	for _, e := range allEndpoints() {
		var ps []any
		for _, p := range e.params {
			parameters[p.name] = p.openAPI()
			ps = append(ps, ref("parameters", p.name))
		}
		body := g.report(e)
		text := func(desc string) map[string]any {
			return map[string]any{"schema": map[string]any{"type": "string"}, "x-description": desc}
		}
		ok := map[string]any{
			"description": "The report.",
			"content": map[string]any{
				"application/json": map[string]any{"schema": body},
				"text/csv":         text("Every column, a header row of field names first, RFC 4180 with CRLF line ends."),
				"text/markdown":    text("A GitHub-flavoured Markdown table of the main columns under a heading."),
				"text/plain":       text("An aligned text table of the main columns."),
			},
		}
		if e.paged {
			ok["headers"] = map[string]any{"Link": map[string]any{
				"description": "`<…&cursor=…>; rel=\"next\"` when there is a next page.",
				"schema":      map[string]any{"type": "string"},
			}}
		}
		paths[e.path] = map[string]any{"get": map[string]any{
			"operationId": e.operationID,
			"tags":        []string{e.tag},
			"summary":     e.summary,
			"description": e.description,
			"parameters":  ps,
			"security":    []any{map[string]any{"bearer": []string{string(e.scope)}}},
			"responses": map[string]any{
				"200": ok,
				"400": ref("responses", "BadRequest"),
				"401": ref("responses", "Unauthorized"),
				"403": ref("responses", "Forbidden"),
				"406": ref("responses", "NotAcceptable"),
				"500": ref("responses", "InternalError"),
				"503": ref("responses", "Unavailable"),
			},
		}}
	}
	paths[checkPath] = g.checkOperation(checkEndpoint, parameters, ref, problemContent)
	paths[driftTestPath] = g.driftTestOperations(driftTestEndpoint, ref, problemContent)
	paths[revisionsEndpoint.path] = g.registryOperation(revisionsEndpoint, reflect.TypeFor[apiv1.RevisionsBody](), "The tool's revisions, per service and environment.", parameters, ref, problemContent)
	paths[diffEndpoint.path] = g.registryOperation(diffEndpoint, reflect.TypeFor[registry.Diff](), "The change between the two revisions.", parameters, ref, problemContent)
	paths[deployedEndpoint.path] = g.registryOperation(deployedEndpoint, reflect.TypeFor[registry.Deployed](), "The tools the service advertises now.", parameters, ref, problemContent)
	paths[servicesEndpoint.path] = g.registryOperation(servicesEndpoint, reflect.TypeFor[apiclient.ServicesBody](), "The services that advertised tools, per environment.", parameters, ref, problemContent)
	health := g.of(reflect.TypeFor[apiv1.Health]())
	paths["/healthz"] = map[string]any{"get": map[string]any{
		"operationId": "healthz", "tags": []string{"health"}, "summary": "Liveness", "security": []any{},
		"description": "Answers while the process serves HTTP, with its version.",
		"responses": map[string]any{"200": map[string]any{
			"description": "The process is alive.", "content": map[string]any{"application/json": map[string]any{"schema": health}},
		}},
	}}
	paths["/readyz"] = map[string]any{"get": map[string]any{
		"operationId": "readyz", "tags": []string{"health"}, "summary": "Readiness", "security": []any{},
		"description": "Answers 200 once the store serves queries, 503 otherwise.",
		"responses": map[string]any{
			"200": map[string]any{"description": "Ready.", "content": map[string]any{"application/json": map[string]any{"schema": health}}},
			"503": ref("responses", "Unavailable"),
		},
	}}
	paths["/api/v1/openapi.json"] = map[string]any{"get": map[string]any{
		"operationId": "openapi", "tags": []string{"meta"}, "summary": "This document", "security": []any{},
		"responses": map[string]any{"200": map[string]any{
			"description": "The OpenAPI 3.1 document of the API.",
			"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}},
		}},
	}}

	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "mcpdrift API",
			"version": version,
			"license": map[string]any{"name": "Apache-2.0", "identifier": "Apache-2.0"},
			"description": "Reports on MCP tool schema drift: stale-revision usage, rejections, repairs, adapter retirement, " +
				"notification propagation, safety violations, where the client revisions came from, the clients' contract errors and the call audit. Every report takes a window (`from`, `to`) and " +
				"filters; each is served as JSON, CSV, Markdown or a text table (`format`, or the Accept header). Errors are " +
				"RFC 9457 problem documents naming the parameter at fault. Every request is bound to one tenant: " +
				"with tokens, the tenant of the bearer token (no parameter or header chooses it); without, the server's single local tenant.",
		},
		// The servers are wherever -api.listen puts one; the variables'
		// defaults are the flag's default.
		"servers": []any{map[string]any{
			"url":         "{scheme}://{host}",
			"description": "An mcpdrift API listener (serve or api): -api.listen, with -api.tls.* for https.",
			"variables": map[string]any{
				"scheme": map[string]any{"default": "http", "enum": []string{"http", "https"}},
				"host":   map[string]any{"default": DefaultConfig().Listen, "description": "host:port of -api.listen"},
			},
		}},
		"jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
		"tags": []any{
			map[string]any{"name": "reports", "description": "Drift reports."},
			map[string]any{"name": "audit", "description": "Per-call audit, with arguments."},
			map[string]any{"name": "registry", "description": "The registry of advertised tool definitions."},
			map[string]any{"name": "drifttest", "description": "The drift test, run by the server against an MCP server: it sends real calls."},
			map[string]any{"name": "health", "description": "Liveness and readiness."},
			map[string]any{"name": "meta", "description": "The API's own description."},
		},
		"paths": paths,
		"components": map[string]any{
			"schemas":    g.schemas,
			"parameters": parameters,
			"responses":  responses,
			"securitySchemes": map[string]any{"bearer": map[string]any{
				"type": "http", "scheme": "bearer",
				"description": "A token made by `mcpdrift token create`, bound to one tenant, with the scopes `read` (reports), `audit` (call audit) and/or `drifttest` (running the drift test, which sends real calls). Required when the server runs with a token file.",
			}},
		},
	}
}

// checkOperation documents POST /api/v1/check, registering its
// parameters.
func (g *schemaGen) checkOperation(e *endpoint, parameters map[string]any, ref func(kind, name string) map[string]any, problemContent map[string]any) map[string]any {
	ps := []any{}
	for _, p := range e.params {
		parameters[p.name] = p.openAPI()
		ps = append(ps, ref("parameters", p.name))
	}
	return map[string]any{"post": map[string]any{
		"operationId": e.operationID,
		"tags":        []string{e.tag},
		"summary":     e.summary,
		"description": e.description,
		"parameters":  ps,
		"security":    []any{map[string]any{"bearer": []string{string(e.scope)}}},
		"requestBody": map[string]any{
			"required": true,
			"content":  map[string]any{"application/json": map[string]any{"schema": g.of(reflect.TypeFor[apiv1.CheckRequest]())}},
		},
		"responses": map[string]any{
			"200": map[string]any{
				"description": "The check, tool by tool, weighed by usage: JSON, or the Markdown `mcpdrift check` prints (for a pull request) when Accept names text/markdown before JSON.",
				"content": map[string]any{
					"application/json": map[string]any{"schema": g.of(reflect.TypeFor[apiclient.CheckBody]())},
					"text/markdown":    map[string]any{"schema": map[string]any{"type": "string"}},
				},
			},
			"400": ref("responses", "BadRequest"),
			"401": ref("responses", "Unauthorized"),
			"403": ref("responses", "Forbidden"),
			"413": map[string]any{"description": "The request is larger than two tools/list documents may be.", "content": problemContent},
			"500": ref("responses", "InternalError"),
			"503": ref("responses", "Unavailable"),
		},
	}}
}

// driftTestOperations documents GET and POST /api/v1/drifttest.
func (g *schemaGen) driftTestOperations(e *endpoint, ref func(kind, name string) map[string]any, problemContent map[string]any) map[string]any {
	security := []any{map[string]any{"bearer": []string{string(e.scope)}}}
	off := map[string]any{"description": "The endpoint is off: the server was started without -api.drifttest.allow-host; the detail says how to turn it on.", "content": problemContent}
	return map[string]any{
		"get": map[string]any{
			"operationId": "driftTestSettings",
			"tags":        []string{e.tag},
			"summary":     "Whether this token may run a drift test here, and the limits",
			"description": "Whether POST /api/v1/drifttest is on and the request's token has the drifttest scope (`detail` says why not, and what to change); " +
				"to a token that may run one, the hosts it may call. Any token of the tenant may ask: it holds no tenant's data.",
			"security": []any{map[string]any{"bearer": []string{}}},
			"responses": map[string]any{
				"200": map[string]any{"description": "The settings.", "content": map[string]any{"application/json": map[string]any{"schema": g.of(reflect.TypeFor[DriftTestSettings]())}}},
				"401": ref("responses", "Unauthorized"),
			},
		},
		"post": map[string]any{
			"operationId": e.operationID,
			"tags":        []string{e.tag},
			"summary":     e.summary,
			"description": e.description,
			"security":    security,
			"requestBody": map[string]any{
				"required": true,
				"content":  map[string]any{"application/json": map[string]any{"schema": g.of(reflect.TypeFor[DriftTestRequest]())}},
			},
			"responses": map[string]any{
				"200": map[string]any{
					"description": "The calls and their verdicts: JSON, or the Markdown `mcpdrift drifttest` prints (for a pull request) when Accept names text/markdown before JSON. A failing call is a 200 with `pass` false.",
					"content": map[string]any{
						"application/json": map[string]any{"schema": g.of(reflect.TypeFor[DriftTestBody]())},
						"text/markdown":    map[string]any{"schema": map[string]any{"type": "string"}},
					},
				},
				"400": map[string]any{"description": "The body is invalid, the server's host is not allowed, or the old list cannot be had; nothing was sent.", "content": problemContent},
				"401": ref("responses", "Unauthorized"),
				"403": ref("responses", "Forbidden"),
				"404": off,
				"413": map[string]any{"description": "The request is larger than two tools/list documents may be.", "content": problemContent},
				"429": map[string]any{"description": "A drift test is already running in this process; retry after `Retry-After` seconds.",
					"headers": map[string]any{"Retry-After": map[string]any{"schema": map[string]any{"type": "integer"}}}, "content": problemContent},
				"500": ref("responses", "InternalError"),
				"502": map[string]any{"description": "The server under test could not be reached or listed (or redirected to a host not allowed).", "content": problemContent},
				"503": ref("responses", "Unavailable"),
				"504": map[string]any{"description": "The drift test did not finish within -api.drifttest.timeout.", "content": problemContent},
			},
		},
	}
}

// registryOperation documents a GET endpoint of the registry: the tool in
// the path when it takes one, the endpoint's parameters registered, a
// JSON body of type body.
func (g *schemaGen) registryOperation(e *endpoint, body reflect.Type, desc string, parameters map[string]any, ref func(kind, name string) map[string]any, problemContent map[string]any) map[string]any {
	ps := []any{}
	responses := map[string]any{
		"200": map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": g.of(body)}}},
		"400": ref("responses", "BadRequest"),
		"401": ref("responses", "Unauthorized"),
		"403": ref("responses", "Forbidden"),
		"500": ref("responses", "InternalError"),
		"503": ref("responses", "Unavailable"),
	}
	if strings.Contains(e.path, "{tool}") {
		parameters["tool_path"] = map[string]any{"name": "tool", "in": "path", "required": true, "description": "The tool's name (`gen_ai.tool.name`).", "schema": strSchema}
		ps = append(ps, ref("parameters", "tool_path"))
		responses["404"] = map[string]any{"description": "The registry does not hold a revision asked for.", "content": problemContent}
	}
	for _, p := range e.params {
		parameters[p.name] = p.openAPI()
		ps = append(ps, ref("parameters", p.name))
	}
	return map[string]any{"get": map[string]any{
		"operationId": e.operationID,
		"tags":        []string{e.tag},
		"summary":     e.summary,
		"description": e.description,
		"parameters":  ps,
		"security":    []any{map[string]any{"bearer": []string{string(e.scope)}}},
		"responses":   responses,
	}}
}

func (p param) openAPI() map[string]any {
	o := map[string]any{"name": p.name, "in": "query", "required": false, "description": p.desc, "schema": p.schema}
	if p.repeat {
		o["schema"] = map[string]any{"type": "array", "items": p.schema}
		o["style"] = "form"
		o["explode"] = true
	}
	if p.example != "" {
		o["example"] = p.example
		if p.repeat {
			o["example"] = []string{p.example}
		}
	}
	return o
}

// schemaGen builds JSON Schemas (draft 2020-12, as OpenAPI 3.1 uses) for Go
// types, registering named structs under components/schemas.
type schemaGen struct {
	schemas map[string]any
}

// report returns the schema of e's apiv1.ReportBody, registered as
// <OperationID>Report.
func (g *schemaGen) report(e *endpoint) map[string]any {
	name := strings.ToUpper(e.operationID[:1]) + e.operationID[1:] + "Report"
	props := map[string]any{
		"report": map[string]any{"type": "string", "const": e.report, "description": "The report's name."},
		"from":   map[string]any{"type": "string", "format": "date-time", "description": "Start of the window (inclusive)."},
		"to":     map[string]any{"type": "string", "format": "date-time", "description": "End of the window (exclusive)."},
		"rows":   map[string]any{"type": "array", "items": g.of(e.rowType)},
	}
	required := []string{"report", "from", "to", "rows"}
	if e.paged {
		props["next"] = map[string]any{"type": "string", "description": "Cursor of the next page; absent on the last page."}
	}
	if e.series {
		props["from"] = map[string]any{"type": "string", "format": "date-time", "description": "Start of the window the report reads (inclusive): the first bucket is cut by it."}
		props["to"] = map[string]any{"type": "string", "format": "date-time", "description": "End of the window the report reads (exclusive): the last bucket is cut by it."}
		props["step_seconds"] = map[string]any{"type": "integer", "minimum": 60, "description": "The buckets' length in seconds: the step asked for, rounded up to the rollup tiers' resolution."}
		props["group_by"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "The dimensions the points are split by."}
		props["rows"] = map[string]any{"type": "array", "items": g.of(e.rowType), "description": "One point per bucket and group, ordered by group and time."}
		required = append(required, "step_seconds", "group_by")
	}
	if e.thresholds {
		props["thresholds"] = g.of(reflect.TypeFor[apiv1.Thresholds]())
		required = append(required, "thresholds")
	}
	g.schemas[name] = map[string]any{
		"type": "object", "description": e.summary + ".", "properties": props, "required": required,
		"additionalProperties": false,
	}
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

func (g *schemaGen) of(t reflect.Type) map[string]any {
	switch {
	case t == reflect.TypeFor[time.Time]():
		return map[string]any{"type": "string", "format": "date-time"}
	case t == reflect.TypeFor[apiv1.EventID]():
		return map[string]any{"type": "string", "pattern": "^[0-9]{1,20}$",
			"description": "A 64-bit id as decimal digits: a string, since JSON readers lose precision above 2^53."}
	case t == reflect.TypeFor[json.RawMessage]():
		return map[string]any{"description": "Any JSON value."}
	case t.Kind() == reflect.Pointer:
		inner := g.of(t.Elem())
		if typ, ok := inner["type"].(string); ok {
			out := map[string]any{}
			for k, v := range inner {
				out[k] = v
			}
			out["type"] = []string{typ, "null"}
			return out
		}
		return map[string]any{"oneOf": []any{inner, map[string]any{"type": "null"}}}
	case t.Kind() == reflect.Struct:
		if _, ok := g.schemas[t.Name()]; !ok {
			g.schemas[t.Name()] = nil // reserve: breaks cycles
			g.schemas[t.Name()] = g.object(t)
		}
		return map[string]any{"$ref": "#/components/schemas/" + t.Name()}
	case t.Kind() == reflect.Slice:
		return map[string]any{"type": "array", "items": g.of(t.Elem())}
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		return map[string]any{"type": "object", "additionalProperties": g.of(t.Elem())}
	case t.Kind() == reflect.Interface:
		return map[string]any{"description": "Any JSON value."}
	case t.Kind() == reflect.String:
		return map[string]any{"type": "string"}
	case t.Kind() == reflect.Bool:
		return map[string]any{"type": "boolean"}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return map[string]any{"type": "integer"}
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return map[string]any{"type": "number"}
	}
	panic("openapi: no schema for " + t.String())
}

// field is a struct field as encoding/json sees it, with the struct that
// declares it (whose name keys fieldDocs and enums).
type field struct {
	reflect.StructField
	owner reflect.Type
}

// jsonFields lists t's fields as encoding/json writes them: an embedded
// struct without a JSON name is flattened into its fields
// (drifttest.Result embeds Call, registry.Diff apiv1.RevisionChange).
func jsonFields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		out = append(out, field{f, t})
	}
	return out
}

func (g *schemaGen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for _, f := range jsonFields(t) {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s := g.of(f.Type)
		key := f.owner.Name() + "." + name
		if d, ok := fieldDocs[key]; ok || enums[key] != nil {
			// A $ref takes no siblings in older tools: wrap it.
			if _, isRef := s["$ref"]; isRef {
				s = map[string]any{"allOf": []any{s}}
			}
			if ok {
				s["description"] = d
			}
			if e := enums[key]; e != nil {
				vals := make([]any, 0, len(e)+1)
				for _, v := range e {
					vals = append(vals, v)
				}
				if f.Type.Kind() == reflect.Pointer {
					vals = append(vals, nil) // a nullable enum takes null too
				}
				s["enum"] = vals
			}
		}
		props[name] = s
		if !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
	}
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if d, ok := typeDocs[t.Name()]; ok {
		o["description"] = d
	}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// wire returns the wire values of an otelschema enumeration, "" (not set)
// first.
func wire[T ~uint8](str func(T) string) []string {
	out := []string{""}
	for i := T(1); str(i) != ""; i++ {
		out = append(out, str(i))
	}
	return out
}

var (
	outcomes    = wire(otelschema.Outcome.String)
	privileges  = wire(otelschema.Privilege.String)
	approvals   = wire(otelschema.Approval.String)
	changeClass = wire(otelschema.ChangeClass.String)
)

// enums constrain fields to their values, keyed Type.json_name.
var enums = map[string][]string{
	"AdapterRow.verdict":               {retirement.VerdictReady, retirement.VerdictBlocked, retirement.VerdictAtRisk},
	"AdapterRow.max_privilege":         privileges,
	"AdapterRow.change_class":          changeClass,
	"AdapterRow.registry_change_class": changeClass,
	"StaleUsageRow.change_class":       changeClass,
	"RejectionRow.change_class":        changeClass,
	"ClientUsage.max_privilege":        privileges,
	"StaleUsageRow.trend":              {queries.TrendNew, queries.TrendRising, queries.TrendFalling, queries.TrendFlat},
	"RejectionRow.outcome":             {"rejected_stale", "rejected_incompatible", "rejected_invalid", "removed"},
	"ViolationRow.kind":                {queries.ViolationSideEffectRejected, queries.ViolationMixedRevision, queries.ViolationRemovedToolSuccess, queries.ViolationRetryAcrossChange},
	"ViolationRow.outcome":             outcomes,
	"ViolationRow.change_class":        changeClass,
	"AuditRow.outcome":                 outcomes,
	"AuditRow.approval":                approvals,
	"AuditRow.privilege":               privileges,
	"Health.status":                    {"ok", "ready"},
	"Change.status":                    {string(toolchange.StatusUnchanged), string(toolchange.StatusChanged), string(toolchange.StatusAdded), string(toolchange.StatusRemoved)},
	"Change.class":                     changeClass,
	"Change.verdict":                   {string(toolchange.VerdictSafe), string(toolchange.VerdictNeedsDecision), string(toolchange.VerdictViolation)},
	"RevisionChange.class":             changeClass,
	"RevisionChange.verdict":           {string(toolchange.VerdictSafe), string(toolchange.VerdictNeedsDecision), string(toolchange.VerdictViolation)},
	"Compatibility.answer":             {string(toolchange.AnswerYes), string(toolchange.AnswerNo), string(toolchange.AnswerCannotDecide)},
	"Finding.area":                     {string(toolchange.AreaTool), string(toolchange.AreaInput), string(toolchange.AreaOutput), string(toolchange.AreaAnnotations)},
	"Finding.class":                    changeClass,
	"Usage.max_privilege":              privileges,
	"Problem.type":                     {"about:blank"},
}

var typeDocs = map[string]string{
	"ToolRow":             "One tool called in the window.",
	"StaleUsageRow":       "The calls of one tool by clients planning with one revision while the server executed one revision.",
	"RejectionRow":        "The rejected calls (and the calls to a removed tool, outcome removed) of one tool, revision pair, outcome, error code and client.",
	"RepairRow":           "What happened after the stale rejections of one tool.",
	"AdapterRow":          "One compatibility adapter and whether it can be retired.",
	"ClientUsage":         "One client's use of an adapter.",
	"PropagationRow":      "How one tool's list_changed notifications reached the sessions notified in the window.",
	"ViolationRow":        "One safety violation.",
	"RevisionSourceRow":   "The calls of one tool by one client, by where their client revision came from; declared, listed, inferred and unknown sum to calls.",
	"ContractErrorRow":    "One client's half of the output contract: its contract errors by tool and field, and its tools/list refreshes.",
	"ContractField":       "The contract errors of one client about one output field of one tool.",
	"AuditRow":            "One audited tools/call.",
	"Thresholds":          "The thresholds the verdicts were judged with.",
	"ToolPoint":           "The calls of one bucket and group.",
	"StaleUsagePoint":     "The calls of one bucket and group as the stale-usage report counts them; a dimension not grouped by is absent.",
	"RejectionPoint":      "The rejected calls of one bucket and group; a dimension not grouped by is absent.",
	"RepairPoint":         "The repairs report's counts of one bucket and group, with the bucket's own times to repair.",
	"AdapterPoint":        "The calls through adapters of one bucket and group; tool_calls sums the calls of each adapter's tool.",
	"PropagationPoint":    "The sessions notified in one bucket and what became of them.",
	"ViolationPoint":      "The safety violations of one bucket and group; a dimension not grouped by is absent.",
	"RevisionSourcePoint": "The calls of one bucket and group by where their client revision came from; a dimension not grouped by is absent.",
	"ContractErrorPoint":  "The contract errors and refreshes of one bucket and group; a dimension not grouped by is absent.",
	"AuditPoint":          "The audited calls of one bucket and group; a dimension not grouped by is absent.",
	"Problem":             "An RFC 9457 problem document.",
	"Health":              "Health or readiness.",
	"ToolsBody":           "The tools called in the window.",
	"DriftTestRequest":    "A drift test to run: the MCP server under test, the old list (inline, or deployed from the registry), the calls per tool, and whether to send them. Unknown fields are refused.",
	"DriftTestBody":       "A drift test's outcome: pass (the CLI's exit 0), the number of failures, and the report mcpdrift drifttest -format json prints.",
	"DriftTestSettings":   "Whether the request's token may run a drift test here and why not; the hosts it may call, the calls per tool a request may ask for (and gets by default), the timeout of one test.",
	"Result":              "One call sent (or planned, in a dry run) in one pass, the server's answer and its verdict.",
	"CheckRequest":        "Two tools/list results to compare, each as a server returns it (the result object, its JSON-RPC response, or the array of tools).",
	"CheckBody":           "The release check of a tools/list change, weighed by usage.",
	"Change":              "The check of one tool: its change class, verdict, reason and path, the findings, and the usage of its old revision.",
	"RevisionChange":      "The change from one advertised revision of a tool to another, as the release check classifies it.",
	"Compatibility":       "Whether every instance valid under one schema is valid under the other.",
	"Finding":             "One difference between the old and the new definition of a tool.",
	"Usage":               "The use of a tool's old revision in the window, and what the rollout would do to it.",
}

// fieldDocs describe the fields whose name does not say it all, keyed
// Type.json_name.
var fieldDocs = map[string]string{
	"StaleUsageRow.stale":                      "True when the client planned with a revision other than the one that executed.",
	"StaleUsageRow.rejected":                   "Calls rejected_stale, rejected_incompatible or rejected_invalid.",
	"StaleUsageRow.sessions":                   "Distinct session keys (the session id, else the run id).",
	"StaleUsageRow.clients":                    "Distinct client name@version pairs.",
	"StaleUsageRow.calls_previous":             "Calls in the equal period before the window, [previous_from, from), under the same filter.",
	"StaleUsageRow.previous_from":              "The start of that period.",
	"StaleUsageRow.trend":                      "Calls against calls_previous: new (none before), rising (over +20%), falling (under -20%) or flat; null when the store does not hold the whole previous period (its first stored call is later than previous_from).",
	"StaleUsageRow.change_class":               "The class of the change from revision_client to revision_server, computed by the release check's classifier from the two definitions in the registry of advertised definitions (dev.mcpdrift.advertised); empty when they do not differ; null when either revision is not in the registry under one service and environment (the one that advertised revision_server last, when several did).",
	"StaleUsageRow.change":                     "That change in one line, such as \"required `region` was added without a default: old calls omit it and are rejected\"; \"no change\" when change_class is empty; null with change_class.",
	"RejectionRow.change_class":                "The class of the change from revision_client to revision_server in the registry, as in the stale-usage report; null when either revision is unknown to it.",
	"RejectionRow.change":                      "That change in one line; null with change_class.",
	"RejectionRow.tool_calls":                  "Every call of the tool in the window under the same filter.",
	"RejectionRow.rejection_rate":              "rejected / tool_calls.",
	"RejectionRow.side_effect_violations":      "Rejected calls whose side effect had already started.",
	"RepairRow.retry_calls":                    "Calls that retried another (dev.mcpdrift.retry.of set).",
	"RepairRow.rejections":                     "Calls rejected of any kind: rejected_stale, rejected_incompatible, rejected_invalid, and removed (calls to a removed tool).",
	"RepairRow.amplification":                  "retry_calls / rejections; null when there is no rejection.",
	"RepairRow.incompatible_rejections":        "Calls rejected_incompatible.",
	"RepairRow.invalid_rejections":             "Calls rejected_invalid.",
	"RepairRow.removed_calls":                  "Calls to a removed tool (outcome removed).",
	"RepairRow.retries_after_stale":            "Retry calls that followed a rejected_stale call (dev.mcpdrift.retry.after, as the client stated it).",
	"RepairRow.retries_after_incompatible":     "Retry calls that followed a rejected_incompatible call.",
	"RepairRow.retries_after_invalid":          "Retry calls that followed a rejected_invalid call.",
	"RepairRow.retries_after_removed":          "Retry calls that followed a call to a removed tool.",
	"RepairRow.retries_after_other":            "Retry calls that stated no rejection (no dev.mcpdrift.retry.after, or the retry of a call that was not rejected). The five retries_after_* sum to retry_calls.",
	"RepairRow.amplification_stale":            "retries_after_stale / stale_rejections; null when there is no stale rejection.",
	"RepairRow.amplification_incompatible":     "retries_after_incompatible / incompatible_rejections; null when there is none.",
	"RepairRow.amplification_invalid":          "retries_after_invalid / invalid_rejections; null when there is none.",
	"RepairRow.amplification_removed":          "retries_after_removed / removed_calls; null when there is none.",
	"RepairRow.automatic_success_rate":         "automatic_succeeded / (automatic_succeeded + automatic_failed); null when both are 0.",
	"RepairRow.automatic_repair_p50_ms":        "Median time to repair of the successful automatic repairs that report one (approximate); null when none.",
	"RepairRow.automatic_repair_p95_ms":        "95th percentile of that time; null when none.",
	"RepairRow.human_repair_p50_ms":            "Median time to repair of the other successful repairs, which waited on a person (approximate); null when none.",
	"RepairRow.human_repair_p95_ms":            "95th percentile of that time; null when none.",
	"AdapterRow.registered":                    "True when a server declared the adapter (dev.mcpdrift.adapter); revision_from, revision_to, change_class and window_end come from its latest declaration.",
	"AdapterRow.window_end":                    "The end of the adapter's declared compatibility window; null when none was declared.",
	"AdapterRow.window_ended":                  "True when the declared window had ended.",
	"AdapterRow.calls":                         "Calls through the adapter in the window.",
	"AdapterRow.tool_calls":                    "Every call of the tool in the window.",
	"AdapterRow.share":                         "calls / tool_calls.",
	"AdapterRow.would_be_rejected":             "The what-if: calls the adapter normalised in the window, which would have been rejected without it.",
	"AdapterRow.max_privilege":                 "The highest privilege among the calls; empty when none carried one.",
	"AdapterRow.max_session_age_s":             "Age in seconds of the oldest session that made a call; null when no call carried a session age.",
	"AdapterRow.unknown_age_calls":             "Calls in the window without a session age (dev.mcpdrift.session.age_s absent or not positive).",
	"AdapterRow.unknown_privilege_calls":       "Calls in the window without a privilege (dev.mcpdrift.privilege absent).",
	"AdapterRow.unknown_revision_calls":        "Calls to the adapter's tool in the window, through it or not, that did not say which revision their client planned with (dev.mcpdrift.revision.client absent), under the same filter and exclusions: the adapter may serve such a stale caller unbeknown, so any puts it at risk unless unknown_callers=safe.",
	"AdapterRow.removed_tool_successes":        "removed_tool_success violations through the adapter in the window; any blocks its retirement.",
	"AdapterRow.first_seen":                    "The first call through the adapter in the window; null when none.",
	"AdapterRow.last_seen":                     "The last call through the adapter: in the window, or else the last before it (as far back as the retention); null when none is stored.",
	"AdapterRow.last_seen_in_window":           "True when last_seen lies in the window.",
	"AdapterRow.callers":                       "Every client's use, most calls first: the clients of the calls through the adapter, and those of the calls to its tool without a client revision (calls 0 when none went through it).",
	"AdapterRow.verdict":                       "ready, blocked (over a threshold, or a removed_tool_success through it) or at_risk (within the thresholds, but long-running or privileged callers, callers whose session age or privilege is unknown, or calls to its tool without a client revision, unless unknown_callers=safe).",
	"AdapterRow.reason":                        "Why the verdict is what it is, and what the adapter bridges when the registry knows both of its revisions.",
	"AdapterRow.change_class":                  "The class the server declared for the change the adapter bridges.",
	"AdapterRow.registry_change_class":         "The class of the change from revision_from to revision_to, computed from the two definitions in the registry of advertised definitions; it may differ from the declared change_class. Null when either revision is not in the registry.",
	"AdapterRow.change":                        "What the adapter bridges, in one line, from the registry; null with registry_change_class.",
	"AdapterRow.blocking_clients":              "The callers in the way (for blocked, those that called through the adapter; for at_risk, the long-running or privileged ones and those whose session age, privilege or revision is unknown), most calls first.",
	"ClientUsage.client":                       "name@version, or the name alone when no version is known.",
	"ClientUsage.unknown_revision_calls":       "In the adapter retirement report, the client's calls to the adapter's tool, through it or not, that did not say which revision they were planned with; always 0 in the release check, which lists those clients apart (unknown_clients).",
	"PropagationRow.tool":                      "The notified tool; empty for notifications that name none.",
	"PropagationRow.lag_p50_ms":                "Median lag from the notification to the session's first refresh after it; null when no session refreshed.",
	"PropagationRow.lag_p95_ms":                "95th percentile of that lag; null when no session refreshed.",
	"PropagationRow.lag_max_ms":                "The longest of those lags; null when no session refreshed.",
	"PropagationRow.stale_calls_after_notice":  "Calls on an old revision the notified sessions sent after the notification.",
	"PropagationRow.stale_calls_after_refresh": "Those of them sent even after the session had refreshed.",
	"ViolationRow.kind":                        "side_effect_rejected, mixed_revision, removed_tool_success or retry_across_change.",
	"RevisionSourceRow.client":                 "name@version, or the name alone when no version is known; empty for calls that named no client.",
	"RevisionSourceRow.declared":               "Calls with a client revision that the client declared in _meta, or whose source (dev.mcpdrift.revision.client.source) is not stated: read as declared, the only source before the attribute existed.",
	"RevisionSourceRow.listed":                 "Calls whose client revision is the one the server last listed to the session.",
	"RevisionSourceRow.inferred":               "Calls whose client revision the server inferred from the arguments.",
	"RevisionSourceRow.unknown":                "Calls without a client revision, whatever source they state: never read as current.",
	"RevisionSourceRow.unknown_share":          "unknown / calls; null without calls.",
	"RevisionSourcePoint.unknown_share":        "unknown / calls of the bucket; null in a bucket without calls.",
	"ContractErrorRow.client":                  "name@version, or the name alone when no version is known; empty for events that named no client.",
	"ContractErrorRow.contract_errors":         "The client's dev.mcpdrift.contract_error events: a dependent call needed an output field and did not get it. Restricted by the tool filter.",
	"ContractErrorRow.fields":                  "The contract errors by tool and output field, most first.",
	"ContractErrorRow.refreshes":               "The client's tools/list refreshes: distinct (session key, time) pairs of its dev.mcpdrift.refresh events, one refresh emitting one event per changed tool. The tool filter does not restrict them: a refresh re-lists every tool.",
	"ContractErrorRow.failed_refreshes":        "Those refreshes whose result is failed.",
	"ContractErrorRow.refresh_failure_rate":    "failed_refreshes / refreshes; null without a refresh.",
	"ContractErrorRow.sessions":                "Distinct session keys (the session id, else the run id) of the contract errors and refreshes counted.",
	"ContractErrorRow.last_seen":               "The latest of the contract errors and refreshes counted.",
	"ContractField.field":                      "The output field the dependent call needed (dev.mcpdrift.contract.field).",
	"ContractErrorPoint.refresh_failure_rate":  "failed_refreshes / refreshes of the bucket; null in a bucket without a refresh.",
	"ViolationRow.revision_validated":          "The revision the call was validated under, when it differs from the one it executed under.",
	"AuditRow.service_version":                 "The handler build that served the call.",
	"AuditRow.args_raw":                        "The arguments as received (JSON, redacted at ingest per configuration).",
	"AuditRow.args_normalized":                 "The arguments after normalisation (JSON, redacted at ingest per configuration).",
	"Thresholds.max_calls":                     "The most calls that allow retirement; null when it does not apply.",
	"Thresholds.max_share":                     "The highest share of the tool's calls (0..1) that allows retirement; null when it does not apply.",
	"Thresholds.long_session_s":                "Session age in seconds from which a caller counts as long-running.",
	"Thresholds.top_clients":                   "How many blocking clients are listed per adapter.",
	"Thresholds.unknown_callers":               "How calls without a session age, a privilege or a client revision were judged: at_risk or safe.",
	"CheckRequest.old":                         "The tools/list result the clients planned with.",
	"CheckRequest.new":                         "The tools/list result to deploy.",
	"CheckRequest.authority_fields":            "Field names that widen or redirect an action when a revision adds them (matched ignoring case, _ and -); absent means environment, account_id, repository, host, user, confirmation.",
	"CheckBody.pass":                           "True when every tool's change is safe.",
	"CheckBody.unknown_callers":                "How the calls that did not say which revision they were planned with were judged: at_risk (the default) or safe (unknown_callers=safe).",
	"CheckBody.old_cache":                      "The old list's cache hint, when its result carried ttlMs: clients may keep it that long after the deploy, so a change that needs a decision stays so when the cache outlasts the window.",
	"Cache.ttl_ms":                             "The result's ttlMs: how many milliseconds a client may keep the list without listing again.",
	"Cache.cache_scope":                        "The result's cacheScope, as the server said it.",
	"Change.old_arguments":                     "Question 1: is every argument object valid under the old input schema still valid under the new one?",
	"Change.old_readers":                       "Is every result valid under the new output schema still valid under the old one, which clients on the old snapshot read it by?",
	"Change.path":                              "What to do before the deploy, as the seed asks.",
	"Compatibility.witness":                    "When the answer is no: an instance valid under the first schema and invalid under the second.",
	"Usage.revision":                           "The old revision: the one the old list advertises (explicit, or the sha256 digest of the RFC 8785 canonical definition).",
	"Usage.older_revisions":                    "Other revisions the tool's calls were planned with, neither the old list's nor the new one's.",
	"Usage.stale_rejections":                   "The tool's calls rejected_stale in the window, whatever their revision.",
	"Usage.rejected_side_effects":              "The tool's rejected calls whose side effect had already started.",
	"Usage.retries_across_change":              "The tool's automatic retries across a semantic or authority change.",
	"Usage.rollout":                            "What deploying the new list would do to the calls still planned with the old revision, and to those that did not say which revision they were planned with.",
	"Usage.unknown_calls":                      "The tool's calls in the window that did not say which revision their client planned with (dev.mcpdrift.revision.client absent): any may be stale, so a change that needs a decision stays so while they exist, unless unknown_callers=safe.",
	"Usage.unknown_sessions":                   "The distinct sessions of those calls.",
	"Usage.unknown_clients":                    "Each client's share of those calls, most calls first.",
	"Problem.title":                            "The status's reason phrase.",
	"Problem.detail":                           "What went wrong with this request.",
	"Problem.parameter":                        "The request parameter (or header) at fault.",
}
