-- Stale-revision usage: per tool × client revision × server revision, the
-- calls and what became of them, who made them, when, and the trend
-- (calls in the second half of the window against the first). Served from
-- the call rollups; stale_usage_raw.sql is the same report from events.
--
-- rejected counts the three rejected_* outcomes; removed and failed are
-- counted apart. clients counts distinct name@version pairs (exact: the
-- client is a rollup dimension); sessions and runs merge uniq states.
SELECT
    tool,
    revision_client,
    revision_server,
    toBool(revision_client != '' AND revision_client != revision_server) AS stale,
    sum(t.calls) AS calls,
    sumIf(t.calls, t.outcome = 'current') AS current,
    sumIf(t.calls, t.outcome = 'normalized') AS normalized,
    sumIf(t.calls, t.outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')) AS rejected,
    sumIf(t.calls, t.outcome = 'removed') AS removed,
    sumIf(t.calls, t.outcome = 'failed') AS failed,
    uniqMerge(t.sessions) AS sessions,
    uniqMerge(t.runs) AS runs,
    uniqExactIf((t.client_name, t.client_version), t.client_name != '' OR t.client_version != '') AS clients,
    min(t.first_seen) AS first_seen,
    max(t.last_seen) AS last_seen,
    sumIf(t.calls, t.bucket < {mid:DateTime('UTC')}) AS calls_first_half,
    sumIf(t.calls, t.bucket >= {mid:DateTime('UTC')}) AS calls_second_half
FROM
(
{{- template "calls" .}}
) AS t
GROUP BY tool, revision_client, revision_server
ORDER BY tool, revision_client, revision_server
