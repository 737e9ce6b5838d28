-- The calls through each adapter per bucket of {step} seconds (series.go),
-- grouped by adapter and tool if asked: calls, would_be_rejected (the
-- calls it normalised) and tool_calls, the calls of the adapter's tool in
-- the bucket, summed over the group's adapters as the report's rows add
-- up. The adapted calls from adapted_*, the tool's traffic from usage_*
-- (or the call rollups for a client filter), as adapter_retirement.sql.
WITH
adapted AS
(
    SELECT {{template "series_time"}}, t.adapter_id AS adapter_id, t.tool AS tool,
           sum(t.calls) AS calls, sum(t.normalized) AS normalized
    FROM
    (
    {{- template "adapted" .}}
    ) AS t
    GROUP BY time, adapter_id, tool
),
traffic AS
(
    SELECT {{template "series_time"}}, t.tool AS tool, sum(t.calls) AS tool_calls
    FROM
    (
    {{- template "traffic" .}}
    ) AS t
    WHERE t.tool IN (SELECT tool FROM adapted)
    GROUP BY time, tool
)
SELECT
    a.time AS time,
    {{dim .F.G.Adapter "a.adapter_id" "adapter"}},
    {{dim .F.G.Tool "a.tool" "tool"}},
    sum(a.calls) AS calls,
    sum(a.normalized) AS would_be_rejected,
    sum(c.tool_calls) AS tool_calls
FROM adapted AS a
LEFT JOIN traffic AS c ON c.time = a.time AND c.tool = a.tool
GROUP BY time, adapter, tool
ORDER BY adapter, tool, {{template "series_fill"}}
{{template "settings" ""}}
