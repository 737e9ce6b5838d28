-- Version 18: adapted_1h fed from calls_1h, not from the events.
--
--   calls_1h      + calls_unknown_age: the calls that carried no session
--                   age (session_age_s <= 0), the one count adapted_1h kept
--                   that calls_1h could not give it (version 9)
--   calls_1h_mv     computes it
--   adapted_1h_mv ← calls_1h   was ← events
--
-- Why: a view on the events reads every inserted call; a view on calls_1h
-- reads the block calls_1h_mv has just aggregated, one row per hour and
-- group (36,001 rows for 1,000,000 events on docs/capacity.md's load), as
-- the other report rollups (usage_1h, rejected_1h) and calls_1d do. What
-- it saves was within the noise of the ingest bench's all-views floor
-- (go run ./bench -suite ingest -skip-server -events 500000, five runs
-- alternated with version 17: 6.29 to 7.08 CPU-us per event before, 5.33
-- to 9.18 after; medians 6.42 and 6.75), likely because the old view
-- filtered the adapted calls first and so aggregated few rows.
--
-- It derives every column: calls_1h keeps every dimension adapted_1h
-- groups by (adapter_id, tool, service, environment, client_name,
-- client_version, privilege, the hour), its outcome gives normalized, its
-- sessions are built from the same key, and its first_seen, last_seen and
-- max_session_age_s are the min and max adapted_1h keeps;
-- calls_unknown_age is a sum, so it cascades too.
--
-- Old rows: adapted_1h keeps its rows and is not rebuilt; it already holds
-- the figures of the calls stored before this version. calls_1h's rows
-- from before read calls_unknown_age 0, which no report reads from
-- calls_1h: the view only sees the blocks inserted from now on.
--
-- How: the column first, then calls_1h_mv is created again with it, then
-- adapted_1h_mv, under the schema lock that holds the ingesters' writes
-- (see version 15), so a call is counted in adapted_1h either by the old
-- view (before) or through calls_1h (after), never twice nor lost.

ALTER TABLE {{table "calls_1h"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS calls_unknown_age SimpleAggregateFunction(sum, UInt64) AFTER calls_inferred;
{{if .Cluster}}
-- Cluster mode: the Distributed table in front of the local one.
ALTER TABLE {{.Database}}.calls_1h{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS calls_unknown_age SimpleAggregateFunction(sum, UInt64) AFTER calls_inferred;
{{end}}

-- The SELECT of version 12, plus calls_unknown_age as version 9 counted it.
DROP VIEW IF EXISTS {{.Database}}.calls_1h_mv{{.OnCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.calls_1h_mv{{.OnCluster}} TO {{table "calls_1h"}} AS
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       countIf(revision_client_source = 'listed') AS calls_listed,
       countIf(revision_client_source = 'inferred') AS calls_inferred,
       countIf(session_age_s <= 0) AS calls_unknown_age,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqHLL12StateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

-- The block calls_1h_mv has just written, partial states: the sums summed,
-- the sketches merged, as calls_1d_mv reads it.
DROP VIEW IF EXISTS {{.Database}}.adapted_1h_mv{{.OnCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.adapted_1h_mv{{.OnCluster}} TO {{table "adapted_1h"}} AS
SELECT tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege,
       sum(c.calls) AS calls,
       sumIf(c.calls, outcome = 'normalized') AS normalized,
       sum(calls_unknown_age) AS calls_unknown_age,
       uniqHLL12MergeState(sessions) AS sessions,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM {{table "calls_1h"}} AS c
WHERE adapter_id != ''
GROUP BY tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege;
