-- Rejections by tool, revisions, outcome, error code and client: how many,
-- the rejection rate (rejected calls of the group / all calls of the tool in
-- the window, under the same filter), and the rejected calls whose side
-- effect had already started (safety violations: Violations lists them one
-- by one). Served from the call rollups; rejections_raw.sql is the same
-- report from events.
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
        sum(t.calls) AS rejected,
        sum(sum(t.calls)) OVER (PARTITION BY tool) AS tool_calls,
        sum(t.side_effects) AS side_effect_violations,
        uniqMerge(t.sessions) AS sessions,
        min(t.first_seen) AS first_seen,
        max(t.last_seen) AS last_seen
    FROM
    (
    {{- template "calls" .}}
    ) AS t
    GROUP BY tool, revision_client, revision_server, outcome, error_code, client_name, client_version
)
WHERE outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
ORDER BY tool, revision_client, revision_server, outcome, error_code, client_name, client_version
