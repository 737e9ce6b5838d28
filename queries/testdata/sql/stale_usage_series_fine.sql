SELECT
    toDateTime(intDiv(toUInt32(toDateTime(t.bucket, 'UTC')), {step:UInt32}) * {step:UInt32}, 'UTC') AS time,
    t.tool AS tool,
    t.revision_client AS revision_client,
    t.revision_server AS revision_server,
    if(t.client_version = '', t.client_name, concat(t.client_name, '@', t.client_version)) AS client,
    sum(t.calls) AS calls,
    sumIf(t.calls, t.revision_client != '' AND t.revision_client != t.revision_server
        AND NOT has({same_contract:Array(Tuple(String, String, String))}, (t.tool, t.revision_client, t.revision_server))) AS stale_calls,
    sum(t.calls_current) AS current,
    sum(t.calls_normalized) AS normalized,
    sum(t.calls_rejected) AS rejected,
    sum(t.calls_removed) AS removed,
    sum(t.calls_failed) AS failed
FROM
(
    SELECT m.bucket AS bucket, tool, revision_client, revision_server, service, environment,
           client_name, client_version, m.calls AS calls,
           if(outcome = 'current', m.calls, 0) AS calls_current,
           if(outcome = 'normalized', m.calls, 0) AS calls_normalized,
           if(outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid'), m.calls, 0) AS calls_rejected,
           if(outcome = 'rejected_stale', m.calls, 0) AS calls_rejected_stale,
           if(outcome = 'removed', m.calls, 0) AS calls_removed,
           if(outcome = 'failed', m.calls, 0) AS calls_failed,
           retries, sessions, runs, first_seen, last_seen
    FROM
    (
    SELECT minute AS bucket, tool, revision_client, revision_server, outcome, adapter_id, service,
       environment, client_name, client_version, privilege, error_code, calls, side_effects,
       retries, sessions, runs, first_seen, last_seen, max_session_age_s
    FROM (
        SELECT tenant, toStartOfMinute(time) AS minute, tool, revision_client, revision_server, outcome,
               adapter_id, service, environment, client_name, client_version, privilege, error_code,
               count() AS calls, countIf(side_effect_started) AS side_effects, countIf(retry) AS retries,
               uniqHLL12StateIf(session, session != '') AS sessions, uniqHLL12StateIf(run_id, run_id != '') AS runs,
               min(time) AS first_seen, max(time) AS last_seen, max(session_age_s) AS max_session_age_s
    FROM mcpdrift.recent_calls
    WHERE tenant = {tenant:String}
      AND (time >= {m_from_0:DateTime64(9, 'UTC')} AND time < {m_to_0:DateTime64(9, 'UTC')} OR time >= {m_from_1:DateTime64(9, 'UTC')} AND time < {m_to_1:DateTime64(9, 'UTC')})
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
        GROUP BY tenant, minute, tool, revision_client, revision_server, outcome, adapter_id,
                 service, environment, client_name, client_version, privilege, error_code
    )
    WHERE tenant = {tenant:String}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    UNION ALL
    SELECT hour AS bucket, tool, revision_client, revision_server, outcome, adapter_id, service,
       environment, client_name, client_version, privilege, error_code, calls, side_effects,
       retries, sessions, runs, first_seen, last_seen, max_session_age_s
    FROM mcpdrift.calls_1h
    WHERE tenant = {tenant:String}
      AND (hour >= {h_from_0:DateTime('UTC')} AND hour < {h_to_0:DateTime('UTC')} OR hour >= {h_from_1:DateTime('UTC')} AND hour < {h_to_1:DateTime('UTC')})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    UNION ALL
    SELECT day AS bucket, tool, revision_client, revision_server, outcome, adapter_id, service,
       environment, client_name, client_version, privilege, error_code, calls, side_effects,
       retries, sessions, runs, first_seen, last_seen, max_session_age_s
    FROM mcpdrift.calls_1d
    WHERE tenant = {tenant:String}
      AND (day >= {d_from_0:DateTime('UTC')} AND day < {d_to_0:DateTime('UTC')} OR day >= {d_from_1:DateTime('UTC')} AND day < {d_to_1:DateTime('UTC')})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    ) AS m
) AS t
GROUP BY time, tool, revision_client, revision_server, client
ORDER BY tool, revision_client, revision_server, client, time WITH FILL FROM {series_from:DateTime('UTC')} TO {series_to:DateTime('UTC')} STEP {step:UInt32}
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
