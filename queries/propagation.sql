-- Notification propagation, served from propagation_events (migration
-- 0004): the list_changed notifications, refreshes and stale calls of every
-- session, one row each. Definitions as in propagation_raw.sql, which
-- computes the same answer from the raw events:
--
-- For each tool and session notified in the window, the notification time
-- is the earliest list_changed of the session for that tool, each taken at
-- time - lag_ms, and the session's first refresh is its first refresh that
-- did not fail at or after it, up to the window's end. A list_changed
-- without a tool concerns every tool, and is reported under tool ''. Stale
-- calls (on the notified tool, any tool for tool '') are counted at or
-- after the notification, and after_refresh at or after the first refresh;
-- a call whose two revisions are one contract under two names (the pairs
-- of {same_contract}) is not stale and not counted.
-- Lags are exact (interpolated) quantiles over refreshed sessions. Service
-- and environment filter the notifications; the client filter applies to
-- the session's client, read from any of its rows here in the window (its
-- notifications, refreshes and stale calls: the raw query also reads its
-- current calls, which only matters for a session whose client is named on
-- none of those).
--
-- Each row also says how long a notified client may have kept the old
-- list: the longest cache hint (ttlMs, cacheScope) of the tool's revisions
-- advertised in the window, from tool_revisions ("propagation_hints" in
-- tiers.tmpl).
--
-- The pairing reads the table four times (notices, sessions, stale calls
-- twice), each a small range of it, and joins small relations: per
-- (session, tool) the earliest notice; per notified session its sorted
-- refresh times and its client; per (session, tool), and per session for
-- the notices that name no tool, the times of its stale calls. The first
-- refresh at or after a notice and the stale calls after it are then found
-- in those arrays.
WITH
{{template "propagation_counted" .}},
{{template "propagation_hints" .}},
p AS
(
SELECT
    tool,
    count() AS notified_sessions,
    countIf(refreshed) AS refreshed_sessions,
    countIf(NOT refreshed) AS never_refreshed,
    if(countIf(refreshed) > 0, round(quantileExactInclusiveIf(0.5)(lag_ms, refreshed), 1), NULL) AS lag_p50_ms,
    if(countIf(refreshed) > 0, round(quantileExactInclusiveIf(0.95)(lag_ms, refreshed), 1), NULL) AS lag_p95_ms,
    if(countIf(refreshed) > 0, maxIf(lag_ms, refreshed), NULL) AS lag_max_ms,
    sum(after_notice) AS stale_calls_after_notice,
    sum(after_refresh) AS stale_calls_after_refresh,
    countIf(after_notice > 0) AS sessions_with_stale_calls
FROM counted
GROUP BY tool
)
{{template "propagation_hinted" .}}
{{template "settings" ""}}
