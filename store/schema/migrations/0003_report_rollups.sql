-- Version 3: rollups shaped for the reports, and the hourly tiers fed from
-- the minutely ones.
--
--   calls_1m      ← events      (version 2)
--   calls_1h      ← calls_1m    was ← events
--   calls_1d      ← calls_1h    (version 2)
--   usage_1h      ← calls_1h    per tool × revisions × service × environment
--   usage_1d      ← usage_1h
--   rejected_1h   ← calls_1h    rejected calls only, with error code and client
--   adapted_1h    ← calls_1h    calls through an adapter only, with client and privilege
--   repairs_1h    ← repairs_1m  was ← events
--
-- Why: the call rollups of version 2 keep thirteen dimensions, so a week of
-- them is only a few times smaller than the raw events, and every report
-- merged a uniq state per row. Each table here keeps only what a report
-- groups and filters by: usage_* drops the client, the adapter, the
-- privilege and the error code, and counts outcomes in columns (one row per
-- tool, revision pair and service where calls_* had one per client, outcome
-- and more); rejected_* and adapted_* keep the client but hold only the
-- rare rows their report reads. The planner (queries/plan.go) reads usage_*
-- only when the filter names no client, and calls_* otherwise. The repair
-- tiers are small already (one row per kind of repair, not per call) and
-- stay as they are.
--
-- Insert cost: no new view reads events. Every view reads the block the
-- tier below it has just aggregated, which holds one row per bucket and
-- dimension, not one per event. The new families have no minutely tier:
-- the few minutes at a window's edges are read from calls_1m and shaped
-- at query time (queries/tiers.tmpl), so an insert pays for no extra
-- minutely view.
--
-- Every tier has its dimensions in the sort key, the bucket first after the
-- tenant (a report reads whole hours or days of a window), and a TTL that
-- store/schema's retention table sets at start-up: usage_* that of the
-- call tier it shadows.

-- The hourly call tier is fed from the minutely one. Merging the minutely
-- rows (sums, min/max, uniqMergeState) gives the same hourly rows as
-- aggregating the events: a uniq state is a function of the set of hashes
-- it saw. Migrations run under the schema lock (store/schema/lock.go), ingest held, so no insert falls between
-- the two statements.
DROP VIEW IF EXISTS {{.Database}}.calls_1h_mv{{.OnCluster}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.calls_1h_mv{{.OnCluster}} TO {{table "calls_1h"}} AS
SELECT tenant, toStartOfHour(minute) AS hour, tool, revision_client, revision_server,
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
FROM {{table "calls_1m"}}
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

-- The same for repairs. A t-digest merged from the minutely digests equals
-- the one built from the events while it holds fewer values than it
-- compresses at (thousands per hour, tool and kind of repair); beyond
-- that, the hourly repair times are as approximate as before.
DROP VIEW IF EXISTS {{.Database}}.repairs_1h_mv{{.OnCluster}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.repairs_1h_mv{{.OnCluster}} TO {{table "repairs_1h"}} AS
SELECT tenant, toStartOfHour(minute) AS hour, tool, revision_client, change_class,
       repair_action, repair_automatic, repair_result, service, environment,
       client_name, client_version,
       sum(repairs) AS repairs,
       quantilesTDigestMergeState(0.5, 0.95)(duration_ms) AS duration_ms,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen
FROM {{table "repairs_1m"}}
GROUP BY tenant, hour, tool, revision_client, change_class, repair_action,
         repair_automatic, repair_result, service, environment, client_name, client_version;

-- Usage: the calls of each tool and revision pair, by outcome in columns
-- rather than as a dimension (so that a session that met several outcomes
-- is in one uniq state, not in several), calls_rejected counting the three
-- rejected_* outcomes. clients is an exact distinct count of the
-- name@version pairs (the report's definition), kept as a state because
-- the client is no longer a dimension.
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
    sessions            AggregateFunction(uniq, String),
    runs                AggregateFunction(uniq, String),
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
    sessions            AggregateFunction(uniq, String),
    runs                AggregateFunction(uniq, String),
    clients             AggregateFunction(uniqExact, String, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYear(day)
ORDER BY (tenant, day, tool, revision_client, revision_server, service, environment)
TTL day + INTERVAL {{.RetentionDays}} DAY;
{{distributed "usage_1d"}}

-- Rejected calls: the rows of calls_* whose outcome is a rejection, with
-- the dimensions the rejections report groups by. They are a few per cent
-- of the calls, so this family can keep the client and still answer every
-- filter.
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
    sessions            AggregateFunction(uniq, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, revision_client, revision_server, outcome, error_code,
          service, environment, client_name, client_version)
TTL hour + INTERVAL {{.RetentionDays}} DAY;
{{distributed "rejected_1h"}}

-- Adapted calls: the rows of calls_* that went through an adapter, with
-- what adapter retirement weighs them by (client, privilege, oldest
-- session). normalized counts those the adapter normalised.
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
    sessions            AggregateFunction(uniq, String),
    first_seen          SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_seen           SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    max_session_age_s   SimpleAggregateFunction(max, Int64)
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege)
TTL hour + INTERVAL {{.RetentionDays}} DAY;
{{distributed "adapted_1h"}}

-- Backfill from what version 2 stored, once, before the views exist: each
-- INSERT is skipped when its table already holds rows, and a daily tier is
-- filled from the daily call tier (which outlives the hourly one), not
-- through a view from the hourly tier, so nothing is counted twice.
INSERT INTO {{.Database}}.usage_1h
SELECT tenant, hour, tool, revision_client, revision_server, service, environment,
       sum(calls), sumIf(calls, outcome = 'current'), sumIf(calls, outcome = 'normalized'),
       sumIf(calls, outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')),
       sumIf(calls, outcome = 'rejected_stale'), sumIf(calls, outcome = 'removed'),
       sumIf(calls, outcome = 'failed'), sum(retries),
       uniqMergeState(sessions), uniqMergeState(runs),
       uniqExactStateIf(client_name, client_version, client_name != '' OR client_version != ''),
       min(first_seen), max(last_seen)
FROM {{.Database}}.calls_1h
WHERE (SELECT count() FROM {{.Database}}.usage_1h) = 0
GROUP BY tenant, hour, tool, revision_client, revision_server, service, environment;

INSERT INTO {{.Database}}.usage_1d
SELECT tenant, day, tool, revision_client, revision_server, service, environment,
       sum(calls), sumIf(calls, outcome = 'current'), sumIf(calls, outcome = 'normalized'),
       sumIf(calls, outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')),
       sumIf(calls, outcome = 'rejected_stale'), sumIf(calls, outcome = 'removed'),
       sumIf(calls, outcome = 'failed'), sum(retries),
       uniqMergeState(sessions), uniqMergeState(runs),
       uniqExactStateIf(client_name, client_version, client_name != '' OR client_version != ''),
       min(first_seen), max(last_seen)
FROM {{.Database}}.calls_1d
WHERE (SELECT count() FROM {{.Database}}.usage_1d) = 0
GROUP BY tenant, day, tool, revision_client, revision_server, service, environment;

-- rejected_* and adapted_* have no daily tier: their rows are rare, a day
-- of them is barely smaller than its hours, and each tier costs every
-- insert a view and a part. Their hourly tier is kept for the retention
-- instead (store/schema's retention table), and a report reads whole days
-- from it too. It is filled from calls_1h, and, for the days the hourly
-- call tier may have trimmed (older than its cap of 90 days,
-- schema.HourTierDays, which the planner reads as whole days only), from
-- calls_1d, a day's rows stamped at its first hour.
INSERT INTO {{.Database}}.rejected_1h
SELECT tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
       environment, client_name, client_version,
       sum(calls), sum(side_effects), uniqMergeState(sessions), min(first_seen), max(last_seen)
FROM
(
    SELECT tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
           environment, client_name, client_version, calls, side_effects, sessions, first_seen, last_seen
    FROM {{.Database}}.calls_1h
    WHERE hour >= toStartOfDay(now('UTC') - INTERVAL 90 DAY + INTERVAL 1 HOUR) + INTERVAL 1 DAY
    UNION ALL
    SELECT tenant, day AS hour, tool, revision_client, revision_server, outcome, error_code, service,
           environment, client_name, client_version, calls, side_effects, sessions, first_seen, last_seen
    FROM {{.Database}}.calls_1d
    WHERE day < toStartOfDay(now('UTC') - INTERVAL 90 DAY + INTERVAL 1 HOUR) + INTERVAL 1 DAY
)
WHERE outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
  AND (SELECT count() FROM {{.Database}}.rejected_1h) = 0
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome, error_code, service,
         environment, client_name, client_version;

INSERT INTO {{.Database}}.adapted_1h
SELECT tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege,
       sum(calls), sumIf(calls, outcome = 'normalized'), uniqMergeState(sessions),
       min(first_seen), max(last_seen), max(max_session_age_s)
FROM
(
    SELECT tenant, hour, adapter_id, tool, service, environment, client_name, client_version,
           privilege, outcome, calls, sessions, first_seen, last_seen, max_session_age_s
    FROM {{.Database}}.calls_1h
    WHERE hour >= toStartOfDay(now('UTC') - INTERVAL 90 DAY + INTERVAL 1 HOUR) + INTERVAL 1 DAY
    UNION ALL
    SELECT tenant, day AS hour, adapter_id, tool, service, environment, client_name, client_version,
           privilege, outcome, calls, sessions, first_seen, last_seen, max_session_age_s
    FROM {{.Database}}.calls_1d
    WHERE day < toStartOfDay(now('UTC') - INTERVAL 90 DAY + INTERVAL 1 HOUR) + INTERVAL 1 DAY
)
WHERE adapter_id != ''
  AND (SELECT count() FROM {{.Database}}.adapted_1h) = 0
GROUP BY tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege;

-- The views. Each hourly view reads the block that the hourly view of
-- calls_1h has just written; usage_1d the block of usage_1h.
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
       uniqMergeState(sessions) AS sessions,
       uniqMergeState(runs) AS runs,
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
       uniqMergeState(sessions) AS sessions,
       uniqMergeState(runs) AS runs,
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
       uniqMergeState(sessions) AS sessions,
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
       uniqMergeState(sessions) AS sessions,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM {{table "calls_1h"}} AS c
WHERE adapter_id != ''
GROUP BY tenant, hour, adapter_id, tool, service, environment, client_name, client_version, privilege;
