-- Version 19: a call seen from the client's side is held back until the
-- store knows whether the server reported it too.
--
--   events_in, events   + client_view: '' for every event but a CLIENT span
--                         of tools/call; 'held' for one as it arrives;
--                         'alone' for one released as its call's only
--                         record (otelschema.ClientView)
--   client_views        the held client views, with held_at, the time the
--                         store received each; kept 7 days
--   client_view_claims  which process releases the client views of each
--                         period, and up to when each release went
--   events_mv           leaves the held client views out of events
--   client_views_mv     writes them into client_views
--
-- Why: SDKs now emit spans on both sides of a call (the Python SDK v2 does
-- by default). A call seen by the client and by the server would count
-- twice; the server's span is the authoritative one, with the revision it
-- ran. So a client view waits in client_views, and the releaser
-- (internal/clientview) inserts into events_in, as 'alone', those older
-- than a hold time whose call has no server span in events (the same
-- tenant, trace id, request id and tool). Every rollup then counts the
-- released view as it counts any call, and rollup = raw holds, since the
-- held rows never reach events.
--
-- client_views is created from events_in's columns and held_at: the releaser inserts its columns
-- back into events_in by name (store.InsertColumns), so a later version
-- that adds a column to events_in adds it here too.
--
-- Old rows: every event stored before this version reads client_view ''.
-- Client spans stored before it were counted as calls, as they were then.
--
-- How: the columns first, then events_mv is created again, under the
-- schema lock that holds the ingesters' writes (see version 15), so a
-- client view is either stored as a call before the views change, or held
-- after, never lost.

ALTER TABLE {{table "events_in"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS client_view {{.ClientViewEnum}} AFTER args_normalized;
ALTER TABLE {{table "events"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS client_view {{.ClientViewEnum}} AFTER args_normalized;
{{if .Cluster}}
-- Cluster mode: the Distributed tables in front of the local ones.
ALTER TABLE {{.Database}}.events_in{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS client_view {{.ClientViewEnum}} AFTER args_normalized;
ALTER TABLE {{.Database}}.events{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS client_view {{.ClientViewEnum}} AFTER args_normalized;
{{end}}

CREATE TABLE IF NOT EXISTS {{table "client_views"}}{{.OnCluster}}
ENGINE = {{engine "MergeTree"}}
PARTITION BY toDate(held_at)
ORDER BY (tenant, held_at)
TTL toDateTime(held_at) + INTERVAL 7 DAY
AS SELECT *, now64(3, 'UTC') AS held_at FROM {{table "events_in"}} WHERE 0;
{{distributed "client_views"}}

-- One row per claimed period (epoch = the store's time / the release
-- interval), stored once per period by its insert_deduplication_token,
-- and one per finished release, with the held_at it released up to. Every
-- node holds every row, as schema_lock does.
CREATE TABLE IF NOT EXISTS {{.Database}}.client_view_claims{{.OnCluster}}
(
    epoch       UInt64,
    owner       String,
    released_to DateTime64(3, 'UTC'),
    at          DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = {{if .Cluster}}ReplicatedMergeTree('/clickhouse/tables/all/{database}/{table}', '{replica}'){{else}}MergeTree{{end}}
ORDER BY epoch
TTL toDateTime(at) + INTERVAL 30 DAY
{{if not .Cluster}}SETTINGS non_replicated_deduplication_window = 1000{{end}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.client_views_mv{{.OnCluster}} TO {{table "client_views"}} AS
SELECT *, now64(3, 'UTC') AS held_at
FROM {{table "events_in"}}
WHERE client_view = 'held';

DROP VIEW IF EXISTS {{.Database}}.events_mv{{.OnCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.events_mv{{.OnCluster}} TO {{table "events"}} AS
SELECT *, event_name = 'mcp.drift.call' AS audited
FROM {{table "events_in"}}
WHERE client_view != 'held';
