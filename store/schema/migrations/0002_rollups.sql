-- Version 2: tiered rollups, as GraphQL Hive keeps its usage tables.
--
--   calls_1m   ← events      minutely, kept 2 days
--   calls_1h   ← events      hourly (from version 1), kept 90 days
--   calls_1d   ← calls_1h    daily, kept for the retention
--   repairs_1m ← events      the same three tiers for repair events
--   repairs_1h ← events
--   repairs_1d ← repairs_1h
--
-- Every tier has the same dimensions, all in the sort key, so that one query
-- can read whole minutes, hours and days of a window from the tier that
-- holds them (queries/plan.go). Counters are SimpleAggregateFunction(sum),
-- distinct sessions and runs uniq states, first and last seen min/max. The
-- TTLs written here are the defaults; store/schema's retention table sets
-- each tier's TTL from the retention setting at every start-up (minutely
-- at most 2 days, hourly at most 90 days).
--
-- The daily tiers are fed from the hourly ones, not from events: an insert
-- pays for the minutely and hourly aggregation only, and the daily view
-- merges the few hourly rows that the insert produced.

-- The hourly tier of version 1 gains the error code (a dimension, for the
-- rejections report) and the number of retry calls (for amplification).
-- Adding a column to the sort key is allowed in the ALTER that adds it, and
-- the statement is a no-op when it has run before.
ALTER TABLE {{table "calls_1h"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS error_code LowCardinality(String) AFTER privilege,
    MODIFY ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, hour,
                     service, environment, client_name, client_version, privilege, error_code);

ALTER TABLE {{table "calls_1h"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS retries SimpleAggregateFunction(sum, UInt64) AFTER side_effects;
{{if .Cluster}}
-- Cluster mode: the Distributed table in front of calls_1h gains the columns.
ALTER TABLE {{.Database}}.calls_1h{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS error_code LowCardinality(String) AFTER privilege,
    ADD COLUMN IF NOT EXISTS retries SimpleAggregateFunction(sum, UInt64) AFTER side_effects;
{{end}}

-- The view is recreated with the new columns; empty session and run ids are
-- no longer counted as one distinct session or run. Migrations run under
-- the schema lock (store/schema/lock.go), ingest held, so no insert falls between the two statements.
DROP VIEW IF EXISTS {{.Database}}.calls_1h_mv{{.OnCluster}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.calls_1h_mv{{.OnCluster}} TO {{table "calls_1h"}} AS
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       uniqStateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqStateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

CREATE TABLE IF NOT EXISTS {{table "calls_1m"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    minute              DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    outcome             {{.OutcomeEnum}},
    adapter_id          LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           {{.PrivilegeEnum}},
    error_code          LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    side_effects        SimpleAggregateFunction(sum, UInt64),
    retries             SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniq, String),
    runs                AggregateFunction(uniq, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toDate(minute)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, minute,
          service, environment, client_name, client_version, privilege, error_code)
TTL minute + INTERVAL 2 DAY;
{{distributed "calls_1m"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.calls_1m_mv{{.OnCluster}} TO {{table "calls_1m"}} AS
SELECT tenant, toStartOfMinute(time) AS minute, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       uniqStateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqStateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, minute, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

CREATE TABLE IF NOT EXISTS {{table "calls_1d"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    day                 DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    outcome             {{.OutcomeEnum}},
    adapter_id          LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    privilege           {{.PrivilegeEnum}},
    error_code          LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    side_effects        SimpleAggregateFunction(sum, UInt64),
    retries             SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniq, String),
    runs                AggregateFunction(uniq, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYear(day)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, day,
          service, environment, client_name, client_version, privilege, error_code)
TTL day + INTERVAL {{.RetentionDays}} DAY;
{{distributed "calls_1d"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.calls_1d_mv{{.OnCluster}} TO {{table "calls_1d"}} AS
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       sum(calls) AS calls,
       sum(side_effects) AS side_effects,
       sum(retries) AS retries,
       uniqMergeState(sessions) AS sessions,
       uniqMergeState(runs) AS runs,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM {{table "calls_1h"}}
GROUP BY tenant, day, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

-- Backfill the new call tiers from what version 1 stored, once: each INSERT
-- is skipped when its table already holds rows, so a re-run adds nothing.
INSERT INTO {{.Database}}.calls_1d
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       sum(calls), sum(side_effects), sum(retries),
       uniqMergeState(sessions), uniqMergeState(runs),
       min(first_seen), max(last_seen), max(max_session_age_s)
FROM {{.Database}}.calls_1h
WHERE (SELECT count() FROM {{.Database}}.calls_1d) = 0
GROUP BY tenant, day, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

INSERT INTO {{.Database}}.calls_1m
SELECT tenant, toStartOfMinute(time) AS minute, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count(), countIf(side_effect_started), countIf(retry_of != ''),
       uniqStateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != ''),
       uniqStateIf(run_id, run_id != ''),
       min(time), max(time), max(session_age_s)
FROM {{.Database}}.events
WHERE event_name = 'mcp.drift.call'
  AND time >= now() - INTERVAL 2 DAY
  AND (SELECT count() FROM {{.Database}}.calls_1m) = 0
GROUP BY tenant, minute, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

-- Repair events: what clients did after a stale rejection, and how long it
-- took (a t-digest of mcp.drift.repair.duration_ms over the events that
-- report one).
CREATE TABLE IF NOT EXISTS {{table "repairs_1m"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    minute              DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    change_class        {{.ChangeClassEnum}},
    repair_action       {{.RepairActionEnum}},
    repair_automatic    Bool,
    repair_result       {{.RepairResultEnum}},
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    repairs             SimpleAggregateFunction(sum, UInt64),
    duration_ms         AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toDate(minute)
ORDER BY (tenant, tool, revision_client, change_class, repair_action, repair_automatic, repair_result,
          minute, service, environment, client_name, client_version)
TTL minute + INTERVAL 2 DAY;
{{distributed "repairs_1m"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.repairs_1m_mv{{.OnCluster}} TO {{table "repairs_1m"}} AS
SELECT tenant, toStartOfMinute(time) AS minute, tool, revision_client, change_class,
       repair_action, repair_automatic, repair_result, service, environment,
       client_name, client_version,
       count() AS repairs,
       quantilesTDigestStateIf(0.5, 0.95)(repair_duration_ms, repair_duration_ms > 0) AS duration_ms,
       min(time) AS first_seen,
       max(time) AS last_seen
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.repair'
GROUP BY tenant, minute, tool, revision_client, change_class, repair_action,
         repair_automatic, repair_result, service, environment, client_name, client_version;

CREATE TABLE IF NOT EXISTS {{table "repairs_1h"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    change_class        {{.ChangeClassEnum}},
    repair_action       {{.RepairActionEnum}},
    repair_automatic    Bool,
    repair_result       {{.RepairResultEnum}},
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    repairs             SimpleAggregateFunction(sum, UInt64),
    duration_ms         AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toDate(hour)
ORDER BY (tenant, tool, revision_client, change_class, repair_action, repair_automatic, repair_result,
          hour, service, environment, client_name, client_version)
TTL hour + INTERVAL {{.RetentionDays}} DAY;
{{distributed "repairs_1h"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.repairs_1h_mv{{.OnCluster}} TO {{table "repairs_1h"}} AS
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, change_class,
       repair_action, repair_automatic, repair_result, service, environment,
       client_name, client_version,
       count() AS repairs,
       quantilesTDigestStateIf(0.5, 0.95)(repair_duration_ms, repair_duration_ms > 0) AS duration_ms,
       min(time) AS first_seen,
       max(time) AS last_seen
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.repair'
GROUP BY tenant, hour, tool, revision_client, change_class, repair_action,
         repair_automatic, repair_result, service, environment, client_name, client_version;

CREATE TABLE IF NOT EXISTS {{table "repairs_1d"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    day                 DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    change_class        {{.ChangeClassEnum}},
    repair_action       {{.RepairActionEnum}},
    repair_automatic    Bool,
    repair_result       {{.RepairResultEnum}},
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    repairs             SimpleAggregateFunction(sum, UInt64),
    duration_ms         AggregateFunction(quantilesTDigest(0.5, 0.95), Int64),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYear(day)
ORDER BY (tenant, tool, revision_client, change_class, repair_action, repair_automatic, repair_result,
          day, service, environment, client_name, client_version)
TTL day + INTERVAL {{.RetentionDays}} DAY;
{{distributed "repairs_1d"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.repairs_1d_mv{{.OnCluster}} TO {{table "repairs_1d"}} AS
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, change_class,
       repair_action, repair_automatic, repair_result, service, environment,
       client_name, client_version,
       sum(repairs) AS repairs,
       quantilesTDigestMergeState(0.5, 0.95)(duration_ms) AS duration_ms,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM {{table "repairs_1h"}}
GROUP BY tenant, day, tool, revision_client, change_class, repair_action,
         repair_automatic, repair_result, service, environment, client_name, client_version;

-- Repair events stored before this version.
INSERT INTO {{.Database}}.repairs_1h
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, change_class,
       repair_action, repair_automatic, repair_result, service, environment,
       client_name, client_version,
       count(),
       quantilesTDigestStateIf(0.5, 0.95)(repair_duration_ms, repair_duration_ms > 0),
       min(time), max(time)
FROM {{.Database}}.events
WHERE event_name = 'mcp.drift.repair'
  AND (SELECT count() FROM {{.Database}}.repairs_1h) = 0
GROUP BY tenant, hour, tool, revision_client, change_class, repair_action,
         repair_automatic, repair_result, service, environment, client_name, client_version;

INSERT INTO {{.Database}}.repairs_1m
SELECT tenant, toStartOfMinute(time) AS minute, tool, revision_client, change_class,
       repair_action, repair_automatic, repair_result, service, environment,
       client_name, client_version,
       count(),
       quantilesTDigestStateIf(0.5, 0.95)(repair_duration_ms, repair_duration_ms > 0),
       min(time), max(time)
FROM {{.Database}}.events
WHERE event_name = 'mcp.drift.repair'
  AND time >= now() - INTERVAL 2 DAY
  AND (SELECT count() FROM {{.Database}}.repairs_1m) = 0
GROUP BY tenant, minute, tool, revision_client, change_class, repair_action,
         repair_automatic, repair_result, service, environment, client_name, client_version;
