WITH
notices AS
(
    SELECT session, tool, min(time - toIntervalMillisecond(lag_ms)) AS sent
    FROM mcpdrift.propagation_events
    WHERE tenant = {tenant:String} AND kind = 'notice'
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
  AND tool = {tool:String}
  AND service = {service:String}
  AND environment = {environment:String}
    GROUP BY session, tool
),
sessions AS
(
    SELECT session,
           arraySort(groupArrayIf(time, kind = 'refresh')) AS refreshes,
           argMax(e.client_name, e.client_name != '') AS client_name,
           argMax(e.client_version, e.client_name != '') AS client_version
    FROM mcpdrift.propagation_events AS e
    WHERE tenant = {tenant:String}
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
    GROUP BY session
    HAVING countIf(kind = 'notice') > 0
  AND (client_name = {client:String} OR concat(client_name, '@', client_version) = {client:String})
  AND NOT has({exclude_clients:Array(String)}, client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(client_name, '@', client_version))
),
stale AS
(
    SELECT session, tool, false AS all_tools, groupArray(time) AS times
    FROM mcpdrift.propagation_events
    WHERE tenant = {tenant:String} AND kind = 'stale_call'
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
    GROUP BY session, tool
    UNION ALL
    SELECT session, '' AS tool, true AS all_tools, groupArray(time) AS times
    FROM mcpdrift.propagation_events
    WHERE tenant = {tenant:String} AND kind = 'stale_call'
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
    GROUP BY session
),
same_calls AS
(
    SELECT if(session_id != '', session_id, run_id) AS session, tool, time
    FROM mcpdrift.events
    WHERE tenant = {tenant:String} AND event_name = 'mcp.drift.call'
      AND (tool, revision_client, revision_server) IN (SELECT arrayJoin({same_contract:Array(Tuple(String, String, String))}))
      AND (session_id != '' OR run_id != '')
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
),
same_contract AS
(
    SELECT session, tool, false AS all_tools, groupArray(time) AS times
    FROM same_calls
    GROUP BY session, tool
    UNION ALL
    SELECT session, '' AS tool, true AS all_tools, groupArray(time) AS times
    FROM same_calls
    GROUP BY session
),
firsts AS
(
    SELECT n.tool AS tool, n.session AS session, n.sent AS sent,
           arrayExists(r -> r >= n.sent, s.refreshes) AS refreshed,
           arrayFirst(r -> r >= n.sent, s.refreshes) AS refreshed_at
    FROM notices AS n
    INNER JOIN sessions AS s ON s.session = n.session
),
counted AS
(
    SELECT f.tool AS tool, f.sent AS sent, f.refreshed AS refreshed,
           toUnixTimestamp64Milli(f.refreshed_at) - toUnixTimestamp64Milli(f.sent) AS lag_ms,
           toUInt64(arrayCount(t -> t >= f.sent, c.times) - arrayCount(t -> t >= f.sent, x.times)) AS after_notice,
           if(f.refreshed, toUInt64(arrayCount(t -> t >= f.refreshed_at, c.times) - arrayCount(t -> t >= f.refreshed_at, x.times)), 0) AS after_refresh
    FROM firsts AS f
    LEFT JOIN stale AS c ON c.session = f.session AND c.tool = f.tool AND c.all_tools = (f.tool = '')
    LEFT JOIN same_contract AS x ON x.session = f.session AND x.tool = f.tool AND x.all_tools = (f.tool = '')
)
SELECT
    toDateTime(intDiv(toUInt32(toDateTime(greatest(sent, {from:DateTime64(9, 'UTC')}), 'UTC')), {step:UInt32}) * {step:UInt32}, 'UTC') AS time,
    counted.tool AS tool,
    count() AS notified_sessions,
    countIf(refreshed) AS refreshed_sessions,
    countIf(NOT refreshed) AS never_refreshed,
    if(countIf(refreshed) > 0, round(quantileExactInclusiveIf(0.5)(lag_ms, refreshed), 1), NULL) AS lag_p50_ms,
    if(countIf(refreshed) > 0, round(quantileExactInclusiveIf(0.95)(lag_ms, refreshed), 1), NULL) AS lag_p95_ms,
    if(countIf(refreshed) > 0, toFloat64(maxIf(lag_ms, refreshed)), NULL) AS lag_max_ms,
    sum(after_notice) AS stale_calls_after_notice,
    sum(after_refresh) AS stale_calls_after_refresh,
    countIf(after_notice > 0) AS sessions_with_stale_calls
FROM counted
GROUP BY time, tool
ORDER BY tool, time WITH FILL FROM {series_from:DateTime('UTC')} TO {series_to:DateTime('UTC')} STEP {step:UInt32}
SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0
