SELECT
    toDateTime(intDiv(toUInt32(toDateTime(t.bucket, 'UTC')), {step:UInt32}) * {step:UInt32}, 'UTC') AS time,
    t.tool AS tool,
    t.revision_client AS revision_client,
    t.revision_server AS revision_server,
    toString(t.outcome) AS outcome,
    t.error_code AS error_code,
    if(t.client_version = '', t.client_name, concat(t.client_name, '@', t.client_version)) AS client,
    sum(t.calls) AS rejected,
    sum(t.side_effects) AS side_effect_violations
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
GROUP BY time, tool, revision_client, revision_server, outcome, error_code, client
ORDER BY tool, revision_client, revision_server, outcome, error_code, client, time WITH FILL FROM {series_from:DateTime('UTC')} TO {series_to:DateTime('UTC')} STEP {step:UInt32}
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
