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
        uniqHLL12Merge(t.sessions) AS sessions,
        uniqHLL12Merge(t.runs) AS runs,
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
    GROUP BY tool, revision_client, revision_server
),
previous AS
(
    SELECT tool, revision_client, revision_server, sum(h.calls) AS calls_previous
    FROM
    (
    SELECT tool, revision_client, revision_server, toUInt64(1) AS calls
    FROM mcpdrift.recent_calls
    WHERE tenant = {tenant:String}
      AND (time >= {pm_from_0:DateTime64(9, 'UTC')} AND time < {pm_to_0:DateTime64(9, 'UTC')} OR time >= {pm_from_1:DateTime64(9, 'UTC')} AND time < {pm_to_1:DateTime64(9, 'UTC')})
      AND time >= {previous_from:DateTime64(9, 'UTC')} AND time < {from:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    UNION ALL
    SELECT tool, revision_client, revision_server, calls
    FROM mcpdrift.calls_1h
    WHERE tenant = {tenant:String}
      AND (hour >= {ph_from_0:DateTime('UTC')} AND hour < {ph_to_0:DateTime('UTC')} OR hour >= {ph_from_1:DateTime('UTC')} AND hour < {ph_to_1:DateTime('UTC')})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    UNION ALL
    SELECT tool, revision_client, revision_server, calls
    FROM mcpdrift.calls_1d
    WHERE tenant = {tenant:String}
      AND (day >= {pd_from_0:DateTime('UTC')} AND day < {pd_to_0:DateTime('UTC')} OR day >= {pd_from_1:DateTime('UTC')} AND day < {pd_to_1:DateTime('UTC')})
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
    if(revision_client = '', NULL, toBool(revision_client != revision_server)) AS stale,
    calls, current, normalized, rejected, removed, failed, sessions, runs, clients, first_seen, last_seen,
    calls_previous,
    {previous_from:DateTime64(9, 'UTC')} AS previous_from,
    (SELECT min(first_seen) FROM mcpdrift.calls_1d WHERE tenant = {tenant:String}) AS history_from
FROM totals
LEFT JOIN previous USING (tool, revision_client, revision_server)
ORDER BY tool, revision_client, revision_server
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
