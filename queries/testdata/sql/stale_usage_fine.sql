WITH
totals AS
(
    SELECT
        tool,
        revision_client,
        revision_server,
        sum(t.calls) AS calls,
        sum(t.calls_current) AS current,
        sum(t.calls_normalized) AS normalized,
        sum(t.calls_rejected) AS rejected,
        sum(t.calls_removed) AS removed,
        sum(t.calls_failed) AS failed,
        uniqMerge(t.sessions) AS sessions,
        uniqMerge(t.runs) AS runs,
        uniqExactIf((t.client_name, t.client_version), t.client_name != '' OR t.client_version != '') AS clients,
        min(t.first_seen) AS first_seen,
        max(t.last_seen) AS last_seen
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
               uniqStateIf(session, session != '') AS sessions, uniqStateIf(run_id, run_id != '') AS runs,
               min(time) AS first_seen, max(time) AS last_seen, max(session_age_s) AS max_session_age_s
    FROM mcpdrift.recent_calls
    WHERE tenant = {tenant:String}
      AND time >= {m_lo:DateTime('UTC')} AND time < {m_hi:DateTime('UTC')}
      AND arrayExists((a, b) -> time >= a AND time < b, {m_from:Array(DateTime('UTC'))}, {m_to:Array(DateTime('UTC'))})
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
      AND hour >= {h_lo:DateTime('UTC')} AND hour < {h_hi:DateTime('UTC')}
      AND arrayExists((a, b) -> hour >= a AND hour < b, {h_from:Array(DateTime('UTC'))}, {h_to:Array(DateTime('UTC'))})
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
      AND day >= {d_lo:DateTime('UTC')} AND day < {d_hi:DateTime('UTC')}
      AND arrayExists((a, b) -> day >= a AND day < b, {d_from:Array(DateTime('UTC'))}, {d_to:Array(DateTime('UTC'))})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    ) AS m
    ) AS t
    GROUP BY tool, revision_client, revision_server
),
halves AS
(
    SELECT
        tool,
        revision_client,
        revision_server,
        sumIf(h.calls, h.bucket < {mid:DateTime('UTC')}) AS calls_first_half,
        sumIf(h.calls, h.bucket >= {mid:DateTime('UTC')}) AS calls_second_half
    FROM
    (
    SELECT toStartOfMinute(time) AS bucket, tool, revision_client, revision_server, toUInt64(1) AS calls
    FROM mcpdrift.recent_calls
    WHERE tenant = {tenant:String}
      AND time >= {tm_lo:DateTime('UTC')} AND time < {tm_hi:DateTime('UTC')}
      AND arrayExists((a, b) -> time >= a AND time < b, {tm_from:Array(DateTime('UTC'))}, {tm_to:Array(DateTime('UTC'))})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    UNION ALL
    SELECT hour AS bucket, tool, revision_client, revision_server, calls
    FROM mcpdrift.calls_1h
    WHERE tenant = {tenant:String}
      AND hour >= {th_lo:DateTime('UTC')} AND hour < {th_hi:DateTime('UTC')}
      AND arrayExists((a, b) -> hour >= a AND hour < b, {th_from:Array(DateTime('UTC'))}, {th_to:Array(DateTime('UTC'))})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    UNION ALL
    SELECT day AS bucket, tool, revision_client, revision_server, calls
    FROM mcpdrift.calls_1d
    WHERE tenant = {tenant:String}
      AND day >= {td_lo:DateTime('UTC')} AND day < {td_hi:DateTime('UTC')}
      AND arrayExists((a, b) -> day >= a AND day < b, {td_from:Array(DateTime('UTC'))}, {td_to:Array(DateTime('UTC'))})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    ) AS h
    GROUP BY tool, revision_client, revision_server
)
SELECT
    tool,
    revision_client,
    revision_server,
    toBool(revision_client != '' AND revision_client != revision_server) AS stale,
    calls, current, normalized, rejected, removed, failed, sessions, runs, clients, first_seen, last_seen,
    calls_first_half,
    calls_second_half
FROM totals
LEFT JOIN halves USING (tool, revision_client, revision_server)
ORDER BY tool, revision_client, revision_server
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
