-- Safety violations, one row per event and kind, from the raw events: the
-- reference that violations.sql (served from violation_candidates) must
-- equal, and its fallback.
--
--   side_effect_rejected  a call rejected (rejected_stale, _incompatible or
--                         _invalid) after its side effect had started;
--   mixed_revision        a call validated under one revision and executed
--                         under another (revision_validated set and not the
--                         executing revision);
--   removed_tool_success  a call that succeeded (outcome current or
--                         normalized) although its change class is removal,
--                         or through an adapter whose registry change class
--                         is removal: the server should have answered
--                         removed or rejected it;
--   retry_across_change   an automatic retry across a semantic or authority
--                         change: a call with retry_of set and
--                         repair_automatic = true, or a repair event
--                         refresh_retry with repair_automatic = true, whose
--                         change class is semantic or authority. One row
--                         per retry: the repair's (without an outcome) is
--                         left out when the retry's call (with one) of the
--                         same tool, session, run and request id is a
--                         violation too, as when the server records the
--                         retry and the client its repair.
--
-- Each row carries the facts its detail is written from and an empty
-- detail, which the Runner writes in Go (internal/violation), as for the
-- rows of violations.sql.
--
-- Ordered by (time, event_id, kind) and paginated by a cursor on it.
SELECT kind, time, event_id, tool, session_id, run_id, request_id,
       client_name, client_version,
       revision_client, revision_server, revision_validated,
       toString(change_class) AS change_class, toString(outcome) AS outcome,
       service, service_version, detail,
       toString(event_name) AS event_name, adapter_id, error_code, external_target, external_requests,
       retry_of, retry_attempt, toString(repair_result) AS repair_result
FROM
(
    SELECT 'side_effect_rejected' AS kind, *, '' AS detail
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String} AND event_name = 'mcp.drift.call'
      AND outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')
      AND side_effect_started
      {{- template "raw_filter" .}}
    UNION ALL
    SELECT 'mixed_revision' AS kind, *, '' AS detail
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String} AND event_name = 'mcp.drift.call'
      AND revision_validated != '' AND revision_validated != revision_server
      {{- template "raw_filter" .}}
    UNION ALL
    SELECT 'removed_tool_success' AS kind, *, '' AS detail
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String} AND event_name = 'mcp.drift.call'
      AND outcome IN ('current', 'normalized')
      AND (change_class = 'removal'
           OR (adapter_id != '' AND adapter_id IN
               (SELECT adapter_id FROM {{.Database}}.adapters
                WHERE tenant = {tenant:String}
                GROUP BY adapter_id
                HAVING argMax(change_class, declared_at) = 'removal')))
      {{- template "raw_filter" .}}
    UNION ALL
    SELECT 'retry_across_change' AS kind, *, '' AS detail
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String}
      AND ((event_name = 'mcp.drift.call' AND retry_of != '')
           OR (event_name = 'mcp.drift.repair' AND repair_action = 'refresh_retry'))
      AND repair_automatic
      AND change_class IN ('semantic', 'authority')
      {{- template "raw_filter" .}}
      AND NOT (outcome = '' AND request_id != ''
               AND (tool, session_id, run_id, request_id) IN
                   (SELECT tool, session_id, run_id, request_id
                    FROM {{.Database}}.events
                    WHERE tenant = {tenant:String} AND event_name = 'mcp.drift.call' AND retry_of != ''
                      AND repair_automatic AND change_class IN ('semantic', 'authority') AND outcome != ''
                      {{- template "raw_filter" .}}))
)
{{- if .F.After}}
WHERE (time, event_id, kind) > ({after_time:DateTime64(9, 'UTC')}, {after_id:UInt64}, {after_kind:String})
{{- end}}
ORDER BY time, event_id, kind
LIMIT {limit:UInt32}
{{template "settings" ""}}
