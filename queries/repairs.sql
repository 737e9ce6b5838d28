-- Repairs per tool: the stale rejections (calls rejected_stale), the retry
-- calls (calls with dev.mcpdrift.retry.of) and what clients did about them
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
-- rejected_invalid, removed), null when there is none; by kind, the retry
-- calls that followed a rejection of that kind (dev.mcpdrift.retry.after, as
-- the client stated it) per rejected call of that kind, null when there is
-- none of that kind: kind_totals, from the rejection and retry rollups
-- (rejected_1h, retries_1h). Retry calls whose client stated no rejection
-- are retries_after_other. Time to repair: a
-- t-digest median and p95 of dev.mcpdrift.repair.duration_ms over the
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
           {{- template "repair_sums"}}
    FROM
    (
    {{- template "repairs" .}}
    ) AS t
    GROUP BY tool
),
kind_totals AS
(
    SELECT tool,
           sum(k.incompatible) AS incompatible_rejections,
           sum(k.invalid) AS invalid_rejections,
           sum(k.removed) AS removed_calls,
           sum(k.after_stale) AS retries_after_stale,
           sum(k.after_incompatible) AS retries_after_incompatible,
           sum(k.after_invalid) AS retries_after_invalid,
           sum(k.after_removed) AS retries_after_removed,
           sum(k.after_other) AS retries_after_other
    FROM
    (
        SELECT tool,
               sumIf(r.calls, r.outcome = 'rejected_incompatible') AS incompatible,
               sumIf(r.calls, r.outcome = 'rejected_invalid') AS invalid,
               sumIf(r.calls, r.outcome = 'removed') AS removed,
               toUInt64(0) AS after_stale, toUInt64(0) AS after_incompatible, toUInt64(0) AS after_invalid,
               toUInt64(0) AS after_removed, toUInt64(0) AS after_other
        FROM
        (
        {{- template "rejected" .}}
        ) AS r
        GROUP BY tool
        UNION ALL
        SELECT tool, toUInt64(0), toUInt64(0), toUInt64(0),
               sumIf(t.retries, t.retry_after = 'rejected_stale'),
               sumIf(t.retries, t.retry_after = 'rejected_incompatible'),
               sumIf(t.retries, t.retry_after = 'rejected_invalid'),
               sumIf(t.retries, t.retry_after = 'removed'),
               sumIf(t.retries, t.retry_after NOT IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid', 'removed'))
        FROM
        (
        {{- template "retries" .}}
        ) AS t
        GROUP BY tool
    ) AS k
    GROUP BY tool
)
{{template "repairs_answer" .}}
{{template "settings" ""}}
