// Package dashboards generates the dashboards the plugin ships
// (src/dashboards/*.json) from code, so that every panel's queries use the
// backend's own query types, counts and groupings. Its test writes them
// with -update and lints them.
package dashboards

import (
	"github.com/mcpdrift/mcpdrift/grafana-plugin/pkg/plugin"
)

// DS is the data source reference every panel and variable uses: the
// dashboard's data source variable.
var DS = map[string]any{"type": plugin.ID, "uid": "${datasource}"}

// Dashboard is one generated dashboard and the file it goes to.
type Dashboard struct {
	File  string
	Model map[string]any
}

type m = map[string]any

// target is a query; model holds the query's fields besides queryType.
func target(queryType string, model m) m {
	t := m{"refId": "A", "datasource": DS, "queryType": queryType}
	for k, v := range model {
		t[k] = v
	}
	return t
}

// filters are the template variables every query passes on: the client
// and the excluded clients (a multi-value variable, interpolated as a
// comma-separated list) too.
func filters(extra m) m {
	out := m{"tool": "$tool", "service": "$service", "environment": "$environment",
		"client": "$client", "excludeClients": []any{"$exclude_client"}}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

type panel struct {
	typ, title, description, unit string
	w, h                          int
	target                        m
	options                       m
	overrides                     []any
	repeat                        string
	custom                        m
}

func (p panel) model(id, x, y int) m {
	if p.w == 0 {
		p.w = 24
	}
	if p.h == 0 {
		p.h = 8
	}
	defaults := m{"unit": p.unit}
	if p.custom != nil {
		defaults["custom"] = p.custom
	}
	overrides := p.overrides
	if overrides == nil {
		overrides = []any{}
	}
	out := m{
		"id": id, "type": p.typ, "title": p.title, "description": p.description,
		"datasource":  DS,
		"gridPos":     m{"h": p.h, "w": p.w, "x": x, "y": y},
		"fieldConfig": m{"defaults": defaults, "overrides": overrides},
		"targets":     []any{p.target},
	}
	if p.options != nil {
		out["options"] = p.options
	}
	if p.repeat != "" {
		out["repeat"] = p.repeat
		out["repeatDirection"] = "h"
		out["maxPerRow"] = 3
	}
	return out
}

func series(title, description, unit string, t m) panel {
	return panel{typ: "timeseries", title: title, description: description, unit: unit, w: 12, target: t,
		options: m{"legend": m{"displayMode": "table", "placement": "right", "calcs": []any{"sum", "max"}}, "tooltip": m{"mode": "multi"}},
		custom:  m{"drawStyle": "bars", "fillOpacity": 60, "stacking": m{"mode": "normal"}}}
}

func lines(title, description, unit string, t m) panel {
	return panel{typ: "timeseries", title: title, description: description, unit: unit, w: 12, target: t,
		options: m{"legend": m{"displayMode": "list", "placement": "bottom"}, "tooltip": m{"mode": "multi"}},
		custom:  m{"drawStyle": "line", "lineWidth": 2, "spanNulls": true, "showPoints": "always"}}
}

func table(title, description string, t m) panel {
	return panel{typ: "table", title: title, description: description, unit: "short", h: 10, target: t,
		options: m{"showHeader": true, "cellHeight": "sm"}}
}

// queryVar is a template variable listing what the variable query names.
func queryVar(name, label, variable string, multi bool) m {
	return m{
		"type": "query", "name": name, "label": label,
		"datasource": DS,
		"query":      m{"refId": "mcpdrift-" + name, "variable": variable},
		"definition": "mcpdrift " + variable,
		"refresh":    2, "sort": 1,
		"includeAll": true, "allValue": "*", "multi": multi,
		"current": m{"text": "All", "value": "$__all"},
		"options": []any{},
	}
}

// excludeVar is a multi-value variable of clients to leave out, "None"
// (no filter) first and selected.
func excludeVar(name, label string) m {
	v := queryVar(name, label, plugin.VariableClients, true)
	v["query"].(m)["none"] = true
	v["includeAll"] = false
	v["sort"] = 0
	v["current"] = m{"text": []any{"None"}, "value": []any{"*"}}
	return v
}

func textVar(name, label, value string) m {
	return m{"type": "textbox", "name": name, "label": label, "query": value,
		"current": m{"text": value, "value": value}, "hide": 0}
}

func dashboard(uid, title, description string, extraVars []m, panels []panel) m {
	vars := []any{
		m{"type": "datasource", "name": "datasource", "label": "Data source", "query": plugin.ID,
			"current": m{}, "hide": 0, "refresh": 1, "options": []any{}},
		queryVar("tool", "Tool", plugin.VariableTools, false),
		queryVar("service", "Service", plugin.VariableServices, false),
		queryVar("environment", "Environment", plugin.VariableEnvironments, false),
		queryVar("client", "Client", plugin.VariableClients, false),
		excludeVar("exclude_client", "Exclude clients"),
	}
	for _, v := range extraVars {
		vars = append(vars, v)
	}
	var models []any
	x, y, rowH := 0, 0, 0
	for i, p := range panels {
		w := p.w
		if w == 0 {
			w = 24
		}
		if x+w > 24 {
			x, y = 0, y+rowH
			rowH = 0
		}
		models = append(models, p.model(i+1, x, y))
		h := p.h
		if h == 0 {
			h = 8
		}
		rowH = max(rowH, h)
		x += w
	}
	return m{
		"uid": uid, "title": title, "description": description,
		"tags":          []any{"mcpdrift", "mcp"},
		"editable":      true,
		"schemaVersion": 39,
		"version":       1,
		"time":          m{"from": "now-7d", "to": "now"},
		"refresh":       "",
		"timezone":      "utc",
		"templating":    m{"list": vars},
		"annotations":   m{"list": []any{}},
		"links":         []any{m{"type": "dashboards", "tags": []any{"mcpdrift"}, "asDropdown": true, "title": "mcpdrift"}},
		"panels":        models,
	}
}

// All returns the dashboards the plugin ships.
func All() []Dashboard {
	return []Dashboard{
		{"adapter-retirement.json", adapterRetirement()},
		{"stale-revisions.json", staleRevisions()},
		{"rejections-safety.json", rejectionsSafety()},
		{"repairs.json", repairs()},
		{"propagation.json", propagation()},
		{"clients.json", clients()},
	}
}

func adapterRetirement() m {
	verdictColors := []any{m{
		"matcher": m{"id": "byName", "options": "verdict"},
		"properties": []any{
			m{"id": "custom.cellOptions", "value": m{"type": "color-background"}},
			m{"id": "mappings", "value": []any{m{"type": "value", "options": m{
				"ready":   m{"color": "green", "index": 0, "text": "ready"},
				"at_risk": m{"color": "orange", "index": 1, "text": "at risk"},
				"blocked": m{"color": "red", "index": 2, "text": "blocked"},
			}}}},
		},
	}}
	t := table("Adapters and their verdicts",
		"One row per compatibility adapter: its verdict (ready, blocked, at_risk) under the thresholds of the max_share and long_session variables (no calls at all when max_share is empty), the reason, the clients that block it, when it was last seen, the calls to its tool that did not say which revision they were planned with (at_risk unless judged safe) and the calls that would have been rejected without it.",
		target(plugin.QueryTypeAdapterRetirement, filters(m{"adapter": "$adapter", "maxShare": "$max_share", "longSession": "$long_session"})))
	t.overrides = verdictColors
	t.h = 12
	usage := lines("Usage of $adapter",
		"Calls normalised by this adapter per interval, and the calls that would have been rejected without it: the trend to watch before retiring it. Alert on it to hear when a retired adapter is used again.",
		"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeAdapterRetirement, "adapter": "$adapter", "metrics": []any{"calls", "would_be_rejected"}})))
	usage.w, usage.repeat = 8, "adapter"
	all := series("Calls through every adapter",
		"Calls normalised by each adapter per interval, stacked.",
		"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeAdapterRetirement, "adapter": "$adapter", "groupBy": []any{"adapter"}})))
	all.w = 24
	return dashboard("mcpdrift-adapter-retirement", "mcpdrift: Adapter retirement",
		"Can each compatibility adapter be retired now, and if not, who still needs it?",
		[]m{queryVar("adapter", "Adapter", plugin.VariableAdapters, true),
			textVar("max_share", "Max share", ""), textVar("long_session", "Long session", "24h")},
		[]panel{t, all, usage})
}

func staleRevisions() m {
	byRev := series("Stale calls by tool × client revision",
		"Calls whose client planned with another revision than the one that executed, per tool and client revision, per interval (from the call rollups).",
		"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeStaleUsage, "groupBy": []any{"tool", "revision_client"}})))
	byClient := series("Stale calls by client",
		"The same stale calls per client (name@version), from the call rollups.",
		"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeStaleUsage, "metrics": []any{"stale_calls"}, "groupBy": []any{"client"}})))
	outcomes := lines("Outcomes of calls",
		"Every call per interval split by outcome: normalised by an adapter, rejected, or current.",
		"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeStaleUsage, "metrics": []any{"normalized", "rejected", "current"}})))
	outcomes.w = 24
	return dashboard("mcpdrift-stale-revisions", "mcpdrift: Stale revisions",
		"Who still plans with old tool revisions, and what happens to their calls.",
		nil,
		[]panel{byRev, byClient, outcomes,
			table("Stale-revision usage", "Per tool × client revision × server revision: calls and their outcomes, sessions, runs, clients, first and last seen, and the trend against the equal period before the range.",
				target(plugin.QueryTypeStaleUsage, filters(nil)))})
}

func rejectionsSafety() m {
	return dashboard("mcpdrift-rejections-safety", "mcpdrift: Rejections & safety",
		"Rejected calls by code, and the safety violations: rejected calls whose side effect had started, mixed-revision calls, removed tools that succeeded, retries across semantic changes.",
		nil,
		[]panel{
			series("Rejections by error code", "Rejected calls (stale, incompatible, invalid) per error code per interval.",
				"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeRejections, "groupBy": []any{"error_code"}}))),
			series("Rejected calls with side effect started", "Rejected calls whose side effect had already started: each one is a safety violation. A good alert: above 0.",
				"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeRejections, "metrics": []any{"side_effect_violations"}, "groupBy": []any{"tool"}}))),
			series("Violations by kind", "Safety violations per kind per interval.",
				"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeViolations, "groupBy": []any{"kind"}}))),
			table("Rejections", "Rejected calls by tool, revisions, outcome, error code and client, with the tool's rejection rate.",
				target(plugin.QueryTypeRejections, filters(nil))),
			table("Side-effect violations", "Rejected calls whose side effect had started, oldest first.",
				target(plugin.QueryTypeViolations, filters(m{"kind": "side_effect_rejected"}))),
			table("Mixed-revision calls", "Calls validated under one revision and executed under another, oldest first.",
				target(plugin.QueryTypeViolations, filters(m{"kind": "mixed_revision"}))),
		})
}

func repairs() m {
	return dashboard("mcpdrift-repairs", "mcpdrift: Repairs",
		"What clients do after a stale rejection: automatic repairs, human approvals, abandons, and how many retries each stale call costs.",
		nil,
		[]panel{
			series("Automatic vs human vs abandoned", "Repairs per interval: automatic (refresh and retry, model repair), human approvals, abandons.",
				"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeRepairs, "metrics": []any{"automatic_repairs", "human_approvals", "abandons"}}))),
			lines("Amplification: retries vs stale rejections", "Retry calls against stale rejections per interval; their ratio is the amplification of each stale call.",
				"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeRepairs, "metrics": []any{"retry_calls", "stale_rejections"}}))),
			table("Repairs per tool", "Per tool: stale rejections, retries and amplification, repair actions, the automatic repairs' success rate and the time to repair.",
				target(plugin.QueryTypeRepairs, filters(nil))),
		})
}

func propagation() m {
	return dashboard("mcpdrift-propagation", "mcpdrift: Propagation",
		"How notifications/tools/list_changed reach sessions: the lag to the next refresh, sessions that never refreshed, and stale calls after the notice.",
		nil,
		[]panel{
			lines("list_changed → refresh lag", "Median and p95 lag from a list_changed notification to the session's next refresh, highest among tools per interval.",
				"ms", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypePropagation, "metrics": []any{"lag_p50_ms", "lag_p95_ms"}}))),
			series("Notified sessions that never refreshed", "Sessions notified per interval, and those that never refreshed after the notice.",
				"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypePropagation, "metrics": []any{"notified_sessions", "never_refreshed", "stale_calls_after_notice"}}))),
			table("Propagation per tool", "Per tool: sessions notified, refreshed and never refreshed, lag percentiles, and calls on an old revision after the notice.",
				target(plugin.QueryTypePropagation, filters(nil))),
		})
}

func clients() m {
	sources := series("Calls by revision source",
		"Calls per interval by where their client revision came from: declared by the client (or not stated), listed by the server to the session, inferred from the arguments, or unknown (no revision at all, never read as current). The verdicts of the other dashboards rest on these revisions.",
		"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeRevisionSources, "metrics": []any{"declared", "listed", "inferred", "unknown"}})))
	share := lines("Unknown share by client",
		"The share of each client's calls that carried no client revision, per interval: how much of its traffic no verdict can place.",
		"percentunit", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeRevisionSources, "metrics": []any{"unknown_share"}, "groupBy": []any{"client"}})))
	contract := series("Contract errors by client",
		"Output-shape mismatches that stopped a dependent call, per client per interval (the tool variable narrows them to one tool's output).",
		"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeContractErrors, "groupBy": []any{"client"}})))
	refreshes := lines("Refreshes and failures",
		"The clients' tools/list refreshes per interval and those that failed. A refresh re-lists every tool: the tool variable does not narrow them.",
		"short", target(plugin.QueryTypeTimeSeries, filters(m{"report": plugin.QueryTypeContractErrors, "metrics": []any{"refreshes", "failed_refreshes"}})))
	return dashboard("mcpdrift-clients", "mcpdrift: Clients",
		"The clients themselves: where the client revisions the verdicts rest on came from, and the client's half of the output contract, its contract errors and refreshes.",
		nil,
		[]panel{sources, share,
			table("Revision sources", "Per tool and client: the calls, and how many carried a client revision declared, listed, inferred, or none (unknown), with the unknown share.",
				target(plugin.QueryTypeRevisionSources, filters(nil))),
			contract, refreshes,
			table("Contract errors per client", "Per client: its contract errors by tool and field, its refreshes, the failed ones and the failure rate, its sessions and when it was last seen. The tool variable narrows the contract errors only.",
				target(plugin.QueryTypeContractErrors, filters(nil)))})
}
