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
    SELECT toStartOfMinute(time) AS bucket, tool, revision_client, revision_server, service, environment,
           count() AS calls,
           countIf(outcome = 'current') AS calls_current,
           countIf(outcome = 'normalized') AS calls_normalized,
           countIf(outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')) AS calls_rejected,
           countIf(outcome = 'rejected_stale') AS calls_rejected_stale,
           countIf(outcome = 'removed') AS calls_removed,
           countIf(outcome = 'failed') AS calls_failed,
           countIf(retry) AS retries,
           uniqHLL12StateIf(session, session != '') AS sessions, uniqHLL12StateIf(run_id, run_id != '') AS runs,
           uniqExactStateIf(client_name, client_version, client_name != '' OR client_version != '') AS clients,
           min(time) AS first_seen, max(time) AS last_seen
    FROM mcpdrift.recent_calls
    WHERE tenant = {tenant:String}
      AND (time >= {m_from_0:DateTime64(9, 'UTC')} AND time < {m_to_0:DateTime64(9, 'UTC')} OR time >= {m_from_1:DateTime64(9, 'UTC')} AND time < {m_to_1:DateTime64(9, 'UTC')})
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
    GROUP BY bucket, tool, revision_client, revision_server, service, environment
    UNION ALL
    SELECT hour AS bucket, tool, revision_client, revision_server, service, environment, calls,
       calls_current, calls_normalized, calls_rejected, calls_rejected_stale, calls_removed,
       calls_failed, retries, sessions, runs, clients, first_seen, last_seen
    FROM mcpdrift.usage_1h
    WHERE tenant = {tenant:String}
      AND (hour >= {h_from_0:DateTime('UTC')} AND hour < {h_to_0:DateTime('UTC')} OR hour >= {h_from_1:DateTime('UTC')} AND hour < {h_to_1:DateTime('UTC')})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
    UNION ALL
    SELECT day AS bucket, tool, revision_client, revision_server, service, environment, calls,
       calls_current, calls_normalized, calls_rejected, calls_rejected_stale, calls_removed,
       calls_failed, retries, sessions, runs, clients, first_seen, last_seen
    FROM mcpdrift.usage_1d
    WHERE tenant = {tenant:String}
      AND (day >= {d_from_0:DateTime('UTC')} AND day < {d_to_0:DateTime('UTC')} OR day >= {d_from_1:DateTime('UTC')} AND day < {d_to_1:DateTime('UTC')})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
) AS t
GROUP BY time, tool, revision_client, revision_server, client
ORDER BY tool, revision_client, revision_server, client, time WITH FILL FROM {series_from:DateTime('UTC')} TO {series_to:DateTime('UTC')} STEP {step:UInt32}
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
