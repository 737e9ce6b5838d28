-- The revision-sources report's calls per bucket of {step} seconds
-- (series.go), by tool and client if asked: every call, and by where its
-- client revision came from, as revision_sources.sql counts them, with the
-- bucket's unknown share (null in a bucket without calls). Served from the
-- call rollups ("sources" in tiers.tmpl).
SELECT
    {{template "series_time"}},
    {{dim .F.G.Tool "t.tool" "tool"}},
    {{dim .F.G.Client "if(t.client_version = '', t.client_name, concat(t.client_name, '@', t.client_version))" "client"}},
    sum(t.calls) AS calls,
    sum(t.calls) - sum(t.unknown) - sum(t.listed) - sum(t.inferred) AS declared,
    sum(t.listed) AS listed,
    sum(t.inferred) AS inferred,
    sum(t.unknown) AS unknown,
    if(sum(t.calls) > 0, sum(t.unknown) / sum(t.calls), NULL) AS unknown_share
FROM
(
{{- template "sources" .}}
) AS t
GROUP BY time, tool, client
ORDER BY tool, client, {{template "series_fill"}}
{{template "settings" ""}}
