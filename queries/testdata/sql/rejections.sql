WITH
traffic_by_tool AS
(
    SELECT tool, sum(t.calls) AS tool_calls
    FROM
    (
    SELECT tool, count() AS calls
    FROM mcpdrift.recent_calls
    WHERE tenant = {tenant:String}
      AND (time >= {m_from_0:DateTime64(9, 'UTC')} AND time < {m_to_0:DateTime64(9, 'UTC')} OR time >= {m_from_1:DateTime64(9, 'UTC')} AND time < {m_to_1:DateTime64(9, 'UTC')})
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
    GROUP BY tool
    UNION ALL
    SELECT tool, calls
    FROM mcpdrift.usage_1h
    WHERE tenant = {tenant:String}
      AND (hour >= {h_from_0:DateTime('UTC')} AND hour < {h_to_0:DateTime('UTC')} OR hour >= {h_from_1:DateTime('UTC')} AND hour < {h_to_1:DateTime('UTC')})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
    UNION ALL
    SELECT tool, calls
    FROM mcpdrift.usage_1d
    WHERE tenant = {tenant:String}
      AND (day >= {d_from_0:DateTime('UTC')} AND day < {d_to_0:DateTime('UTC')} OR day >= {d_from_1:DateTime('UTC')} AND day < {d_to_1:DateTime('UTC')})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
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
    SELECT toStartOfMinute(time) AS bucket, tool, revision_client, revision_server, outcome, error_code,
           client_name, client_version, count() AS calls, countIf(side_effect_started) AS side_effects,
           uniqHLL12StateIf(session, session != '') AS sessions, min(time) AS first_seen, max(time) AS last_seen
    FROM mcpdrift.recent_calls
    WHERE tenant = {tenant:String}
      AND (time >= {m_from_0:DateTime64(9, 'UTC')} AND time < {m_to_0:DateTime64(9, 'UTC')} OR time >= {m_from_1:DateTime64(9, 'UTC')} AND time < {m_to_1:DateTime64(9, 'UTC')})
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
      AND outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid', 'removed')
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    GROUP BY bucket, tool, revision_client, revision_server, outcome, error_code, client_name, client_version
    UNION ALL
    SELECT hour AS bucket, tool, revision_client, revision_server, outcome, error_code,
       client_name, client_version, calls, side_effects, sessions, first_seen, last_seen
    FROM mcpdrift.rejected_1h
    WHERE tenant = {tenant:String}
      AND ((hour >= {h_from_0:DateTime('UTC')} AND hour < {h_to_0:DateTime('UTC')} OR hour >= {h_from_1:DateTime('UTC')} AND hour < {h_to_1:DateTime('UTC')}) OR (hour >= {d_from_0:DateTime('UTC')} AND hour < {d_to_0:DateTime('UTC')} OR hour >= {d_from_1:DateTime('UTC')} AND hour < {d_to_1:DateTime('UTC')}))
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    ) AS t
    GROUP BY tool, revision_client, revision_server, outcome, error_code, client_name, client_version
) AS r
INNER JOIN traffic_by_tool AS c ON c.tool = r.tool
ORDER BY tool, revision_client, revision_server, outcome, error_code, client_name, client_version
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
