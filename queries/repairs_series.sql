-- The repairs report's counts per bucket of {step} seconds (series.go), by
-- tool if asked: the call figures from usage_* (or the call rollups for a
-- client filter), the repair figures from the repair rollups, with the
-- definitions of repairs.sql. The times to repair are the bucket's own
-- t-digest quantiles (null when the bucket has none).
WITH
call_totals AS
(
    SELECT {{template "series_time"}},
           {{dim .F.G.Tool "t.tool" "tool"}},
           sum(t.calls_rejected_stale) AS stale_rejections,
           sum(t.calls_rejected) + sum(t.calls_removed) AS rejections,
           sum(t.retries) AS retry_calls
    FROM
    (
    {{- template "traffic" .}}
    ) AS t
    GROUP BY time, tool
),
repair_totals AS
(
    SELECT {{template "series_time"}},
           {{dim .F.G.Tool "t.tool" "tool"}},
           {{- template "repair_sums"}}
    FROM
    (
    {{- template "repairs" .}}
    ) AS t
    GROUP BY time, tool
)
SELECT
    time, tool,
    stale_rejections, rejections, retry_calls,
    refresh_retries, model_repairs, human_approvals, human_approvals_denied, abandons,
    automatic_repairs, automatic_succeeded, automatic_failed,
    if(empty(automatic_ms) OR isNaN(automatic_ms[1]), NULL, round(automatic_ms[1], 1)) AS automatic_repair_p50_ms,
    if(empty(automatic_ms) OR isNaN(automatic_ms[2]), NULL, round(automatic_ms[2], 1)) AS automatic_repair_p95_ms,
    if(empty(human_ms) OR isNaN(human_ms[1]), NULL, round(human_ms[1], 1)) AS human_repair_p50_ms,
    if(empty(human_ms) OR isNaN(human_ms[2]), NULL, round(human_ms[2], 1)) AS human_repair_p95_ms
FROM call_totals
FULL OUTER JOIN repair_totals USING (time, tool)
ORDER BY tool, {{template "series_fill"}}
{{template "settings" ""}}
