-- Version 11: where a call's client revision came from.
--
--   events_in, events   + revision_client_source: declared by the client,
--                         listed by the server to the session, or inferred
--                         from the arguments (mcp.drift.revision.client.source);
--                         '' when the emitter did not say
--
-- Why: a server instrumented by otelschema/mcpgo now knows the client
-- snapshot of clients that declare nothing, from what it listed to the
-- session or from the arguments. A verdict rests on those revisions, and a
-- team needs to see how much of its traffic each source carries.
--
-- How: ADD COLUMN only, no view is dropped or created, so that an ingester
-- inserting while this runs loses nothing. events_mv selects every column
-- of events_in (SELECT * EXCEPT the arguments), which the engine expands at
-- each insert, so it copies the new column once both tables have it. The
-- target comes first: an insert that lands between the statements carries
-- no source and events takes the default. The calls stored before this
-- version are '' (not stated). Each statement is idempotent.

ALTER TABLE {{table "events"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS revision_client_source {{.RevisionSourceEnum}} AFTER revision_client;
{{if .Cluster}}
ALTER TABLE {{.Database}}.events{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS revision_client_source {{.RevisionSourceEnum}} AFTER revision_client;
{{end}}
ALTER TABLE {{table "events_in"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS revision_client_source {{.RevisionSourceEnum}} AFTER revision_client;
{{if .Cluster}}
ALTER TABLE {{.Database}}.events_in{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS revision_client_source {{.RevisionSourceEnum}} AFTER revision_client;
{{end}}
