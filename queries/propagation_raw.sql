-- Notification propagation, from the raw events: the reference that
-- propagation.sql (served from propagation_events) must equal, and its
-- fallback.
--
-- For each tool and session notified in the window, the notification time
-- is the earliest list_changed of the session for that tool, each taken at
-- time - notification_lag_ms (so a server's "sent" and a client's
-- "received" event agree), and the session's first refresh is its first
-- tools/list refresh (refresh_result not failed; a refresh re-lists every
-- tool) at or after it, up to the window's end. A list_changed without a
-- tool concerns every tool, and is reported under tool ''.
--
-- Stale calls: calls of the session, on the notified tool (any tool for
-- tool ''), whose client revision is set and differs from the executing
-- revision, and is not its contract under another name (the pairs of
-- {same_contract}), sent at or after the notification; after_refresh counts those
-- sent after the session had refreshed (queued calls sent with old
-- arguments). Lags are exact (interpolated) quantiles over refreshed
-- sessions. The cache hint of each row is propagation.sql's
-- ("propagation_hints" in tiers.tmpl). The client filter applies to the session's client, read from
-- any of its events in the window; service and environment to the
-- notifications.
WITH
notices AS
(
    SELECT tool,
           if(session_id != '', session_id, run_id) AS session,
           min(time - toIntervalMillisecond(notification_lag_ms)) AS sent
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.list_changed'
      AND (session_id != '' OR run_id != '')
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
      {{- template "coarse_filter" .}}
    GROUP BY tool, session
),
clients AS
(
    SELECT if(session_id != '', session_id, run_id) AS session,
           argMax(e.client_name, e.client_name != '') AS client_name,
           argMax(e.client_version, e.client_name != '') AS client_version
    FROM {{.Database}}.events AS e
    WHERE tenant = {tenant:String}
      AND event_name IN ('mcp.drift.list_changed', 'mcp.drift.refresh', 'mcp.drift.call')
      AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
      AND if(session_id != '', session_id, run_id) IN (SELECT session FROM notices)
    GROUP BY session
),
firsts AS
(
    SELECT n.tool AS tool, n.session AS session, n.sent AS sent,
           countIf(r.time >= n.sent) > 0 AS refreshed,
           minIf(r.time, r.time >= n.sent) AS refreshed_at
    FROM notices AS n
    LEFT JOIN
    (
        SELECT if(session_id != '', session_id, run_id) AS session, time
        FROM {{.Database}}.events
        WHERE tenant = {tenant:String}
          AND event_name = 'mcp.drift.refresh'
          AND refresh_result != 'failed'
          AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
          AND if(session_id != '', session_id, run_id) IN (SELECT session FROM notices)
    ) AS r ON r.session = n.session
    GROUP BY tool, session, sent
),
stale AS
(
    SELECT f.tool AS tool, f.session AS session,
           countIf(c.time >= f.sent) AS after_notice,
           countIf(f.refreshed AND c.time >= f.refreshed_at) AS after_refresh
    FROM firsts AS f
    INNER JOIN
    (
        SELECT if(session_id != '', session_id, run_id) AS session, tool, time
        FROM {{.Database}}.events
        WHERE tenant = {tenant:String}
          AND event_name = 'mcp.drift.call'
          AND revision_client != '' AND revision_client != revision_server
          {{- if .F.SameContract}}
          AND NOT has({same_contract:Array(Tuple(String, String, String))}, (tool, revision_client, revision_server))
          {{- end}}
          AND time >= {from:DateTime64(9, 'UTC')} AND time < {to:DateTime64(9, 'UTC')}
          AND if(session_id != '', session_id, run_id) IN (SELECT session FROM notices)
    ) AS c ON c.session = f.session
    WHERE f.tool = '' OR c.tool = f.tool
    GROUP BY tool, session
),
{{template "propagation_hints" .}},
p AS
(
SELECT
    f.tool AS tool,
    count() AS notified_sessions,
    countIf(f.refreshed) AS refreshed_sessions,
    countIf(NOT f.refreshed) AS never_refreshed,
    if(countIf(f.refreshed) > 0, round(quantileExactInclusiveIf(0.5)(
        toUnixTimestamp64Milli(f.refreshed_at) - toUnixTimestamp64Milli(f.sent), f.refreshed), 1), NULL) AS lag_p50_ms,
    if(countIf(f.refreshed) > 0, round(quantileExactInclusiveIf(0.95)(
        toUnixTimestamp64Milli(f.refreshed_at) - toUnixTimestamp64Milli(f.sent), f.refreshed), 1), NULL) AS lag_p95_ms,
    if(countIf(f.refreshed) > 0, maxIf(toUnixTimestamp64Milli(f.refreshed_at) - toUnixTimestamp64Milli(f.sent), f.refreshed), NULL) AS lag_max_ms,
    sum(s.after_notice) AS stale_calls_after_notice,
    sum(s.after_refresh) AS stale_calls_after_refresh,
    countIf(s.after_notice > 0) AS sessions_with_stale_calls
FROM firsts AS f
LEFT JOIN stale AS s ON s.tool = f.tool AND s.session = f.session
LEFT JOIN clients AS cl ON cl.session = f.session
{{- if or .F.Client .F.Exclude}}
WHERE true
{{- if .F.Client}}
  AND (cl.client_name = {client:String} OR concat(cl.client_name, '@', cl.client_version) = {client:String})
{{- end}}
{{- if .F.Exclude}}
  AND NOT has({exclude_clients:Array(String)}, cl.client_name)
  AND NOT has({exclude_clients:Array(String)}, concat(cl.client_name, '@', cl.client_version))
{{- end}}
{{- end}}
GROUP BY f.tool
)
{{template "propagation_hinted" .}}
{{template "settings" ""}}
