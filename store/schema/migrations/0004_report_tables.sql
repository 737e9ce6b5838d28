-- Version 4: narrow tables for the two reports that cannot be rolled up by
-- bucket, so that neither reads the raw events.
--
--   violation_candidates ← events   one row per candidate event and kind
--   propagation_events   ← events   notifications, refreshes, stale calls
--
-- The views keep only the few rows their report can use (a WHERE on the
-- event name and a handful of columns), so an insert pays for filtering its
-- block and writing a small part; none aggregates or sorts by a string.
-- The tables are small, so they are partitioned by month rather than by
-- day: an insert writes one part, not one per day its batch spans, and a
-- report reads a week from one or two parts. With daily partitions the
-- per-part overhead was a large share of the propagation report's time
-- (docs/capacity.md, "Schema decisions"). The TTL still trims rows by the
-- retention. The reports apply the window, the filters and the pairing at
-- query time, so that their answers equal the raw queries'
-- (queries/violations_raw.sql, propagation_raw.sql) over any window.

-- Safety violations (queries/violations.sql). One row per event and kind,
-- with the detail text written at insert time, sorted as a page is read:
-- the first page of a window reads the window's first granules and stops.
--
-- removed_tool_success depends on the adapter registry, where the latest
-- declaration wins and may come after the call: a successful call through
-- any adapter is kept here as a candidate (adapter_id set), and the report
-- keeps it only if the adapter's latest declaration, at query time, has
-- change class removal. A call whose own change class is removal is a
-- violation whatever the registry says.
CREATE TABLE IF NOT EXISTS {{table "violation_candidates"}}{{.OnCluster}}
(
    tenant             LowCardinality(String),
    time               DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    event_id           UInt64 CODEC(ZSTD(1)),
    kind               LowCardinality(String),
    tool               LowCardinality(String),
    session_id         String CODEC(ZSTD(1)),
    run_id             String CODEC(ZSTD(1)),
    request_id         String CODEC(ZSTD(1)),
    client_name        LowCardinality(String),
    client_version     LowCardinality(String),
    revision_client    LowCardinality(String),
    revision_server    LowCardinality(String),
    revision_validated LowCardinality(String),
    change_class       {{.ChangeClassEnum}},
    outcome            {{.OutcomeEnum}},
    adapter_id         LowCardinality(String),
    service            LowCardinality(String),
    service_version    LowCardinality(String),
    environment        LowCardinality(String),
    detail             String CODEC(ZSTD(1))
)
ENGINE = {{engine "MergeTree"}}
PARTITION BY toYYYYMM(time)
ORDER BY (tenant, time, event_id, kind)
TTL toDateTime(time) + INTERVAL {{.RetentionDays}} DAY;
{{distributed "violation_candidates"}}

-- One view per kind, each a plain filter with a constant kind: an insert
-- evaluates four WHERE clauses over its block and writes the few rows they
-- keep (a view that keeps none writes nothing).
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.violations_side_effect_mv{{.OnCluster}} TO {{table "violation_candidates"}} AS
SELECT tenant, time, event_id, 'side_effect_rejected' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat(toString(outcome),
              if(error_code != '', concat(' with ', error_code), ''),
              ' after its side effect had started',
              if(external_target != '', concat(' on ', external_target), ''),
              if(external_requests > 0, concat(' (external requests: ', toString(external_requests), ')'), '')) AS detail
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
  AND side_effect_started;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.violations_mixed_revision_mv{{.OnCluster}} TO {{table "violation_candidates"}} AS
SELECT tenant, time, event_id, 'mixed_revision' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat('validated under revision ', revision_validated,
              ', executed under revision ', revision_server) AS detail
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
  AND revision_validated != '' AND revision_validated != revision_server;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.violations_removed_tool_mv{{.OnCluster}} TO {{table "violation_candidates"}} AS
SELECT tenant, time, event_id, 'removed_tool_success' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat(toString(outcome), ' call to a removed ',
              if(change_class = 'removal', 'revision (change class removal)',
                 concat('tool through removal adapter ', adapter_id))) AS detail
FROM {{table "events"}}
-- Candidates: through an adapter, the registry decides at query time.
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('current', 'normalized')
  AND (change_class = 'removal' OR adapter_id != '');

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.violations_retry_mv{{.OnCluster}} TO {{table "violation_candidates"}} AS
SELECT tenant, time, event_id, 'retry_across_change' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       if(event_name = 'mcp.drift.call',
          concat('automatic retry of ', retry_of, ' (attempt ', toString(retry_attempt), ') across a change of class ',
                 toString(change_class)),
          concat('automatic refresh_retry (', toString(repair_result), ') across a change of class ',
                 toString(change_class))) AS detail
FROM {{table "events"}}
WHERE ((event_name = 'mcp.drift.call' AND retry_of != '')
       OR (event_name = 'mcp.drift.repair' AND repair_action = 'refresh_retry'))
  AND repair_automatic
  AND change_class IN ('semantic', 'authority');

-- Notification propagation (queries/propagation.sql): the three kinds of
-- event the report pairs per session, and nothing else.
--
--   notice          a list_changed, with its notification lag (the report
--                   takes time - lag_ms as the notification time);
--   refresh         a tools/list refresh that did not fail;
--   refresh_failed  one that failed (it only names the session's client);
--   stale_call      a call whose client revision is set and differs from
--                   the executing revision.
--
-- Only events with a session key (the session id, else the run id) are
-- kept: the report pairs events by it. Sorted by kind and time, so that the
-- report reads each kind's rows of its window as one range (the pairing
-- groups by session in memory, over a few percent of the events); time
-- rather than session in the key keeps the insert's sort cheap.
CREATE TABLE IF NOT EXISTS {{table "propagation_events"}}{{.OnCluster}}
(
    tenant         LowCardinality(String),
    kind           Enum8('notice' = 1, 'refresh' = 2, 'refresh_failed' = 3, 'stale_call' = 4),
    session        String CODEC(ZSTD(1)),
    tool           LowCardinality(String),
    time           DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    lag_ms         Int64 CODEC(T64, ZSTD(1)),
    service        LowCardinality(String),
    environment    LowCardinality(String),
    client_name    LowCardinality(String),
    client_version LowCardinality(String)
)
ENGINE = {{engine "MergeTree"}}
PARTITION BY toYYYYMM(time)
ORDER BY (tenant, kind, time)
TTL toDateTime(time) + INTERVAL {{.RetentionDays}} DAY;
{{distributed "propagation_events"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.propagation_events_mv{{.OnCluster}} TO {{table "propagation_events"}} AS
SELECT tenant,
       multiIf(event_name = 'mcp.drift.list_changed', 'notice',
               event_name = 'mcp.drift.call', 'stale_call',
               refresh_result != 'failed', 'refresh', 'refresh_failed') AS kind,
       if(session_id != '', session_id, run_id) AS session,
       tool, time,
       if(event_name = 'mcp.drift.list_changed', notification_lag_ms, 0) AS lag_ms,
       service, environment, client_name, client_version
FROM {{table "events"}}
WHERE (session_id != '' OR run_id != '')
  AND (event_name IN ('mcp.drift.list_changed', 'mcp.drift.refresh')
       OR (event_name = 'mcp.drift.call' AND revision_client != '' AND revision_client != revision_server));

-- Events stored before this version, once: each INSERT is skipped when its
-- table already holds rows, so a re-run adds nothing.
INSERT INTO {{.Database}}.violation_candidates
SELECT tenant, time, event_id, 'side_effect_rejected' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat(toString(outcome),
              if(error_code != '', concat(' with ', error_code), ''),
              ' after its side effect had started',
              if(external_target != '', concat(' on ', external_target), ''),
              if(external_requests > 0, concat(' (external requests: ', toString(external_requests), ')'), '')) AS detail
FROM {{.Database}}.events
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
  AND side_effect_started
  AND (SELECT count() FROM {{.Database}}.violation_candidates) = 0
UNION ALL
SELECT tenant, time, event_id, 'mixed_revision' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat('validated under revision ', revision_validated,
              ', executed under revision ', revision_server) AS detail
FROM {{.Database}}.events
WHERE event_name = 'mcp.drift.call'
  AND revision_validated != '' AND revision_validated != revision_server
  AND (SELECT count() FROM {{.Database}}.violation_candidates) = 0
UNION ALL
SELECT tenant, time, event_id, 'removed_tool_success' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat(toString(outcome), ' call to a removed ',
              if(change_class = 'removal', 'revision (change class removal)',
                 concat('tool through removal adapter ', adapter_id))) AS detail
FROM {{.Database}}.events
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('current', 'normalized')
  AND (change_class = 'removal' OR adapter_id != '')
  AND (SELECT count() FROM {{.Database}}.violation_candidates) = 0
UNION ALL
SELECT tenant, time, event_id, 'retry_across_change' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       if(event_name = 'mcp.drift.call',
          concat('automatic retry of ', retry_of, ' (attempt ', toString(retry_attempt), ') across a change of class ',
                 toString(change_class)),
          concat('automatic refresh_retry (', toString(repair_result), ') across a change of class ',
                 toString(change_class))) AS detail
FROM {{.Database}}.events
WHERE ((event_name = 'mcp.drift.call' AND retry_of != '')
       OR (event_name = 'mcp.drift.repair' AND repair_action = 'refresh_retry'))
  AND repair_automatic
  AND change_class IN ('semantic', 'authority')
  AND (SELECT count() FROM {{.Database}}.violation_candidates) = 0;

INSERT INTO {{.Database}}.propagation_events
SELECT tenant,
       multiIf(event_name = 'mcp.drift.list_changed', 'notice',
               event_name = 'mcp.drift.call', 'stale_call',
               refresh_result != 'failed', 'refresh', 'refresh_failed') AS kind,
       if(session_id != '', session_id, run_id) AS session,
       tool, time,
       if(event_name = 'mcp.drift.list_changed', notification_lag_ms, 0) AS lag_ms,
       service, environment, client_name, client_version
FROM {{.Database}}.events
WHERE (session_id != '' OR run_id != '')
  AND (event_name IN ('mcp.drift.list_changed', 'mcp.drift.refresh')
       OR (event_name = 'mcp.drift.call' AND revision_client != '' AND revision_client != revision_server))
  AND (SELECT count() FROM {{.Database}}.propagation_events) = 0;
