-- The tools' calls per bucket of {step} seconds (series.go), by tool if
-- asked. Served from the call rollups, as tools.sql.
SELECT
    {{template "series_time"}},
    {{dim .F.G.Tool "t.tool" "tool"}},
    sum(t.calls) AS calls
FROM
(
{{- template "calls" .}}
) AS t
GROUP BY time, tool
ORDER BY tool, {{template "series_fill"}}
{{template "settings" ""}}
