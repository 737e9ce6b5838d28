-- Stale-revision usage computed from the raw events: the fallback and the
-- reference that the rollup-served stale_usage.sql must equal over the same
-- resolved window. Same columns, same definitions.
SELECT
    tool,
    revision_client,
    revision_server,
    toBool(revision_client != '' AND revision_client != revision_server) AS stale,
    count() AS calls,
    countIf(outcome = 'current') AS current,
    countIf(outcome = 'normalized') AS normalized,
    countIf(outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')) AS rejected,
    countIf(outcome = 'removed') AS removed,
    countIf(outcome = 'failed') AS failed,
    uniqHLL12If(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
    uniqHLL12If(run_id, run_id != '') AS runs,
    uniqExactIf((client_name, client_version), client_name != '' OR client_version != '') AS clients,
    min(time) AS first_seen,
    max(time) AS last_seen,
    countIf(time < {mid:DateTime('UTC')}) AS calls_first_half,
    countIf(time >= {mid:DateTime('UTC')}) AS calls_second_half
FROM {{.Database}}.events
WHERE tenant = {tenant:String}
  AND event_name = 'mcp.drift.call'
  {{- template "raw_filter" .}}
GROUP BY tool, revision_client, revision_server
ORDER BY tool, revision_client, revision_server
{{template "settings" ""}}
