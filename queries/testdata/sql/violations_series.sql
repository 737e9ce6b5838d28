SELECT
    toDateTime(intDiv(toUInt32(toDateTime(t.bucket, 'UTC')), {step:UInt32}) * {step:UInt32}, 'UTC') AS time,
    t.kind AS kind,
    t.tool AS tool,
    if(t.client_version = '', t.client_name, concat(t.client_name, '@', t.client_version)) AS client,
    t.service AS service,
    t.outcome AS outcome,
    count() AS violations
FROM
(
    SELECT time AS bucket, toString(kind) AS kind, tool, client_name, client_version, service, toString(outcome) AS outcome
    FROM mcpdrift.violation_candidates
    WHERE tenant = {tenant:String}
  AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
          AND NOT (kind = 'retry_across_change' AND outcome = '' AND request_id != ''
                   AND (tool, session_id, run_id, request_id) IN
                       (SELECT tool, session_id, run_id, request_id
                        FROM mcpdrift.violation_candidates
                        WHERE tenant = {tenant:String} AND kind = 'retry_across_change' AND outcome != ''
  AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))))
    UNION ALL
    SELECT time AS bucket, 'removed_tool_success' AS kind, tool, client_name, client_version, service, toString(outcome) AS outcome
    FROM mcpdrift.adapter_call_candidates
    WHERE tenant = {tenant:String}
      AND adapter_id IN {removed_adapters:Array(String)}
  AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
) AS t
GROUP BY time, kind, tool, client, service, outcome
ORDER BY kind, tool, client, service, outcome, time WITH FILL FROM {series_from:DateTime('UTC')} TO {series_to:DateTime('UTC')} STEP {step:UInt32}
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
