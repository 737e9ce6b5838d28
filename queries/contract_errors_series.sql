-- The contract-errors report's counts per bucket of {step} seconds
-- (series.go), by client and tool if asked: the contract errors, the
-- refreshes and the failed ones (a refresh, a distinct (session key,
-- time), lies in one bucket, so the points sum to the report's figures),
-- and the bucket's refresh failure rate, null without a refresh. Grouped
-- by tool, the refreshes are in the group without a tool: a refresh
-- re-lists every tool. Read from the events, as contract_errors.sql.
SELECT
    toDateTime(intDiv(toUInt32(toDateTime(t.at, 'UTC')), {step:UInt32}) * {step:UInt32}, 'UTC') AS time,
    {{dim .F.G.Client "if(t.client_version = '', t.client_name, concat(t.client_name, '@', t.client_version))" "client"}},
    {{dim .F.G.Tool "t.tool" "tool"}},
    countIf(t.contract_error) AS contract_errors,
    uniqExactIf((t.session, t.at), NOT t.contract_error) AS refreshes,
    uniqExactIf((t.session, t.at), t.failed) AS failed_refreshes,
    if(refreshes > 0, failed_refreshes / refreshes, NULL) AS refresh_failure_rate
FROM
(
{{- template "client_events" .}}
) AS t
GROUP BY time, client, tool
ORDER BY client, tool, {{template "series_fill"}}
{{template "settings" ""}}
