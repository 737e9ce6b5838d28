-- Contract errors: per client (name@version, the name alone without a
-- version), the client's half of the output contract. contract_errors
-- counts its dev.mcpdrift.contract_error events (a dependent call needed an
-- output field and did not get it), fields the same by tool and field,
-- most first. refreshes counts its tools/list refreshes: a refresh emits
-- one event per tool it found changed, all at the same time, so a refresh
-- is a distinct (session key, time), the session key being the session id,
-- else the run id; failed_refreshes those whose result is failed, and
-- refresh_failure_rate failed_refreshes / refreshes, null without a
-- refresh. sessions counts the distinct session keys of both kinds of
-- event, last_seen the latest of them. The tool filter restricts the
-- contract errors only ("client_events" in tiers.tmpl says why): a client
-- with refreshes and no contract error about the tool is listed with 0.
--
-- Served from the events, without a rollup: both kinds are rare, and the
-- events' sort key (tenant, event_name, tool, …) finds each kind's rows
-- of the tenant as one range (docs/capacity.md gives the measurement).
-- Counts are exact (uniqExact over few rows).
WITH
per_field AS
(
    SELECT client_name, client_version, contract_error, tool, contract_field,
           count() AS n,
           uniqExactIf((session, at), NOT contract_error) AS refresh_ops,
           uniqExactIf((session, at), failed) AS failed_ops,
           uniqExactStateIf(session, session != '') AS session_keys,
           max(at) AS last_at
    FROM
    (
    {{- template "client_events" .}}
    )
    GROUP BY client_name, client_version, contract_error, tool, contract_field
)
-- The refreshes of a client are one group (no tool, no field), so their
-- distinct counts add up over the groups; the sessions are merged.
SELECT
    if(client_version = '', client_name, concat(client_name, '@', client_version)) AS client,
    sumIf(n, contract_error) AS contract_errors,
    arraySort(f -> (-toInt64(f.contract_errors), f.tool, f.field),
              groupArrayIf(CAST((tool, contract_field, n), 'Tuple(tool String, field String, contract_errors UInt64)'),
                           contract_error)) AS fields,
    sum(refresh_ops) AS refreshes,
    sum(failed_ops) AS failed_refreshes,
    if(sum(refresh_ops) > 0, sum(failed_ops) / sum(refresh_ops), NULL) AS refresh_failure_rate,
    uniqExactMerge(session_keys) AS sessions,
    max(last_at) AS last_seen
FROM per_field
GROUP BY client_name, client_version
ORDER BY client
{{template "settings" ""}}
