-- The safety violations per bucket of {step} seconds (series.go), as
-- violations.sql lists them one by one (the same two narrow tables, the
-- same definitions), counted by the dimensions asked for.
SELECT
    {{template "series_time"}},
    {{dim .F.G.Kind "t.kind" "kind"}},
    {{dim .F.G.Tool "t.tool" "tool"}},
    {{dim .F.G.Client "if(t.client_version = '', t.client_name, concat(t.client_name, '@', t.client_version))" "client"}},
    {{dim .F.G.Service "t.service" "service"}},
    {{dim .F.G.Outcome "t.outcome" "outcome"}},
    count() AS violations
FROM
(
    SELECT time AS bucket, toString(kind) AS kind, tool, client_name, client_version, service, toString(outcome) AS outcome
    FROM {{.Database}}.violation_candidates
    WHERE tenant = {tenant:String}
      {{- template "raw_filter" .}}
      {{- template "one_row_per_retry" .}}
    {{- if .F.Removed}}
    UNION ALL
    SELECT time AS bucket, 'removed_tool_success' AS kind, tool, client_name, client_version, service, toString(outcome) AS outcome
    FROM {{.Database}}.adapter_call_candidates
    WHERE tenant = {tenant:String}
      AND adapter_id IN {removed_adapters:Array(String)}
      {{- template "raw_filter" .}}
    {{- end}}
) AS t
GROUP BY time, kind, tool, client, service, outcome
ORDER BY kind, tool, client, service, outcome, {{template "series_fill"}}
{{template "settings" ""}}
