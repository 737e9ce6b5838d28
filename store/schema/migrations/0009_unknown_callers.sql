-- Version 9: what the adapter retirement and rejections reports could not
-- see.
--
--   adapted_1h   + calls_unknown_age: the calls that carried no session age
--                  (mcp.drift.session.age_s absent, so stored as 0, or not
--                  positive). Fed from the events now, not from calls_1h,
--                  which keeps only the oldest age of a group and so cannot
--                  count them.
--   rejected_1h  + the calls to removed tools (outcome removed,
--                  TOOL_REMOVED): a removal fails the call before it runs,
--                  and the rejections report lists it with the others.
--
-- Why: a retirement verdict must not read a call of unknown age as a
-- 0-second session (queries/retirement.go says how unknown callers are
-- judged); an unknown privilege is already a value of the privilege column.
--
-- How: adapted_1h is dropped and rebuilt from the events, which are kept as
-- long as it is (store/schema's retention table); rejected_1h keeps its rows
-- and gains the removed calls, read from the events. Migrations run under
-- the schema lock (store/schema/lock.go), ingest held, so no insert falls between the statements; a run cut short
-- is run again whole, from the drops.

DROP VIEW IF EXISTS {{.Database}}.adapted_1h_mv{{.OnCluster}};
DROP VIEW IF EXISTS {{.Database}}.rejected_1h_mv{{.OnCluster}};
DROP TABLE IF EXISTS {{.Database}}.adapted_1h{{.OnCluster}} SYNC;
{{if .Cluster}}
-- Cluster mode: the local table behind the Distributed one.
DROP TABLE IF EXISTS {{table "adapted_1h"}}{{.OnCluster}} SYNC;
{{end}}
-- The removed calls a previous run of this migration may have copied.
ALTER TABLE {{table "rejected_1h"}}{{.OnCluster}} DELETE WHERE outcome = 'removed'
SETTINGS mutations_sync = 2;

CREATE TABLE IF NOT EXISTS {{table "adapted_1h"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    adapter_id          LowCardinality(String),
    tool                LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           {{.PrivilegeEnum}},
    calls               SimpleAggregateFunction(sum, UInt64),
    normalized          SimpleAggregateFunction(sum, UInt64),
    calls_unknown_age   SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniqHLL12, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege)
TTL hour + INTERVAL {{.RetentionDays}} DAY;
{{distributed "adapted_1h"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.adapted_1h_mv{{.OnCluster}} TO {{table "adapted_1h"}} AS
SELECT tenant, toStartOfHour(time) AS hour, adapter_id, tool, service, environment, client_name, client_version, privilege,
       count() AS calls,
       countIf(outcome = 'normalized') AS normalized,
       countIf(session_age_s <= 0) AS calls_unknown_age,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
  AND adapter_id != ''
GROUP BY tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.rejected_1h_mv{{.OnCluster}} TO {{table "rejected_1h"}} AS
SELECT tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
       environment, client_name, client_version,
       sum(calls) AS calls,
       sum(side_effects) AS side_effects,
       uniqHLL12MergeState(sessions) AS sessions,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM {{table "calls_1h"}}
WHERE outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid', 'removed')
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
         environment, client_name, client_version;

INSERT INTO {{.Database}}.adapted_1h
SETTINGS distributed_foreground_insert = 1
SELECT tenant, toStartOfHour(time) AS hour, adapter_id, tool, service, environment, client_name, client_version, privilege,
       count() AS calls,
       countIf(outcome = 'normalized') AS normalized,
       countIf(session_age_s <= 0) AS calls_unknown_age,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM {{.Database}}.events
WHERE event_name = 'mcp.drift.call'
  AND adapter_id != ''
GROUP BY tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege;

INSERT INTO {{.Database}}.rejected_1h
SETTINGS distributed_foreground_insert = 1
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server, outcome, error_code, service,
       environment, client_name, client_version,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       min(time) AS first_seen,
       max(time) AS last_seen
FROM {{.Database}}.events
WHERE event_name = 'mcp.drift.call'
  AND outcome = 'removed'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
         environment, client_name, client_version;
