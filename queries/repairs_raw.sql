-- Repairs computed from the raw events: the reference for repairs.sql.
-- Same columns, same definitions; the time to repair is a t-digest over
-- the events here and a merge of t-digest states there, so the two agree
-- on every count and approximately on the quantiles.
WITH
call_totals AS
(
    SELECT tool,
           countIf(outcome = 'rejected_stale') AS stale_rejections,
           countIf(outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid', 'removed')) AS rejections,
           countIf(retry_of != '') AS retry_calls
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.call'
      {{- template "raw_filter" .}}
    GROUP BY tool
),
repair_totals AS
(
    SELECT tool,
           countIf(repair_action = 'refresh_retry') AS refresh_retries,
           countIf(repair_action = 'model_repair') AS model_repairs,
           countIf(repair_action = 'human_approval') AS human_approvals,
           countIf(repair_action = 'human_approval' AND repair_result = 'failure') AS human_approvals_denied,
           countIf(repair_action = 'abandon') AS abandons,
           countIf(repair_automatic AND repair_action IN ('refresh_retry', 'model_repair')) AS automatic_repairs,
           countIf(repair_automatic AND repair_action IN ('refresh_retry', 'model_repair') AND repair_result = 'success') AS automatic_succeeded,
           countIf(repair_automatic AND repair_action IN ('refresh_retry', 'model_repair') AND repair_result = 'failure') AS automatic_failed,
           quantilesTDigestIf(0.5, 0.95)(repair_duration_ms, repair_duration_ms > 0 AND repair_result = 'success'
               AND repair_automatic AND repair_action IN ('refresh_retry', 'model_repair')) AS automatic_ms,
           quantilesTDigestIf(0.5, 0.95)(repair_duration_ms, repair_duration_ms > 0 AND repair_result = 'success'
               AND NOT (repair_automatic AND repair_action IN ('refresh_retry', 'model_repair'))) AS human_ms
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.repair'
      {{- template "raw_filter" .}}
    GROUP BY tool
),
kind_totals AS
(
    SELECT tool,
           countIf(outcome = 'rejected_incompatible') AS incompatible_rejections,
           countIf(outcome = 'rejected_invalid') AS invalid_rejections,
           countIf(outcome = 'removed') AS removed_calls,
           countIf(retry_of != '' AND retry_after = 'rejected_stale') AS retries_after_stale,
           countIf(retry_of != '' AND retry_after = 'rejected_incompatible') AS retries_after_incompatible,
           countIf(retry_of != '' AND retry_after = 'rejected_invalid') AS retries_after_invalid,
           countIf(retry_of != '' AND retry_after = 'removed') AS retries_after_removed,
           countIf(retry_of != '' AND retry_after NOT IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid', 'removed')) AS retries_after_other
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.call'
      {{- template "raw_filter" .}}
    GROUP BY tool
)
{{template "repairs_answer" .}}
{{template "settings" ""}}
