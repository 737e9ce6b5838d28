-- Stale-revision usage computed from the raw events: the fallback and the
-- reference that the rollup-served stale_usage.sql must equal over the same
-- resolved window. Same columns, same definitions.
WITH
previous AS
(
    SELECT tool, revision_client, revision_server, count() AS calls_previous
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.call'
      AND time >= {previous_from:DateTime64(9, 'UTC')} AND time < {from:DateTime64(9, 'UTC')}
      {{- template "filter" .}}
    GROUP BY tool, revision_client, revision_server
),
in_window AS
(
SELECT
    tool,
    revision_client,
    revision_server,
    if(revision_client = '', NULL, toBool(revision_client != revision_server)) AS stale,
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
    max(time) AS last_seen
FROM {{.Database}}.events
WHERE tenant = {tenant:String}
  AND event_name = 'mcp.drift.call'
  {{- template "raw_filter" .}}
GROUP BY tool, revision_client, revision_server
)
SELECT w.*, p.calls_previous AS calls_previous,
       {previous_from:DateTime64(9, 'UTC')} AS previous_from,
       {{template "history" .}} AS history_from
FROM in_window AS w
LEFT JOIN previous AS p USING (tool, revision_client, revision_server)
ORDER BY tool, revision_client, revision_server
{{template "settings" ""}}
