-- Version 8: distinct sessions and runs as uniqHLL12 sketches, not uniq
-- states, in every call rollup.
--
--   calls_1h, calls_1d, usage_1h, usage_1d, rejected_1h, adapted_1h
--   sessions, runs: AggregateFunction(uniq, String)
--                 → AggregateFunction(uniqHLL12, String)
--
-- Why: merging the states is most of what the reports that count sessions
-- cost, and uniqHLL12 states merge markedly faster than uniq states built
-- from the same events, while building them at insert costs about the same
-- (docs/capacity.md, "Schema decisions").
--
-- What it costs: a count is exact up to 16 distinct values, and beyond that
-- a HyperLogLog estimate over 4,096 registers (a standard error of 1.6%;
-- 32-bit hashes, so meant for sets far below a billion), where uniq was
-- exact at the sizes of the bench's load; on that load the sessions
-- estimates were off by a few percent at most.
--
-- Why this sketch: a report from the rollups must equal the same report
-- from the events (queries/*_raw.sql count with uniqHLL12 too), so the
-- estimate must depend on the set of values only, not on how partial
-- states were merged. uniqHLL12 is an exact small set, then registers, so
-- its estimates from the events, from merged hourly states and from merged
-- daily states are the same (on the bench's load they were, for every tool
-- and revision pair, sessions and runs). uniqCombined(12), which merges
-- faster still, does not qualify: its estimate depends on whether a merge
-- left it an exact hash set or registers, and the bench's rollup-against-raw
-- check caught it.
--
-- How: a state of one function cannot be turned into one of another, so the
-- tables are dropped and rebuilt from the events. The events are kept as
-- long as the longest-lived of these tables (store/schema's retention
-- table), so nothing the rollups held is lost. Migrations run under the schema lock (store/schema/lock.go), ingest
-- held, so no insert falls between the statements; a run cut short is
-- run again whole, from the drops.

DROP VIEW IF EXISTS {{.Database}}.calls_1h_mv{{.OnCluster}};
DROP VIEW IF EXISTS {{.Database}}.calls_1d_mv{{.OnCluster}};
DROP VIEW IF EXISTS {{.Database}}.usage_1h_mv{{.OnCluster}};
DROP VIEW IF EXISTS {{.Database}}.usage_1d_mv{{.OnCluster}};
DROP VIEW IF EXISTS {{.Database}}.rejected_1h_mv{{.OnCluster}};
DROP VIEW IF EXISTS {{.Database}}.adapted_1h_mv{{.OnCluster}};
DROP TABLE IF EXISTS {{.Database}}.calls_1h{{.OnCluster}} SYNC;
DROP TABLE IF EXISTS {{.Database}}.calls_1d{{.OnCluster}} SYNC;
DROP TABLE IF EXISTS {{.Database}}.usage_1h{{.OnCluster}} SYNC;
DROP TABLE IF EXISTS {{.Database}}.usage_1d{{.OnCluster}} SYNC;
DROP TABLE IF EXISTS {{.Database}}.rejected_1h{{.OnCluster}} SYNC;
DROP TABLE IF EXISTS {{.Database}}.adapted_1h{{.OnCluster}} SYNC;
{{if .Cluster}}
-- Cluster mode: the local tables behind the Distributed ones.
DROP TABLE IF EXISTS {{table "calls_1h"}}{{.OnCluster}} SYNC;
DROP TABLE IF EXISTS {{table "calls_1d"}}{{.OnCluster}} SYNC;
DROP TABLE IF EXISTS {{table "usage_1h"}}{{.OnCluster}} SYNC;
DROP TABLE IF EXISTS {{table "usage_1d"}}{{.OnCluster}} SYNC;
DROP TABLE IF EXISTS {{table "rejected_1h"}}{{.OnCluster}} SYNC;
DROP TABLE IF EXISTS {{table "adapted_1h"}}{{.OnCluster}} SYNC;
{{end}}
CREATE TABLE IF NOT EXISTS {{table "calls_1h"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
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
    sessions            AggregateFunction(uniqHLL12, String),
    runs                AggregateFunction(uniqHLL12, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toDate(hour)
ORDER BY (tenant, tool, revision_client, revision_server, outcome, adapter_id, hour,
          service, environment, client_name, client_version, privilege, error_code)
TTL hour + INTERVAL {{.RetentionDays}} DAY;
{{distributed "calls_1h"}}

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
    sessions            AggregateFunction(uniqHLL12, String),
    runs                AggregateFunction(uniqHLL12, String),
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

CREATE TABLE IF NOT EXISTS {{table "usage_1h"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    calls_current       SimpleAggregateFunction(sum, UInt64),
    calls_normalized    SimpleAggregateFunction(sum, UInt64),
    calls_rejected      SimpleAggregateFunction(sum, UInt64),
    calls_rejected_stale SimpleAggregateFunction(sum, UInt64),
    calls_removed       SimpleAggregateFunction(sum, UInt64),
    calls_failed        SimpleAggregateFunction(sum, UInt64),
    retries             SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniqHLL12, String),
    runs                AggregateFunction(uniqHLL12, String),
    clients             AggregateFunction(uniqExact, String, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, revision_client, revision_server, service, environment)
TTL hour + INTERVAL {{.RetentionDays}} DAY;
{{distributed "usage_1h"}}

CREATE TABLE IF NOT EXISTS {{table "usage_1d"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    day                 DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    calls_current       SimpleAggregateFunction(sum, UInt64),
    calls_normalized    SimpleAggregateFunction(sum, UInt64),
    calls_rejected      SimpleAggregateFunction(sum, UInt64),
    calls_rejected_stale SimpleAggregateFunction(sum, UInt64),
    calls_removed       SimpleAggregateFunction(sum, UInt64),
    calls_failed        SimpleAggregateFunction(sum, UInt64),
    retries             SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniqHLL12, String),
    runs                AggregateFunction(uniqHLL12, String),
    clients             AggregateFunction(uniqExact, String, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYear(day)
ORDER BY (tenant, day, tool, revision_client, revision_server, service, environment)
TTL day + INTERVAL {{.RetentionDays}} DAY;
{{distributed "usage_1d"}}

CREATE TABLE IF NOT EXISTS {{table "rejected_1h"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    revision_client     LowCardinality(String),
    revision_server     LowCardinality(String),
    outcome             {{.OutcomeEnum}},
    error_code          LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    calls               SimpleAggregateFunction(sum, UInt64),
    side_effects        SimpleAggregateFunction(sum, UInt64),
    sessions            AggregateFunction(uniqHLL12, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, revision_client, revision_server, outcome, error_code,
          service, environment, client_name, client_version)
TTL hour + INTERVAL {{.RetentionDays}} DAY;
{{distributed "rejected_1h"}}

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

-- The views, as versions 2, 3 and 7 made them, with the sketches.
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.calls_1h_mv{{.OnCluster}} TO {{table "calls_1h"}} AS
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqHLL12StateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.calls_1d_mv{{.OnCluster}} TO {{table "calls_1d"}} AS
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       sum(calls) AS calls,
       sum(side_effects) AS side_effects,
       sum(retries) AS retries,
       uniqHLL12MergeState(sessions) AS sessions,
       uniqHLL12MergeState(runs) AS runs,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM {{table "calls_1h"}}
GROUP BY tenant, day, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.usage_1h_mv{{.OnCluster}} TO {{table "usage_1h"}} AS
SELECT tenant, hour, tool, revision_client, revision_server, service, environment,
       sum(c.calls) AS calls,
       sumIf(c.calls, outcome = 'current') AS calls_current,
       sumIf(c.calls, outcome = 'normalized') AS calls_normalized,
       sumIf(c.calls, outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')) AS calls_rejected,
       sumIf(c.calls, outcome = 'rejected_stale') AS calls_rejected_stale,
       sumIf(c.calls, outcome = 'removed') AS calls_removed,
       sumIf(c.calls, outcome = 'failed') AS calls_failed,
       sum(retries) AS retries,
       uniqHLL12MergeState(sessions) AS sessions,
       uniqHLL12MergeState(runs) AS runs,
       uniqExactStateIf(client_name, client_version, client_name != '' OR client_version != '') AS clients,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM {{table "calls_1h"}} AS c
GROUP BY tenant, hour, tool, revision_client, revision_server, service, environment;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.usage_1d_mv{{.OnCluster}} TO {{table "usage_1d"}} AS
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, revision_server,
       service, environment,
       sum(calls) AS calls,
       sum(calls_current) AS calls_current,
       sum(calls_normalized) AS calls_normalized,
       sum(calls_rejected) AS calls_rejected,
       sum(calls_rejected_stale) AS calls_rejected_stale,
       sum(calls_removed) AS calls_removed,
       sum(calls_failed) AS calls_failed,
       sum(retries) AS retries,
       uniqHLL12MergeState(sessions) AS sessions,
       uniqHLL12MergeState(runs) AS runs,
       uniqExactMergeState(clients) AS clients,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM {{table "usage_1h"}}
GROUP BY tenant, day, tool, revision_client, revision_server, service, environment;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.rejected_1h_mv{{.OnCluster}} TO {{table "rejected_1h"}} AS
SELECT tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
       environment, client_name, client_version,
       sum(calls) AS calls,
       sum(side_effects) AS side_effects,
       uniqHLL12MergeState(sessions) AS sessions,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM {{table "calls_1h"}}
WHERE outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
         environment, client_name, client_version;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.adapted_1h_mv{{.OnCluster}} TO {{table "adapted_1h"}} AS
SELECT tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege,
       sum(c.calls) AS calls,
       sumIf(c.calls, outcome = 'normalized') AS normalized,
       uniqHLL12MergeState(sessions) AS sessions,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM {{table "calls_1h"}} AS c
WHERE adapter_id != ''
GROUP BY tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege;

-- The rebuild: the calls_1h rows of every stored call. The views on
-- calls_1h (calls_1d, usage_1h and, from it, usage_1d, rejected_1h,
-- adapted_1h) derive the other tables from them, as they do at every
-- insert. The events are read in their sort order (tenant, event, tool,
-- revisions), so the aggregation finishes each tool's groups before the
-- next tool's, and the views get blocks of 100,000 rows: together these
-- make the rebuild take much less time and memory than without them
-- (docs/capacity.md, "Schema decisions"). The aggregation spills to disk
-- beyond 2 GiB.
INSERT INTO {{.Database}}.calls_1h
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqHLL12StateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM {{.Database}}.events
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code
SETTINGS optimize_aggregation_in_order = 1, min_insert_block_size_rows = 100000,
         max_insert_block_size = 100000, max_bytes_before_external_group_by = 2147483648;
