-- The stale-usage report's calls per bucket of {step} seconds (series.go):
-- every call, the stale ones (planned with a revision other than the one
-- that executed, unless the two are one contract under two names: the
-- pairs of {same_contract}, which StaleUsage's rows say are not stale),
-- and the outcomes as stale_usage.sql counts them, grouped
-- by the dimensions asked for (tool, revisions, client as name@version).
-- Served from usage_* unless the filter names a client or the series groups
-- by one, from the call rollups then ("traffic" in tiers.tmpl).
SELECT
    {{template "series_time"}},
    {{dim .F.G.Tool "t.tool" "tool"}},
    {{dim .F.G.RevisionClient "t.revision_client" "revision_client"}},
    {{dim .F.G.RevisionServer "t.revision_server" "revision_server"}},
    {{dim .F.G.Client "if(t.client_version = '', t.client_name, concat(t.client_name, '@', t.client_version))" "client"}},
    sum(t.calls) AS calls,
    sumIf(t.calls, t.revision_client != '' AND t.revision_client != t.revision_server
        {{- if .F.SameContract}}
        AND NOT has({same_contract:Array(Tuple(String, String, String))}, (t.tool, t.revision_client, t.revision_server))
        {{- end}}) AS stale_calls,
    sum(t.calls_current) AS current,
    sum(t.calls_normalized) AS normalized,
    sum(t.calls_rejected) AS rejected,
    sum(t.calls_removed) AS removed,
    sum(t.calls_failed) AS failed
FROM
(
{{- template "traffic" .}}
) AS t
GROUP BY time, tool, revision_client, revision_server, client
ORDER BY tool, revision_client, revision_server, client, {{template "series_fill"}}
{{template "settings" ""}}
