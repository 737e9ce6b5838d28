-- Rejections by tool, revisions, outcome, error code and client: how many
-- (calls rejected as stale, incompatible or invalid, and calls to a removed
-- tool, outcome removed: each failed before it ran),
-- the rejection rate (rejected calls of the group / all calls of the tool in
-- the window, under the same filter), and the rejected calls whose side
-- effect had already started (safety violations: Violations lists them one
-- by one). The rejected calls come from rejected_*, which keeps the client;
-- the tool's calls ("tool_calls") from usage_* when the filter names no
-- client, from the call rollups otherwise. rejections_raw.sql is the same
-- report from events.
WITH
traffic_by_tool AS
(
    SELECT tool, sum(t.calls) AS tool_calls
    FROM
    (
    {{- template "tool_calls" .}}
    ) AS t
    GROUP BY tool
)
SELECT
    r.tool AS tool,
    r.revision_client AS revision_client,
    r.revision_server AS revision_server,
    toString(r.outcome) AS outcome,
    r.error_code AS error_code,
    r.client_name AS client_name,
    r.client_version AS client_version,
    r.rejected AS rejected,
    c.tool_calls AS tool_calls,
    r.rejected / c.tool_calls AS rejection_rate,
    r.side_effect_violations AS side_effect_violations,
    r.sessions AS sessions,
    r.first_seen AS first_seen,
    r.last_seen AS last_seen
FROM
(
    SELECT
        tool, revision_client, revision_server, outcome, error_code, client_name, client_version,
        sum(t.calls) AS rejected,
        sum(t.side_effects) AS side_effect_violations,
        uniqHLL12Merge(t.sessions) AS sessions,
        min(t.first_seen) AS first_seen,
        max(t.last_seen) AS last_seen
    FROM
    (
    {{- template "rejected" .}}
    ) AS t
    GROUP BY tool, revision_client, revision_server, outcome, error_code, client_name, client_version
) AS r
INNER JOIN traffic_by_tool AS c ON c.tool = r.tool
ORDER BY tool, revision_client, revision_server, outcome, error_code, client_name, client_version
{{template "settings" ""}}
