SELECT
    tool,
    if(client_version = '', client_name, concat(client_name, '@', client_version)) AS client,
    sum(t.calls) AS calls,
    sum(t.calls) - sum(t.unknown) - sum(t.listed) - sum(t.inferred) AS declared,
    sum(t.listed) AS listed,
    sum(t.inferred) AS inferred,
    sum(t.unknown) AS unknown,
    if(sum(t.calls) > 0, sum(t.unknown) / sum(t.calls), NULL) AS unknown_share
FROM
(
    SELECT toStartOfMinute(time) AS bucket, tool, client_name, client_version,
           count() AS calls,
           countIf(revision_client = '') AS unknown,
           countIf(revision_client != '' AND revision_client_source = 'listed') AS listed,
           countIf(revision_client != '' AND revision_client_source = 'inferred') AS inferred
    FROM mcpdrift.recent_calls
    WHERE tenant = {tenant:String}
      AND (time >= {m_from_0:DateTime64(9, 'UTC')} AND time < {m_to_0:DateTime64(9, 'UTC')} OR time >= {m_from_1:DateTime64(9, 'UTC')} AND time < {m_to_1:DateTime64(9, 'UTC')})
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
    GROUP BY bucket, tool, client_name, client_version
    UNION ALL
    SELECT hour AS bucket, tool, client_name, client_version, calls,
           if(revision_client = '', calls, 0) AS unknown,
           if(revision_client != '', calls_listed, 0) AS listed,
           if(revision_client != '', calls_inferred, 0) AS inferred
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
    SELECT day AS bucket, tool, client_name, client_version, calls,
           if(revision_client = '', calls, 0) AS unknown,
           if(revision_client != '', calls_listed, 0) AS listed,
           if(revision_client != '', calls_inferred, 0) AS inferred
    FROM mcpdrift.calls_1d
    WHERE tenant = {tenant:String}
      AND (day >= {d_from_0:DateTime('UTC')} AND day < {d_to_0:DateTime('UTC')} OR day >= {d_from_1:DateTime('UTC')} AND day < {d_to_1:DateTime('UTC')})
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
) AS t
GROUP BY tool, client_name, client_version
ORDER BY tool, client
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
