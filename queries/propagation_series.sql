-- The notification propagation per bucket of {step} seconds (series.go),
-- by tool if asked: each notified (session, tool) of propagation.sql
-- counted in the bucket of its notification (sent before the window: its
-- first bucket), with the lags of the bucket's refreshed sessions (exact,
-- interpolated; null when none) and their stale calls.
WITH
{{template "propagation_counted" .}}
SELECT
    toDateTime(intDiv(toUInt32(toDateTime(greatest(sent, {from:DateTime64(9, 'UTC')}), 'UTC')), {step:UInt32}) * {step:UInt32}, 'UTC') AS time,
    {{dim .F.G.Tool "counted.tool" "tool"}},
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
ORDER BY tool, {{template "series_fill"}}
{{template "settings" ""}}
