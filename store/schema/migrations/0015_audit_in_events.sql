-- Version 15: the call audit is read from the events; no second copy.
--
--   events   + args_raw, args_normalized: a call's arguments, kept for
--              the audit retention (a column TTL)
--            + audited: the row carries its arguments (true on the calls
--              stored from this version on)
--            + idx_request: the audit's search by request id
--   audit_calls_mv   dropped; audit_calls is read until its rows age out
--
-- Why: audit_calls_mv wrote every call a second time, sorted by another
-- key, into a table of its own: 28 % of the views' CPU on a ClickHouse
-- server (system.query_views_log, `go run ./bench -suite ingest`), the
-- largest single view. Most of its columns are the events' own; only the
-- arguments were not in events.
--
-- How: the arguments become columns of events with their own TTL, the
-- audit retention, which Options.Validate keeps within the events'
-- retention. The events view is created again so that it copies them and
-- marks the call rows audited, and audit_calls_mv goes in the same run.
-- Migrations run under the schema lock, while ingesters hold their writes
-- (store/schema/lock.go), so a call is stored either with audit_calls_mv
-- (in audit_calls, and in events unaudited) or after it (in events,
-- audited), never both nor neither. The audit reads events' audited rows
-- and all of audit_calls (queries/audit.sql); once the audit retention
-- has passed, audit_calls is empty and a later version drops it.

ALTER TABLE {{table "events"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS args_raw String CODEC(ZSTD(3)) TTL toDateTime(time) + INTERVAL {{.AuditRetentionDays}} DAY AFTER contract_field,
    ADD COLUMN IF NOT EXISTS args_normalized String CODEC(ZSTD(3)) TTL toDateTime(time) + INTERVAL {{.AuditRetentionDays}} DAY AFTER args_raw,
    ADD COLUMN IF NOT EXISTS audited Bool AFTER args_normalized;
ALTER TABLE {{table "events"}}{{.OnCluster}}
    ADD INDEX IF NOT EXISTS idx_request request_id TYPE bloom_filter(0.01) GRANULARITY 4;
{{if .Cluster}}
-- Cluster mode: the Distributed table in front of the local one.
ALTER TABLE {{.Database}}.events{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS args_raw String AFTER contract_field,
    ADD COLUMN IF NOT EXISTS args_normalized String AFTER args_raw,
    ADD COLUMN IF NOT EXISTS audited Bool AFTER args_normalized;
{{end}}

DROP VIEW IF EXISTS {{.Database}}.audit_calls_mv{{.OnCluster}};

DROP VIEW IF EXISTS {{.Database}}.events_mv{{.OnCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.events_mv{{.OnCluster}} TO {{table "events"}} AS
SELECT *, event_name = 'mcp.drift.call' AS audited
FROM {{table "events_in"}};
