-- Version 7: the minutes at a window's edges come from a narrow table of
-- recent calls, not from a minutely rollup.
--
--   recent_calls ← events   one row per call, kept 2 days (was calls_1m)
--   calls_1h     ← events   was ← calls_1m
--
-- Why: calls_1m kept thirteen dimensions per minute, so it held nearly one
-- row per call, and every insert paid for an aggregation that saved
-- nothing: a GROUP BY over thirteen string keys and two uniq states per
-- row, and then the hourly view re-aggregated those rows. Replacing the
-- minutely view by a plain per-call copy and feeding the hourly tier from
-- the events removes that aggregation, a noticeable part of the CPU an
-- event costs the whole process (docs/capacity.md, "Schema decisions").
--
-- A report reads at most a few minutes short of two hours of a window from
-- this table (queries/tiers.tmpl, "minutes"), aggregated at query time into
-- the rows calls_1m had: a uniq state built from the session keys equals the
-- one merged from per-minute states, since a uniq state is a function of the
-- set of hashes it saw. Sorted by time, so those minutes are one range.

CREATE TABLE IF NOT EXISTS {{table "recent_calls"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    time                DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
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
    side_effect_started Bool,
    retry               Bool,
    session             String CODEC(ZSTD(1)),
    run_id              String CODEC(ZSTD(1)),
    session_age_s       Int64 CODEC(T64, ZSTD(1))
)
ENGINE = {{engine "MergeTree"}}
PARTITION BY toDate(time)
ORDER BY (tenant, time)
TTL toDateTime(time) + INTERVAL 2 DAY;
{{distributed "recent_calls"}}

-- session is the session key of the rollups' sessions state: the session id,
-- else the run id.
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.recent_calls_mv{{.OnCluster}} TO {{table "recent_calls"}} AS
SELECT tenant, time, tool, revision_client, revision_server, outcome, adapter_id,
       service, environment, client_name, client_version, privilege, error_code,
       side_effect_started, retry_of != '' AS retry,
       if(session_id != '', session_id, run_id) AS session, run_id, session_age_s
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call';

-- Existing stores: the calls of the minutely tier's last two days, from the
-- events (skipped when the table already holds rows, as when this file runs
-- again).
INSERT INTO {{table "recent_calls"}}
SELECT tenant, time, tool, revision_client, revision_server, outcome, adapter_id,
       service, environment, client_name, client_version, privilege, error_code,
       side_effect_started, retry_of != '' AS retry,
       if(session_id != '', session_id, run_id) AS session, run_id, session_age_s
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
  AND time >= now() - INTERVAL 2 DAY
  AND (SELECT count() FROM {{table "recent_calls"}}) = 0;

-- The hourly call tier is fed from the events again, as in version 2.
-- Migrations run under the schema lock (store/schema/lock.go), ingest held, so no insert falls between the two
-- statements.
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

DROP VIEW IF EXISTS {{.Database}}.calls_1m_mv{{.OnCluster}};
DROP TABLE IF EXISTS {{.Database}}.calls_1m{{.OnCluster}};
{{if .Cluster}}
-- Cluster mode: the local tables behind the Distributed one.
DROP TABLE IF EXISTS {{table "calls_1m"}}{{.OnCluster}};
{{end}}
