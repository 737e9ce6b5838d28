-- Version 12: where the calls' client revisions came from, in the call
-- rollups.
--
--   recent_calls        + revision_client_source, for the minutes at a
--                         window's edges (aggregated when read)
--   calls_1h, calls_1d  + calls_listed, calls_inferred: the calls whose
--                         client revision the server listed to the session,
--                         or inferred from the arguments
--                         (dev.mcpdrift.revision.client.source)
--
-- Why: the revision-sources report tells, per tool and client, how many
-- calls' client revision was declared, listed, inferred or unknown: how
-- much of the traffic a verdict rests on. The call rollups keep the tool,
-- the client and revision_client, so two sums answer it. calls_listed and
-- calls_inferred count the calls that state that source; the report reads
-- them on the rows with a client revision only. A call without a client
-- revision is unknown, whatever source it states (the rows whose
-- revision_client is ''); one with a client revision is listed or inferred
-- when it says so, and declared otherwise: declared by the client, or not
-- stated, which readers take as declared (the only source before the
-- attribute existed). declared is that rest, so it is not stored: a column
-- of its own would hold 0 in the rows written before this version and
-- contradict the rule.
--
-- Old rows: calls_listed and calls_inferred are 0 in the rows stored before
-- this version, so their calls count as declared when they carry a client
-- revision and unknown when not. That is exactly the rule for a call that
-- states no source, which every call stored before version 11 is. Calls
-- that a version-11 store kept with a stated listed or inferred source are
-- counted declared by the rollups; their events keep the source.
--
-- How: ADD COLUMN to the tables, then ALTER TABLE … MODIFY QUERY on their
-- views, which replaces a view's SELECT in one step (checked on chDB 26.7):
-- no view is dropped and created again, so an insert that an ingester runs
-- meanwhile loses no call. Each table gains its columns before a view that
-- selects them: calls_1d's view reads calls_1h, so calls_1h's columns come
-- before that view changes. An insert landing between a table's ADD COLUMN
-- and its view's MODIFY QUERY stores its calls with 0 in the new columns,
-- read as declared, as the old rows are. The views select what versions 8
-- (calls_1h, calls_1d) and 10 (recent_calls) made them select, plus the
-- source.
--
-- Then each view is renamed away and back, in one RENAME: MODIFY QUERY
-- leaves the view, in the process that ran it (the ClickHouse server, or
-- the embedded store's process), keyed for insert deduplication otherwise
-- than a restart loads it, so a batch that process stored, written again
-- under its token after a restart (the spool's replay after a crash), was
-- stored twice in these views' tables and the rollups fed from them
-- (store/embedded's TestReplayAfterRestartIsStoredOnce; the kill -9 test of
-- internal/ingest/faulttest found it). The rename registers the view as a
-- restart does, and keeps it attached throughout: an Atomic database
-- renames a table in place, under its UUID, so no insert misses the view.
-- An insert that lands between the two renames is keyed under the
-- passing name: only its own retry, across that moment, would be stored
-- twice.
-- Each statement is idempotent: IF EXISTS skips the rename whose name is
-- gone, should a run stop between the two.

ALTER TABLE {{table "recent_calls"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS revision_client_source {{.RevisionSourceEnum}} AFTER revision_client;
ALTER TABLE {{table "calls_1h"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS calls_listed SimpleAggregateFunction(sum, UInt64) AFTER retries,
    ADD COLUMN IF NOT EXISTS calls_inferred SimpleAggregateFunction(sum, UInt64) AFTER calls_listed;
ALTER TABLE {{table "calls_1d"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS calls_listed SimpleAggregateFunction(sum, UInt64) AFTER retries,
    ADD COLUMN IF NOT EXISTS calls_inferred SimpleAggregateFunction(sum, UInt64) AFTER calls_listed;
{{if .Cluster}}
-- Cluster mode: the Distributed tables in front of the local ones.
ALTER TABLE {{.Database}}.recent_calls{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS revision_client_source {{.RevisionSourceEnum}} AFTER revision_client;
ALTER TABLE {{.Database}}.calls_1h{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS calls_listed SimpleAggregateFunction(sum, UInt64) AFTER retries,
    ADD COLUMN IF NOT EXISTS calls_inferred SimpleAggregateFunction(sum, UInt64) AFTER calls_listed;
ALTER TABLE {{.Database}}.calls_1d{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS calls_listed SimpleAggregateFunction(sum, UInt64) AFTER retries,
    ADD COLUMN IF NOT EXISTS calls_inferred SimpleAggregateFunction(sum, UInt64) AFTER calls_listed;
{{end}}

ALTER TABLE {{.Database}}.calls_1d_mv{{.OnCluster}} MODIFY QUERY
SELECT tenant, toStartOfDay(hour) AS day, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       sum(calls) AS calls,
       sum(side_effects) AS side_effects,
       sum(retries) AS retries,
       sum(calls_listed) AS calls_listed,
       sum(calls_inferred) AS calls_inferred,
       uniqHLL12MergeState(sessions) AS sessions,
       uniqHLL12MergeState(runs) AS runs,
       min(first_seen) AS first_seen,
       max(last_seen) AS last_seen,
       max(max_session_age_s) AS max_session_age_s
FROM {{table "calls_1h"}}
GROUP BY tenant, day, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

ALTER TABLE {{.Database}}.calls_1h_mv{{.OnCluster}} MODIFY QUERY
SELECT tenant, toStartOfHour(time) AS hour, tool, revision_client, revision_server,
       outcome, adapter_id, service, environment, client_name, client_version,
       privilege, error_code,
       count() AS calls,
       countIf(side_effect_started) AS side_effects,
       countIf(retry_of != '') AS retries,
       countIf(revision_client_source = 'listed') AS calls_listed,
       countIf(revision_client_source = 'inferred') AS calls_inferred,
       uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
       uniqHLL12StateIf(run_id, run_id != '') AS runs,
       min(time) AS first_seen,
       max(time) AS last_seen,
       max(session_age_s) AS max_session_age_s
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
GROUP BY tenant, hour, tool, revision_client, revision_server, outcome,
         adapter_id, service, environment, client_name, client_version, privilege, error_code;

ALTER TABLE {{.Database}}.recent_calls_mv{{.OnCluster}} MODIFY QUERY
SELECT tenant, time, tool, revision_client, revision_client_source, revision_server, outcome, adapter_id,
       service, environment, client_name, client_version, privilege, error_code,
       side_effect_started, retry_of != '' AS retry, retry_after,
       if(session_id != '', session_id, run_id) AS session, run_id, session_age_s
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call';

RENAME TABLE IF EXISTS {{.Database}}.calls_1d_mv TO {{.Database}}.calls_1d_mv_renamed, {{.Database}}.calls_1d_mv_renamed TO {{.Database}}.calls_1d_mv{{.OnCluster}};
RENAME TABLE IF EXISTS {{.Database}}.calls_1h_mv TO {{.Database}}.calls_1h_mv_renamed, {{.Database}}.calls_1h_mv_renamed TO {{.Database}}.calls_1h_mv{{.OnCluster}};
RENAME TABLE IF EXISTS {{.Database}}.recent_calls_mv TO {{.Database}}.recent_calls_mv_renamed, {{.Database}}.recent_calls_mv_renamed TO {{.Database}}.recent_calls_mv{{.OnCluster}};
