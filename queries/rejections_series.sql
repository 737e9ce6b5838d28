-- The rejected calls per bucket of {step} seconds (series.go), as
-- rejections.sql counts them (rejected, and those whose side effect had
-- already started), grouped by the dimensions asked for. Served from
-- rejected_*, which keeps the client.
SELECT
    {{template "series_time"}},
    {{dim .F.G.Tool "t.tool" "tool"}},
    {{dim .F.G.RevisionClient "t.revision_client" "revision_client"}},
    {{dim .F.G.RevisionServer "t.revision_server" "revision_server"}},
    {{dim .F.G.Outcome "toString(t.outcome)" "outcome"}},
    {{dim .F.G.ErrorCode "t.error_code" "error_code"}},
    {{dim .F.G.Client "if(t.client_version = '', t.client_name, concat(t.client_name, '@', t.client_version))" "client"}},
    sum(t.calls) AS rejected,
    sum(t.side_effects) AS side_effect_violations
FROM
(
{{- template "rejected" .}}
) AS t
GROUP BY time, tool, revision_client, revision_server, outcome, error_code, client
ORDER BY tool, revision_client, revision_server, outcome, error_code, client, {{template "series_fill"}}
{{template "settings" ""}}
