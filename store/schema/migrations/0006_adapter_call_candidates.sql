-- Version 6: the successful calls through an adapter move out of
-- violation_candidates into a table of their own, sorted by adapter.
--
--   violation_candidates     ← events   violations only
--   adapter_call_candidates  ← events   successful calls through an adapter
--
-- Why: removed_tool_success depends on the adapter registry, whose latest
-- declaration may come after the call, so version 4 kept every successful
-- call through any adapter in violation_candidates as a candidate, and the
-- report filtered them against the registry at query time. Those
-- candidates were nearly all of the table, and few of them were answers,
-- yet the first page of the report read and filtered all of them
-- (docs/capacity.md, "Schema decisions"). Now every row of
-- violation_candidates is an answer, and the report reads from
-- adapter_call_candidates only the calls through the adapters whose latest
-- declaration is a removal: the table is sorted by adapter, so that
-- `adapter_id IN (...)` selects ranges of the primary key
-- (queries/violations.sql).

-- The calls through an adapter, with the columns of violation_candidates
-- but the kind, which is removed_tool_success for every row the report
-- keeps. A call whose own change class is removal is a violation whatever
-- the registry says, and stays in violation_candidates.
CREATE TABLE IF NOT EXISTS {{table "adapter_call_candidates"}}{{.OnCluster}}
(
    tenant             LowCardinality(String),
    time               DateTime64(9, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    event_id           UInt64 CODEC(ZSTD(1)),
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
ORDER BY (tenant, adapter_id, time, event_id)
TTL toDateTime(time) + INTERVAL {{.RetentionDays}} DAY;
{{distributed "adapter_call_candidates"}}

-- The view of version 4 kept both kinds of removed_tool_success candidate;
-- it now keeps the calls whose own change class is removal. Migrations run
-- under the schema lock (store/schema/lock.go), ingest held, so no insert falls between the two statements.
DROP VIEW IF EXISTS {{.Database}}.violations_removed_tool_mv{{.OnCluster}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.violations_removed_tool_mv{{.OnCluster}} TO {{table "violation_candidates"}} AS
SELECT tenant, time, event_id, 'removed_tool_success' AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat(toString(outcome), ' call to a removed revision (change class removal)') AS detail
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('current', 'normalized')
  AND change_class = 'removal';

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.adapter_call_candidates_mv{{.OnCluster}} TO {{table "adapter_call_candidates"}} AS
SELECT tenant, time, event_id, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       concat(toString(outcome), ' call to a removed tool through removal adapter ', adapter_id) AS detail
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('current', 'normalized')
  AND change_class != 'removal'
  AND adapter_id != '';

-- Stores of version 4 or 5: the candidates move, once. The INSERT is
-- skipped when the new table already holds rows (a re-run after it
-- succeeded), and the mutation removes what it copied; the views no longer
-- write such rows into violation_candidates, so a re-run of either adds or
-- removes nothing more. The copy waits for the shards in cluster mode.
INSERT INTO {{.Database}}.adapter_call_candidates
SETTINGS distributed_foreground_insert = 1
SELECT tenant, time, event_id, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment, detail
FROM {{.Database}}.violation_candidates
WHERE kind = 'removed_tool_success'
  AND change_class != 'removal'
  AND (SELECT count() FROM {{.Database}}.adapter_call_candidates) = 0;

-- A mutation that rewrites the parts, not a lightweight DELETE: that one
-- only masks the rows, which the report would still read (and filter out)
-- until a merge rewrote the part, and a settled part is not merged again:
-- after a lightweight delete the report still read every row the delete
-- had masked. The table is small, so the rewrite is cheap.
ALTER TABLE {{table "violation_candidates"}}{{.OnCluster}}
    DELETE WHERE kind = 'removed_tool_success' AND change_class != 'removal'
SETTINGS mutations_sync = 2;
