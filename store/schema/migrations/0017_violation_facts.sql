-- Version 17: the violations' facts stored, their detail written in Go.
--
--   violation_candidates     + event_name, error_code, external_target,
--                              external_requests, retry_of, retry_attempt,
--                              repair_result: the event's fields a
--                              violation's detail is written from
--   violations_mv,
--   adapter_call_candidates_mv  write those facts and an empty detail
--
-- Why: the views built English sentences with concat, and
-- queries/violations_raw.sql repeated them: three copies of one wording,
-- two of them frozen into materialised views, where a change of words
-- meant a migration. The facts are what the rows are; the sentence is
-- written once, by internal/violation, when the report reads them.
--
-- Old rows: the rows stored before this version keep their detail and
-- read the new columns as '' and 0; the report uses a stored detail as it
-- is and writes it only when it is empty, so a violation reads the same
-- text before and after the upgrade. adapter_call_candidates already held
-- every fact its detail needs (outcome, adapter_id).
--
-- How: the columns first, then both views are created again, under the
-- schema lock that holds the ingesters' writes (see version 15), so a
-- violation is stored either before the views change (with its detail)
-- or after (with its facts), never lost.

ALTER TABLE {{table "violation_candidates"}}{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS event_name LowCardinality(String) AFTER detail,
    ADD COLUMN IF NOT EXISTS error_code LowCardinality(String) AFTER event_name,
    ADD COLUMN IF NOT EXISTS external_target LowCardinality(String) AFTER error_code,
    ADD COLUMN IF NOT EXISTS external_requests Int64 AFTER external_target,
    ADD COLUMN IF NOT EXISTS retry_of String CODEC(ZSTD(1)) AFTER external_requests,
    ADD COLUMN IF NOT EXISTS retry_attempt Int64 AFTER retry_of,
    ADD COLUMN IF NOT EXISTS repair_result LowCardinality(String) AFTER retry_attempt;
{{if .Cluster}}
-- Cluster mode: the Distributed table in front of the local one.
ALTER TABLE {{.Database}}.violation_candidates{{.OnCluster}}
    ADD COLUMN IF NOT EXISTS event_name LowCardinality(String) AFTER detail,
    ADD COLUMN IF NOT EXISTS error_code LowCardinality(String) AFTER event_name,
    ADD COLUMN IF NOT EXISTS external_target LowCardinality(String) AFTER error_code,
    ADD COLUMN IF NOT EXISTS external_requests Int64 AFTER external_target,
    ADD COLUMN IF NOT EXISTS retry_of String AFTER external_requests,
    ADD COLUMN IF NOT EXISTS retry_attempt Int64 AFTER retry_of,
    ADD COLUMN IF NOT EXISTS repair_result LowCardinality(String) AFTER retry_attempt;
{{end}}

-- The conditions and kinds of version 14; the detail left to the reader.
DROP VIEW IF EXISTS {{.Database}}.violations_mv{{.OnCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.violations_mv{{.OnCluster}} TO {{table "violation_candidates"}} AS
SELECT tenant, time, event_id, kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       '' AS detail,
       toString(event_name) AS event_name, error_code, external_target, external_requests,
       retry_of, retry_attempt, toString(repair_result) AS repair_result
FROM
(
    SELECT tenant, time, event_id, event_name, tool, session_id, run_id, request_id,
           client_name, client_version, revision_client, revision_server, revision_validated,
           change_class, outcome, adapter_id, service, service_version, environment,
           error_code, external_target, external_requests, retry_of, retry_attempt, repair_result,
           event_name = 'mcp.drift.call'
             AND outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
             AND side_effect_started AS is_side_effect,
           event_name = 'mcp.drift.call'
             AND revision_validated != '' AND revision_validated != revision_server AS is_mixed,
           event_name = 'mcp.drift.call'
             AND outcome IN ('current', 'normalized')
             AND change_class = 'removal' AS is_removed,
           ((event_name = 'mcp.drift.call' AND retry_of != '')
             OR (event_name = 'mcp.drift.repair' AND repair_action = 'refresh_retry'))
             AND repair_automatic
             AND change_class IN ('semantic', 'authority') AS is_retry
    FROM {{table "events"}}
    WHERE is_side_effect OR is_mixed OR is_removed OR is_retry
)
ARRAY JOIN arrayFilter(x -> x != '', [
    if(is_side_effect, 'side_effect_rejected', ''),
    if(is_mixed, 'mixed_revision', ''),
    if(is_removed, 'removed_tool_success', ''),
    if(is_retry, 'retry_across_change', '')
]) AS kind;

-- The calls through an adapter of version 6; the detail left to the reader.
DROP VIEW IF EXISTS {{.Database}}.adapter_call_candidates_mv{{.OnCluster}};
CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.adapter_call_candidates_mv{{.OnCluster}} TO {{table "adapter_call_candidates"}} AS
SELECT tenant, time, event_id, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       '' AS detail
FROM {{table "events"}}
WHERE event_name = 'mcp.drift.call'
  AND outcome IN ('current', 'normalized')
  AND change_class != 'removal'
  AND adapter_id != '';
