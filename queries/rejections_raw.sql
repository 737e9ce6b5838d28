-- Rejections computed from the raw events: the reference for rejections.sql.
SELECT
    tool,
    revision_client,
    revision_server,
    toString(outcome) AS outcome,
    error_code,
    client_name,
    client_version,
    rejected,
    tool_calls,
    rejected / tool_calls AS rejection_rate,
    side_effect_violations,
    sessions,
    first_seen,
    last_seen
FROM
(
    SELECT
        tool, revision_client, revision_server, outcome, error_code, client_name, client_version,
        count() AS rejected,
        sum(count()) OVER (PARTITION BY tool) AS tool_calls,
        countIf(side_effect_started) AS side_effect_violations,
        uniqHLL12If(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
        min(time) AS first_seen,
        max(time) AS last_seen
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.call'
      {{- template "raw_filter" .}}
    GROUP BY tool, revision_client, revision_server, outcome, error_code, client_name, client_version
)
WHERE outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid', 'removed')
ORDER BY tool, revision_client, revision_server, outcome, error_code, client_name, client_version
{{template "settings" ""}}
