WITH
per_client AS
(
    SELECT adapter_id, tool, client_name, client_version,
           sum(t.calls) AS calls,
           sum(t.normalized) AS normalized,
           sum(t.calls_unknown_age) AS unknown_age,
           sumIf(t.calls, t.privilege = '') AS unknown_privilege,
           uniqHLL12MergeState(t.sessions) AS sessions,
           groupUniqArray(t.service) AS services,
           max(t.privilege) AS max_privilege,
           max(t.max_session_age_s) AS max_session_age_s,
           min(t.first_seen) AS first_seen,
           max(t.last_seen) AS last_seen
    FROM
    (
    SELECT toStartOfMinute(time) AS bucket, adapter_id, tool, service, environment, client_name, client_version, privilege,
           count() AS calls, countIf(outcome = 'normalized') AS normalized, countIf(session_age_s <= 0) AS calls_unknown_age,
           uniqHLL12StateIf(session, session != '') AS sessions, min(time) AS first_seen, max(time) AS last_seen,
           max(session_age_s) AS max_session_age_s
    FROM mcpdrift.recent_calls
    WHERE tenant = {tenant:String}
      AND (time >= {m_from_0:DateTime64(9, 'UTC')} AND time < {m_to_0:DateTime64(9, 'UTC')} OR time >= {m_from_1:DateTime64(9, 'UTC')} AND time < {m_to_1:DateTime64(9, 'UTC')})
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
      AND adapter_id != ''
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    GROUP BY bucket, adapter_id, tool, service, environment, client_name, client_version, privilege
    UNION ALL
    SELECT hour AS bucket, adapter_id, tool, service, environment, client_name, client_version, privilege,
       calls, normalized, calls_unknown_age, sessions, first_seen, last_seen, max_session_age_s
    FROM mcpdrift.adapted_1h
    WHERE tenant = {tenant:String}
      AND ((hour >= {h_from_0:DateTime('UTC')} AND hour < {h_to_0:DateTime('UTC')} OR hour >= {h_from_1:DateTime('UTC')} AND hour < {h_to_1:DateTime('UTC')}) OR (hour >= {d_from_0:DateTime('UTC')} AND hour < {d_to_0:DateTime('UTC')} OR hour >= {d_from_1:DateTime('UTC')} AND hour < {d_to_1:DateTime('UTC')}))
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    ) AS t
    GROUP BY adapter_id, tool, client_name, client_version
),
used AS
(
    SELECT adapter_id,
           argMax(p.tool, p.calls) AS tool,
           sum(p.calls) AS calls,
           sum(p.normalized) AS normalized,
           sum(p.unknown_age) AS unknown_age,
           sum(p.unknown_privilege) AS unknown_privilege,
           uniqHLL12Merge(p.sessions) AS sessions,
           countIf(p.client_name != '' OR p.client_version != '') AS clients,
           arraySort(arrayFilter(s -> s != '', groupUniqArrayArray(p.services))) AS service_names,
           max(p.max_privilege) AS max_privilege,
           max(p.max_session_age_s) AS max_session_age_s,
           min(p.first_seen) AS first_seen,
           max(p.last_seen) AS last_seen,
           groupArray(CAST((p.client_name, p.client_version, p.calls, p.max_session_age_s, toString(p.max_privilege),
                            p.unknown_age, p.unknown_privilege),
                           'Tuple(name String, version String, calls UInt64, max_session_age_s Int64, max_privilege String, unknown_age UInt64, unknown_privilege UInt64)')) AS callers
    FROM per_client AS p
    GROUP BY adapter_id
),
violated AS
(
    SELECT adapter_id, count() AS violations
    FROM
    (
        SELECT adapter_id
        FROM mcpdrift.violation_candidates
        WHERE tenant = {tenant:String}
          AND kind = 'removed_tool_success'
          AND adapter_id != ''
  AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
        UNION ALL
        SELECT adapter_id
        FROM mcpdrift.adapter_call_candidates
        WHERE tenant = {tenant:String}
          AND adapter_id IN
              (SELECT adapter_id FROM mcpdrift.adapters
               WHERE tenant = {tenant:String}
               GROUP BY adapter_id
               HAVING argMax(change_class, declared_at) = 'removal')
  AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    )
    GROUP BY adapter_id
),
before AS
(
    SELECT b.adapter_id AS adapter_id, max(b.last_seen) AS last_seen
    FROM mcpdrift.adapted_1h AS b
    WHERE b.tenant = {tenant:String}
      AND b.hour <= toStartOfHour({from:DateTime64(9, 'UTC')})
      AND b.last_seen < {from:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    GROUP BY adapter_id
),
traffic AS
(
    SELECT tool, sum(t.calls) AS tool_calls
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
    GROUP BY tool
),
registry AS
(
    SELECT adapter_id,
           argMax(a.tool, a.declared_at) AS tool,
           argMax(a.revision_from, a.declared_at) AS revision_from,
           argMax(a.revision_to, a.declared_at) AS revision_to,
           argMax(toString(a.change_class), a.declared_at) AS change_class,
           argMax(a.window_end, a.declared_at) AS window_end,
           argMax(a.service, a.declared_at) AS declared_service,
           argMax(a.environment, a.declared_at) AS declared_environment
    FROM mcpdrift.adapters AS a
    WHERE tenant = {tenant:String}
      AND declared_at < {to:DateTime64(9, 'UTC')}
    GROUP BY adapter_id
    HAVING true
       AND tool = {tool:String}
       AND declared_service = {service:String}
       AND declared_environment = {environment:String}
),
unknown_per_client AS
(
    SELECT tool, client_name, client_version, sum(t.calls) AS calls
    FROM
    (
    SELECT tool, client_name, client_version, count() AS calls
    FROM mcpdrift.recent_calls
    WHERE tenant = {tenant:String}
      AND (time >= {m_from_0:DateTime64(9, 'UTC')} AND time < {m_to_0:DateTime64(9, 'UTC')} OR time >= {m_from_1:DateTime64(9, 'UTC')} AND time < {m_to_1:DateTime64(9, 'UTC')})
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
      AND revision_client = ''
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    GROUP BY tool, client_name, client_version
    UNION ALL
    SELECT tool, client_name, client_version, calls
    FROM mcpdrift.calls_1h
    WHERE tenant = {tenant:String}
      AND (hour >= {h_from_0:DateTime('UTC')} AND hour < {h_to_0:DateTime('UTC')} OR hour >= {h_from_1:DateTime('UTC')} AND hour < {h_to_1:DateTime('UTC')})
      AND revision_client = ''
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    UNION ALL
    SELECT tool, client_name, client_version, calls
    FROM mcpdrift.calls_1d
    WHERE tenant = {tenant:String}
      AND (day >= {d_from_0:DateTime('UTC')} AND day < {d_to_0:DateTime('UTC')} OR day >= {d_from_1:DateTime('UTC')} AND day < {d_to_1:DateTime('UTC')})
      AND revision_client = ''
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    ) AS t
    GROUP BY tool, client_name, client_version
),
unknown AS
(
    SELECT tool,
           sum(k.calls) AS unknown_revision_calls,
           groupArray(CAST((k.client_name, k.client_version, k.calls),
                           'Tuple(name String, version String, calls UInt64)')) AS unknown_callers
    FROM unknown_per_client AS k
    GROUP BY tool
)
SELECT
    if(r.adapter_id != '', r.adapter_id, u.adapter_id) AS adapter_id,
    if(r.adapter_id != '', r.tool, u.tool) AS tool,
    toBool(r.adapter_id != '') AS registered,
    r.revision_from AS revision_from,
    r.revision_to AS revision_to,
    r.change_class AS change_class,
    nullIf(r.window_end, toDateTime(0, 'UTC')) AS window_end,
    u.calls AS calls,
    u.normalized AS would_be_rejected,
    t.tool_calls AS tool_calls,
    if(t.tool_calls > 0, u.calls / t.tool_calls, 0) AS share,
    if(u.calls > 0, u.first_seen, NULL) AS first_seen,
    multiIf(u.calls > 0, u.last_seen, e.adapter_id != '', e.last_seen, NULL) AS last_seen,
    toBool(u.calls > 0) AS last_seen_in_window,
    u.unknown_age AS unknown_age_calls,
    u.unknown_privilege AS unknown_privilege_calls,
    k.unknown_revision_calls AS unknown_revision_calls,
    v.violations AS removed_tool_successes,
    u.sessions AS sessions,
    u.clients AS clients,
    length(u.service_names) AS services,
    u.service_names AS service_names,
    if(u.calls > 0, toString(u.max_privilege), '') AS max_privilege,
    if(u.max_session_age_s > 0, u.max_session_age_s, NULL) AS max_session_age_s,
    u.callers AS callers_raw,
    k.unknown_callers AS unknown_callers_raw
FROM registry AS r
FULL OUTER JOIN used AS u ON u.adapter_id = r.adapter_id
LEFT JOIN traffic AS t ON t.tool = if(r.adapter_id != '', r.tool, u.tool)
LEFT JOIN unknown AS k ON k.tool = if(r.adapter_id != '', r.tool, u.tool)
LEFT JOIN before AS e ON e.adapter_id = if(r.adapter_id != '', r.adapter_id, u.adapter_id)
LEFT JOIN violated AS v ON v.adapter_id = if(r.adapter_id != '', r.adapter_id, u.adapter_id)
ORDER BY adapter_id
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
