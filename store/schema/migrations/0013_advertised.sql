-- Version 13: the registry of advertised tool definitions.
--
--   events_in, events   event_name + 'mcp.drift.advertised' (EventAdvertised,
--                       received as dev.mcpdrift.advertised)
--   events_in           + definition: the advertised event's tool
--                       definition, JSON (dev.mcpdrift.tool.definition)
--   events              + definition, which events_mv leaves empty
--   tool_revisions      one row per tenant, tool, service, environment and
--                       revision: the definition, first and last
--                       advertised, the instances that advertised it
--
-- Why: a report says that a tool has calls on 1 → 2, and the release check
-- compares two lists the user supplies; neither knew what 1 and 2 were.
-- Servers now advertise each tool's definition at start, on change and
-- periodically, and the change between any two stored revisions is
-- computed by internal/toolchange, as the check computes it.
--
-- How: the enum gains a value (metadata only), events first so that an
-- advertised event that events_in accepts always has a place in events.
-- The definition is added to events_in alone: events_mv selects every
-- column of events_in but the arguments, and the engine inserts into
-- events only the columns events has, so the raw events never hold a
-- definition (a server re-advertises its whole list every few minutes;
-- tool_revisions holds one copy). events gets the column all the same,
-- empty: a view over events_in created after this version, as a test
-- that replays migration 10's events_mv does, may then select every
-- column, and a later migration that re-creates events_mv leaves the
-- definition out by name. tool_revisions is an AggregatingMergeTree:
-- every advertisement of a revision, from any instance and any restart,
-- merges into one row (min, max, the union of the instances, the latest
-- definition), so storing the same advertisement twice changes nothing.
-- It has no TTL: it grows with revisions, not with traffic, and a
-- revision's history outlives the raw events. The rows stored before this
-- version are untouched.

ALTER TABLE {{table "events"}}{{.OnCluster}}
    MODIFY COLUMN event_name {{.EventNameEnum}};
{{if .Cluster}}
ALTER TABLE {{.Database}}.events{{.OnCluster}}
    MODIFY COLUMN event_name {{.EventNameEnum}};
{{end}}
ALTER TABLE {{table "events_in"}}{{.OnCluster}}
    MODIFY COLUMN event_name {{.EventNameEnum}};
{{if .Cluster}}
ALTER TABLE {{.Database}}.events_in{{.OnCluster}}
    MODIFY COLUMN event_name {{.EventNameEnum}};
{{end}}
ALTER TABLE {{table "events"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS definition String AFTER contract_field;
{{if .Cluster}}
ALTER TABLE {{.Database}}.events{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS definition String AFTER contract_field;
{{end}}
ALTER TABLE {{table "events_in"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS definition String AFTER contract_field;
{{if .Cluster}}
ALTER TABLE {{.Database}}.events_in{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS definition String AFTER contract_field;
{{end}}

CREATE TABLE IF NOT EXISTS {{table "tool_revisions"}}{{.OnCluster}}
(
    tenant           LowCardinality(String),
    tool             LowCardinality(String),
    service          LowCardinality(String),
    environment      LowCardinality(String),
    revision         String,
    definition       AggregateFunction(argMax, String, DateTime64(9, 'UTC')),
    first_advertised SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
    last_advertised  SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
    instances        SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
    advertisements   SimpleAggregateFunction(sum, UInt64)
)
ENGINE = {{engine "AggregatingMergeTree"}}
ORDER BY (tenant, tool, service, environment, revision);
{{distributed "tool_revisions"}}

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.tool_revisions_mv{{.OnCluster}} TO {{table "tool_revisions"}} AS
SELECT tenant, tool, service, environment, revision_server AS revision,
       argMaxState(definition, time) AS definition,
       min(time) AS first_advertised,
       max(time) AS last_advertised,
       groupUniqArrayIf(service_instance, service_instance != '') AS instances,
       count() AS advertisements
FROM {{table "events_in"}}
WHERE event_name = 'mcp.drift.advertised'
GROUP BY tenant, tool, service, environment, revision;
