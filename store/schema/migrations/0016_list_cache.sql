-- Version 16: the cache hint of the advertised list.
--
--   events_in, events   + list_ttl_ms, list_cache_scope: the ttlMs and
--                         cacheScope of the tools/list result an advertised
--                         tool was listed in (dev.mcpdrift.list.ttl_ms,
--                         dev.mcpdrift.list.cache_scope; MCP 2026-07-28,
--                         SEP-2549); 0 and '' without one
--   tool_revisions      + list_ttl_ms: the longest ttlMs the revision was
--                         advertised with; list_cache_scope: the scope
--                         that came with it
--
-- Why: a client allowed to keep a list for a day may call the old revision
-- for a day after a change. The release check reads the hint from a list
-- the user supplies; with -deployed, and in the propagation report, the
-- old list is the registry's, so the registry keeps the hint: both read
-- that one stored fact.
--
-- Values: 0 stands for "no hint" as well as for ttlMs 0. Both mean that a
-- client keeps nothing: the quantity the readers want, the longest a
-- client may keep the list, is 0 either way. The scope is merged as
-- argMax by (ttl, scope), so it is the one sent with the longest ttl, and
-- of equal ttls the same one whatever the merge order.
--
-- Old rows: the revisions advertised before this version read 0 and '':
-- no hint, which is what the servers of that time could not send.
--
-- How: the columns first, then events_mv and tool_revisions_mv are created
-- again, under the schema lock that holds the ingesters' writes (see
-- version 15), so an advertisement is stored either before the views
-- change (without its hint) or after (with it), never lost.

ALTER TABLE {{table "events_in"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS list_ttl_ms Int64 AFTER definition,
    ADD COLUMN IF NOT EXISTS list_cache_scope String AFTER list_ttl_ms;
ALTER TABLE {{table "events"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS list_ttl_ms Int64 AFTER definition,
    ADD COLUMN IF NOT EXISTS list_cache_scope LowCardinality(String) AFTER list_ttl_ms;
ALTER TABLE {{table "tool_revisions"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS list_ttl_ms SimpleAggregateFunction(max, Int64) AFTER advertisements,
    ADD COLUMN IF NOT EXISTS list_cache_scope AggregateFunction(argMax, String, Tuple(Int64, String)) AFTER list_ttl_ms;
{{if .Cluster}}
-- Cluster mode: the Distributed tables in front of the local ones.
ALTER TABLE {{.Database}}.events_in{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS list_ttl_ms Int64 AFTER definition,
    ADD COLUMN IF NOT EXISTS list_cache_scope String AFTER list_ttl_ms;
ALTER TABLE {{.Database}}.events{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS list_ttl_ms Int64 AFTER definition,
    ADD COLUMN IF NOT EXISTS list_cache_scope LowCardinality(String) AFTER list_ttl_ms;
ALTER TABLE {{.Database}}.tool_revisions{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS list_ttl_ms SimpleAggregateFunction(max, Int64) AFTER advertisements,
    ADD COLUMN IF NOT EXISTS list_cache_scope AggregateFunction(argMax, String, Tuple(Int64, String)) AFTER list_ttl_ms;
{{end}}

DROP VIEW IF EXISTS {{.Database}}.events_mv{{.OnCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.events_mv{{.OnCluster}} TO {{table "events"}} AS
SELECT *, event_name = 'mcp.drift.call' AS audited
FROM {{table "events_in"}};

DROP VIEW IF EXISTS {{.Database}}.tool_revisions_mv{{.OnCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.tool_revisions_mv{{.OnCluster}} TO {{table "tool_revisions"}} AS
SELECT tenant, tool, service, environment, revision_server AS revision,
       argMaxState(definition, time) AS definition,
       min(time) AS first_advertised,
       max(time) AS last_advertised,
       groupUniqArrayIf(service_instance, service_instance != '') AS instances,
       count() AS advertisements,
       max(e.list_ttl_ms) AS list_ttl_ms,
       argMaxState(CAST(e.list_cache_scope AS String), (e.list_ttl_ms, CAST(e.list_cache_scope AS String))) AS list_cache_scope
FROM {{table "events_in"}} AS e
WHERE event_name = 'mcp.drift.advertised'
GROUP BY tenant, tool, service, environment, revision;
