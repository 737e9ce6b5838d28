SELECT
    toDateTime(intDiv(toUInt32(toDateTime(t.at, 'UTC')), {step:UInt32}) * {step:UInt32}, 'UTC') AS time,
    if(t.client_version = '', t.client_name, concat(t.client_name, '@', t.client_version)) AS client,
    t.tool AS tool,
    countIf(t.contract_error) AS contract_errors,
    uniqExactIf((t.session, t.at), NOT t.contract_error) AS refreshes,
    uniqExactIf((t.session, t.at), t.failed) AS failed_refreshes,
    if(refreshes > 0, failed_refreshes / refreshes, NULL) AS refresh_failure_rate
FROM
(
    SELECT client_name, client_version, true AS contract_error, tool, contract_field, false AS failed,
           if(session_id != '', session_id, run_id) AS session, time AS at
    FROM mcpdrift.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.contract_error'
  AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    UNION ALL
    SELECT client_name, client_version, false AS contract_error, '' AS tool, '' AS contract_field,
           refresh_result = 'failed' AS failed,
           if(session_id != '', session_id, run_id) AS session, time AS at
    FROM mcpdrift.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.refresh'
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
      AND service = {service:String}
      AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
) AS t
GROUP BY time, client, tool
ORDER BY client, tool, time WITH FILL FROM {series_from:DateTime('UTC')} TO {series_to:DateTime('UTC')} STEP {step:UInt32}
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
