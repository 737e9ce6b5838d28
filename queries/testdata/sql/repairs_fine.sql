WITH
call_totals AS
(
    SELECT tool,
           sum(t.calls_rejected_stale) AS stale_rejections,
           sum(t.calls_rejected) + sum(t.calls_removed) AS rejections,
           sum(t.retries) AS retry_calls
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
repair_totals AS
(
    SELECT tool,
           sumIf(t.repairs, repair_action = 'refresh_retry') AS refresh_retries,
           sumIf(t.repairs, repair_action = 'model_repair') AS model_repairs,
           sumIf(t.repairs, repair_action = 'human_approval') AS human_approvals,
           sumIf(t.repairs, repair_action = 'human_approval' AND repair_result = 'failure') AS human_approvals_denied,
           sumIf(t.repairs, repair_action = 'abandon') AS abandons,
           sumIf(t.repairs, repair_automatic AND repair_action IN ('refresh_retry', 'model_repair')) AS automatic_repairs,
           sumIf(t.repairs, repair_automatic AND repair_action IN ('refresh_retry', 'model_repair') AND repair_result = 'success') AS automatic_succeeded,
           sumIf(t.repairs, repair_automatic AND repair_action IN ('refresh_retry', 'model_repair') AND repair_result = 'failure') AS automatic_failed,
           quantilesTDigestMergeIf(0.5, 0.95)(t.duration_ms, t.repair_result = 'success'
               AND t.repair_automatic AND t.repair_action IN ('refresh_retry', 'model_repair')) AS automatic_ms,
           quantilesTDigestMergeIf(0.5, 0.95)(t.duration_ms, t.repair_result = 'success'
               AND NOT (t.repair_automatic AND t.repair_action IN ('refresh_retry', 'model_repair'))) AS human_ms
    FROM
    (
    SELECT toStartOfMinute(time) AS bucket, tool, revision_client, change_class, repair_action, repair_automatic,
           repair_result, service, environment, client_name, client_version, count() AS repairs,
           quantilesTDigestStateIf(0.5, 0.95)(repair_duration_ms, repair_duration_ms > 0) AS duration_ms,
           min(time) AS first_seen, max(time) AS last_seen
    FROM mcpdrift.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.repair'
      AND (time >= {m_from_0:DateTime64(9, 'UTC')} AND time < {m_to_0:DateTime64(9, 'UTC')} OR time >= {m_from_1:DateTime64(9, 'UTC')} AND time < {m_to_1:DateTime64(9, 'UTC')})
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    GROUP BY bucket, tool, revision_client, change_class, repair_action, repair_automatic,
             repair_result, service, environment, client_name, client_version
    UNION ALL
    SELECT hour AS bucket, tool, revision_client, change_class, repair_action, repair_automatic,
       repair_result, service, environment, client_name, client_version, repairs, duration_ms,
       first_seen, last_seen
    FROM mcpdrift.repairs_1h
    WHERE tenant = {tenant:String}
      AND (hour >= {h_from_0:DateTime('UTC')} AND hour < {h_to_0:DateTime('UTC')} OR hour >= {h_from_1:DateTime('UTC')} AND hour < {h_to_1:DateTime('UTC')})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    UNION ALL
    SELECT day AS bucket, tool, revision_client, change_class, repair_action, repair_automatic,
       repair_result, service, environment, client_name, client_version, repairs, duration_ms,
       first_seen, last_seen
    FROM mcpdrift.repairs_1d
    WHERE tenant = {tenant:String}
      AND (day >= {d_from_0:DateTime('UTC')} AND day < {d_to_0:DateTime('UTC')} OR day >= {d_from_1:DateTime('UTC')} AND day < {d_to_1:DateTime('UTC')})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    ) AS t
    GROUP BY tool
),
kind_totals AS
(
    SELECT tool,
           sum(k.incompatible) AS incompatible_rejections,
           sum(k.invalid) AS invalid_rejections,
           sum(k.removed) AS removed_calls,
           sum(k.after_stale) AS retries_after_stale,
           sum(k.after_incompatible) AS retries_after_incompatible,
           sum(k.after_invalid) AS retries_after_invalid,
           sum(k.after_removed) AS retries_after_removed,
           sum(k.after_other) AS retries_after_other
    FROM
    (
        SELECT tool,
               sumIf(r.calls, r.outcome = 'rejected_incompatible') AS incompatible,
               sumIf(r.calls, r.outcome = 'rejected_invalid') AS invalid,
               sumIf(r.calls, r.outcome = 'removed') AS removed,
               toUInt64(0) AS after_stale, toUInt64(0) AS after_incompatible, toUInt64(0) AS after_invalid,
               toUInt64(0) AS after_removed, toUInt64(0) AS after_other
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
        ) AS r
        GROUP BY tool
        UNION ALL
        SELECT tool, toUInt64(0), toUInt64(0), toUInt64(0),
               sumIf(t.retries, t.retry_after = 'rejected_stale'),
               sumIf(t.retries, t.retry_after = 'rejected_incompatible'),
               sumIf(t.retries, t.retry_after = 'rejected_invalid'),
               sumIf(t.retries, t.retry_after = 'removed'),
               sumIf(t.retries, t.retry_after NOT IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid', 'removed'))
        FROM
        (
    SELECT tool, retry_after, count() AS retries
    FROM mcpdrift.recent_calls
    WHERE tenant = {tenant:String}
      AND (time >= {m_from_0:DateTime64(9, 'UTC')} AND time < {m_to_0:DateTime64(9, 'UTC')} OR time >= {m_from_1:DateTime64(9, 'UTC')} AND time < {m_to_1:DateTime64(9, 'UTC')})
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
      AND retry
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    GROUP BY tool, retry_after
    UNION ALL
    SELECT tool, retry_after, retries
    FROM mcpdrift.retries_1h
    WHERE tenant = {tenant:String}
      AND ((hour >= {h_from_0:DateTime('UTC')} AND hour < {h_to_0:DateTime('UTC')} OR hour >= {h_from_1:DateTime('UTC')} AND hour < {h_to_1:DateTime('UTC')}) OR (hour >= {d_from_0:DateTime('UTC')} AND hour < {d_to_0:DateTime('UTC')} OR hour >= {d_from_1:DateTime('UTC')} AND hour < {d_to_1:DateTime('UTC')}))
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
        ) AS t
        GROUP BY tool
    ) AS k
    GROUP BY tool
)
SELECT
    tool,
    stale_rejections,
    rejections,
    retry_calls,
    if(rejections > 0, retry_calls / rejections, NULL) AS amplification,
    incompatible_rejections,
    invalid_rejections,
    removed_calls,
    retries_after_stale,
    retries_after_incompatible,
    retries_after_invalid,
    retries_after_removed,
    retries_after_other,
    if(stale_rejections > 0, retries_after_stale / stale_rejections, NULL) AS amplification_stale,
    if(incompatible_rejections > 0, retries_after_incompatible / incompatible_rejections, NULL) AS amplification_incompatible,
    if(invalid_rejections > 0, retries_after_invalid / invalid_rejections, NULL) AS amplification_invalid,
    if(removed_calls > 0, retries_after_removed / removed_calls, NULL) AS amplification_removed,
    refresh_retries,
    model_repairs,
    human_approvals,
    human_approvals_denied,
    abandons,
    automatic_repairs,
    automatic_succeeded,
    automatic_failed,
    if(automatic_succeeded + automatic_failed > 0,
       automatic_succeeded / (automatic_succeeded + automatic_failed), NULL) AS automatic_success_rate,
    if(empty(automatic_ms) OR isNaN(automatic_ms[1]), NULL, round(automatic_ms[1], 1)) AS automatic_repair_p50_ms,
    if(empty(automatic_ms) OR isNaN(automatic_ms[2]), NULL, round(automatic_ms[2], 1)) AS automatic_repair_p95_ms,
    if(empty(human_ms) OR isNaN(human_ms[1]), NULL, round(human_ms[1], 1)) AS human_repair_p50_ms,
    if(empty(human_ms) OR isNaN(human_ms[2]), NULL, round(human_ms[2], 1)) AS human_repair_p95_ms
FROM call_totals
FULL OUTER JOIN repair_totals USING (tool)
LEFT JOIN kind_totals USING (tool)
WHERE rejections > 0 OR retry_calls > 0 OR refresh_retries + model_repairs + human_approvals + abandons > 0
ORDER BY tool
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
