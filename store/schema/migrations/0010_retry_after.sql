-- Version 10: what a retry followed.
--
--   events_in, events   + retry_after: on a call that retries another, the
--                         outcome of the call it retries, as the client saw
--                         it (mcp.drift.retry.after)
--   recent_calls        + retry_after, for the minutes at a window's edges
--   retries_1h ← events   the retry calls per hour and what they followed
--
-- Why: the repairs report's amplification is retry calls per rejected call.
-- Split by the rejection kind each retry followed, it tells a refresh that
-- works (retries after rejected_stale) from agents hammering a changed
-- contract (retries after rejected_incompatible or a removal). The kind is
-- the client's to say: it holds the rejection it retries, and the server
-- records it from the retry's _meta (otelschema/mcpgo).
--
-- How: the columns are added with their default, '' (not stated), which is
-- what the calls stored before this version are; the views that copy the
-- events are created again so that they copy the new column; retries_1h is
-- filled from the events, which are kept as long as it is (store/schema's
-- retention table). Rare rows, and no daily tier: the hourly table serves a
-- plan's days as well. Migrations run under the schema lock, while
-- ingesters hold their writes (store/schema/lock.go), so no insert falls
-- between the statements; a run cut short is run again whole.

ALTER TABLE {{table "events_in"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS retry_after {{.OutcomeEnum}} AFTER retry_attempt;
ALTER TABLE {{table "events"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS retry_after {{.OutcomeEnum}} AFTER retry_attempt;
ALTER TABLE {{table "recent_calls"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS retry_after {{.OutcomeEnum}} AFTER retry;
{{if .Cluster}}
-- Cluster mode: the Distributed tables in front of the local ones.
ALTER TABLE {{.Database}}.events_in{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS retry_after {{.OutcomeEnum}} AFTER retry_attempt;
ALTER TABLE {{.Database}}.events{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS retry_after {{.OutcomeEnum}} AFTER retry_attempt;
ALTER TABLE {{.Database}}.recent_calls{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS retry_after {{.OutcomeEnum}} AFTER retry;
{{end}}

DROP VIEW IF EXISTS {{.Database}}.events_mv{{.OnCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.events_mv{{.OnCluster}} TO {{table "events"}} AS
SELECT * EXCEPT (args_raw, args_normalized)
FROM {{table "events_in"}};

DROP VIEW IF EXISTS {{.Database}}.recent_calls_mv{{.OnCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.recent_calls_mv{{.OnCluster}} TO {{table "recent_calls"}} AS
SELECT tenant, time, tool, revision_client, revision_server, outcome, adapter_id,
       service, environment, client_name, client_version, privilege, error_code,
       side_effect_started, retry_of != '' AS retry, retry_after,
       if(session_id != '', session_id, run_id) AS session, run_id, session_age_s
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call';

DROP VIEW IF EXISTS {{.Database}}.retries_1h_mv{{.OnCluster}};
DROP TABLE IF EXISTS {{.Database}}.retries_1h{{.OnCluster}} SYNC;
{{if .Cluster}}
DROP TABLE IF EXISTS {{table "retries_1h"}}{{.OnCluster}} SYNC;
{{end}}

CREATE TABLE IF NOT EXISTS {{table "retries_1h"}}{{.OnCluster}}
(
    tenant              LowCardinality(String),
    hour                DateTime('UTC'),
    tool                LowCardinality(String),
    service             LowCardinality(String),
    environment         LowCardinality(String),
    client_name         LowCardinality(String),
    client_version      LowCardinality(String),
    retry_after         {{.OutcomeEnum}},
    retries             SimpleAggregateFunction(sum, UInt64)
)
ENGINE = {{engine "AggregatingMergeTree"}}
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant, hour, tool, service, environment, client_name, client_version, retry_after)
TTL hour + INTERVAL {{.RetentionDays}} DAY;
{{distributed "retries_1h"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.retries_1h_mv{{.OnCluster}} TO {{table "retries_1h"}} AS
SELECT tenant, toStartOfHour(time) AS hour, tool, service, environment, client_name, client_version, retry_after,
       count() AS retries
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
  AND retry_of != ''
GROUP BY tenant, hour, tool, service, environment, client_name, client_version, retry_after;

INSERT INTO {{.Database}}.retries_1h
SETTINGS distributed_foreground_insert = 1
SELECT tenant, toStartOfHour(time) AS hour, tool, service, environment, client_name, client_version, retry_after,
       count() AS retries
FROM {{.Database}}.events
WHERE event_name = 'mcp.drift.call'
  AND retry_of != ''
GROUP BY tenant, hour, tool, service, environment, client_name, client_version, retry_after;
