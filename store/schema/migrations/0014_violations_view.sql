-- Version 14: the four violation views become one.
--
--   violation_candidates  ← events   violations_mv, in place of
--                                    violations_side_effect_mv,
--                                    violations_mixed_revision_mv,
--                                    violations_removed_tool_mv and
--                                    violations_retry_mv
--
-- Why: every insert runs each view's query over its block and inserts
-- what it keeps as a part of its own, and these four read the same rows
-- into the same table. A view costs a few milliseconds per insert however
-- few rows it keeps (system.query_views_log on a ClickHouse server: the
-- four wrote 13 rows in all for 1M events, in 266 ms of CPU); one view
-- evaluates the four conditions over the block once and writes one part.
--
-- How: the inner query keeps the rows that meet any of the four
-- conditions, each condition once; ARRAY JOIN then writes one row per
-- condition met, so a call that is two violations is two rows, as it was
-- with four views. Kinds, details and columns are those of versions 4 and
-- 6 (the removed_tool_success of a call through an adapter stays in
-- adapter_call_candidates). Migrations run under the schema lock
-- (store/schema/lock.go) with ingest held, so no insert falls between
-- the drops and the create; the rows already stored are untouched.

DROP VIEW IF EXISTS {{.Database}}.violations_side_effect_mv{{.OnCluster}};
DROP VIEW IF EXISTS {{.Database}}.violations_mixed_revision_mv{{.OnCluster}};
DROP VIEW IF EXISTS {{.Database}}.violations_removed_tool_mv{{.OnCluster}};
DROP VIEW IF EXISTS {{.Database}}.violations_retry_mv{{.OnCluster}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.violations_mv{{.OnCluster}} TO {{table "violation_candidates"}} AS
SELECT tenant, time, event_id, v.1 AS kind, tool, session_id, run_id, request_id,
       client_name, client_version, revision_client, revision_server, revision_validated,
       change_class, outcome, adapter_id, service, service_version, environment,
       v.2 AS detail
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
ARRAY JOIN arrayFilter(x -> x.1 != '', [
    (if(is_side_effect, 'side_effect_rejected', ''),
     concat(toString(outcome),
            if(error_code != '', concat(' with ', error_code), ''),
            ' after its side effect had started',
            if(external_target != '', concat(' on ', external_target), ''),
            if(external_requests > 0, concat(' (external requests: ', toString(external_requests), ')'), ''))),
    (if(is_mixed, 'mixed_revision', ''),
     concat('validated under revision ', revision_validated, ', executed under revision ', revision_server)),
    (if(is_removed, 'removed_tool_success', ''),
     concat(toString(outcome), ' call to a removed revision (change class removal)')),
    (if(is_retry, 'retry_across_change', ''),
     if(event_name = 'mcp.drift.call',
        concat('automatic retry of ', retry_of, ' (attempt ', toString(retry_attempt), ') across a change of class ',
               toString(change_class)),
        concat('automatic refresh_retry (', toString(repair_result), ') across a change of class ',
               toString(change_class))))
]) AS v;
