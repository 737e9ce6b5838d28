SELECT
    toDateTime(intDiv(toUInt32(toDateTime(t.bucket, 'UTC')), {step:UInt32}) * {step:UInt32}, 'UTC') AS time,
    t.tool AS tool,
    if(t.client_version = '', t.client_name, concat(t.client_name, '@', t.client_version)) AS client,
    t.outcome AS outcome,
    t.revision_client AS revision_client,
    t.revision_server AS revision_server,
    t.adapter_id AS adapter,
    t.privilege AS privilege,
    t.approval AS approval,
    t.service AS service,
    t.environment AS environment,
    count() AS calls,
    countIf(t.revision_client != '' AND t.revision_server != '' AND t.revision_client != t.revision_server
        AND NOT has({same_contract:Array(Tuple(String, String, String))}, (t.tool, t.revision_client, t.revision_server))) AS stale_calls,
    countIf(t.side_effect_started) AS side_effect_started,
    toUInt64(sum(greatest(t.external_requests, 0))) AS external_requests
FROM
(
    SELECT time AS bucket, tool, client_name, client_version, toString(outcome) AS outcome,
           revision_client, revision_server, adapter_id, toString(privilege) AS privilege,
           toString(approval) AS approval, service, environment, side_effect_started, external_requests
    FROM 
(
    SELECT time, event_id, tool, service, service_version, environment,
           request_id, session_id, run_id, client_name, client_version,
           revision_client, revision_server, revision_validated,
           outcome, adapter_id, approval, privilege, external_target, external_requests,
           side_effect_started, args_raw, args_normalized
    FROM mcpdrift.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.call' AND audited
  AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
      AND run_id = {run_id:String}
      AND session_id = {session_id:String}
      AND request_id = {request_id:String}
      AND (time, event_id) > ({after_time:DateTime64(9, 'UTC')}, {after_id:UInt64})
    UNION ALL
    SELECT time, event_id, tool, service, service_version, environment,
           request_id, session_id, run_id, client_name, client_version,
           revision_client, revision_server, revision_validated,
           outcome, adapter_id, approval, privilege, external_target, external_requests,
           side_effect_started, args_raw, args_normalized
    FROM mcpdrift.audit_calls
    WHERE tenant = {tenant:String}
  AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
      AND run_id = {run_id:String}
      AND session_id = {session_id:String}
      AND request_id = {request_id:String}
      AND (time, event_id) > ({after_time:DateTime64(9, 'UTC')}, {after_id:UInt64})
)
) AS t
GROUP BY time, tool, client, outcome, revision_client, revision_server, adapter, privilege, approval, service, environment
ORDER BY tool, client, outcome, revision_client, revision_server, adapter, privilege, approval, service, environment, time WITH FILL FROM {series_from:DateTime('UTC')} TO {series_to:DateTime('UTC')} STEP {step:UInt32}
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
