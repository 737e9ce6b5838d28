-- Repairs per tool: the stale rejections (calls rejected_stale), the retry
-- calls (calls with mcp.drift.retry.of) and what clients did about them
-- (repair events by action), the success of automatic repairs, and the time
-- to repair. The call figures are served from usage_* when the filter
-- names no client, from the call rollups otherwise ("traffic" in
-- tiers.tmpl), the repair figures from the repair rollups; repairs_raw.sql
-- is the same report from events.
--
-- automatic repairs: repair events with repair_automatic = true and action
-- refresh_retry or model_repair; the success rate is success / (success +
-- failure) among them, null when there are none. amplification: retry calls
-- per rejected call of any kind (rejected_stale, rejected_incompatible,
-- rejected_invalid, removed), null when there is none. Time to repair: a
-- t-digest median and p95 of mcp.drift.repair.duration_ms over the
-- successful repairs that report one, for the automatic repairs apart from
-- the others, which waited on a person (approximate; null when none).
WITH
call_totals AS
(
    SELECT tool,
           sum(t.calls_rejected_stale) AS stale_rejections,
           sum(t.calls_rejected) + sum(t.calls_removed) AS rejections,
           sum(t.retries) AS retry_calls
    FROM
    (
    {{- template "traffic" .}}
    ) AS t
    GROUP BY tool
),
repair_totals AS
(
    SELECT tool,
           sumIf(t.repairs, repair_action = 'refresh_retry') AS refresh_retries,
           sumIf(t.repairs, repair_action = 'model_repair') AS model_repairs,
           sumIf(t.repairs, repair_action = 'human_approval') AS human_approvals,
           sumIf(t.repairs, repair_action = 'human_approval' AND repair_result = 'failure') AS human_approvals_denied,
           sumIf(t.repairs, repair_action = 'abandon') AS abandons,
           sumIf(t.repairs, repair_automatic AND repair_action IN ('refresh_retry', 'model_repair')) AS automatic_repairs,
           sumIf(t.repairs, repair_automatic AND repair_action IN ('refresh_retry', 'model_repair') AND repair_result = 'success') AS automatic_succeeded,
           sumIf(t.repairs, repair_automatic AND repair_action IN ('refresh_retry', 'model_repair') AND repair_result = 'failure') AS automatic_failed,
           quantilesTDigestMergeIf(0.5, 0.95)(t.duration_ms, t.repair_result = 'success'
               AND t.repair_automatic AND t.repair_action IN ('refresh_retry', 'model_repair')) AS automatic_ms,
           quantilesTDigestMergeIf(0.5, 0.95)(t.duration_ms, t.repair_result = 'success'
               AND NOT (t.repair_automatic AND t.repair_action IN ('refresh_retry', 'model_repair'))) AS human_ms
    FROM
    (
    {{- template "repairs" .}}
    ) AS t
    GROUP BY tool
)
{{template "repairs_answer" .}}
{{template "settings" ""}}
