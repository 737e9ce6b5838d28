-- Safety violations, one row per event and kind, served from two narrow
-- tables (migrations 0004 and 0006); the definitions are those of
-- violations_raw.sql, which computes the same rows from the raw events:
--
--   side_effect_rejected  a call rejected after its side effect had started;
--   mixed_revision        a call validated under one revision and executed
--                         under another;
--   removed_tool_success  a call that succeeded although its change class
--                         is removal, or through an adapter whose latest
--                         registry declaration has change class removal;
--   retry_across_change   an automatic retry (a call, or a refresh_retry
--                         repair) across a semantic or authority change;
--                         one row per retry: a repair's row (no outcome)
--                         is left out when the retry's call, of the same
--                         tool, session, run and request id, has one.
--
-- The rows carry the facts their detail is written from, and the detail
-- the views stored before version 17 ('' since): the Runner writes an
-- empty one in Go (internal/violation), as for violations_raw.sql.
--
-- violation_candidates holds only violations, sorted by
-- (tenant, time, event_id, kind), the page order: the first branch reads
-- from the cursor on and stops after limit rows. The calls through an
-- adapter are violations only if the adapter's latest declaration, at query
-- time, is a removal (a declaration made after the call still counts):
-- adapter_call_candidates holds every successful call through an adapter,
-- sorted by (tenant, adapter_id, time, event_id), and the second branch
-- reads the ranges of the adapters the registry declares removed, which
-- the Runner reads first (removed_adapters.sql) and binds as
-- {removed_adapters}; without any, the query is the first branch alone
-- (.F.Removed). Each branch gives at most limit rows of the page; their
-- union is ordered again.
{{- if .F.Removed}}
SELECT {{template "violation_columns"}}
FROM
(
    (
        SELECT kind, time, event_id, tool, session_id, run_id, request_id, client_name, client_version,
               revision_client, revision_server, revision_validated, change_class, outcome,
               service, service_version, detail,
               event_name, adapter_id, error_code, external_target, external_requests,
               retry_of, retry_attempt, repair_result
        FROM {{.Database}}.violation_candidates
        WHERE tenant = {tenant:String}
          {{- template "raw_filter" .}}
          {{- template "page_after" .}}
          {{- template "one_row_per_retry" .}}
        ORDER BY time, event_id, kind
        LIMIT {limit:UInt32}
    )
    UNION ALL
    (
        SELECT 'removed_tool_success' AS kind, time, event_id, tool, session_id, run_id, request_id, client_name, client_version,
               revision_client, revision_server, revision_validated, change_class, outcome,
               service, service_version, detail,
               'mcp.drift.call' AS event_name, adapter_id, '' AS error_code, '' AS external_target,
               toInt64(0) AS external_requests, '' AS retry_of, toInt64(0) AS retry_attempt, '' AS repair_result
        FROM {{.Database}}.adapter_call_candidates
        WHERE tenant = {tenant:String}
          AND adapter_id IN {removed_adapters:Array(String)}
          {{- template "raw_filter" .}}
          {{- template "page_after" .}}
        ORDER BY time, event_id
        LIMIT {limit:UInt32}
    )
)
{{- else}}
-- No adapter is declared removed: the first branch alone, not wrapped in
-- a union (a subquery less to plan: 5.6 ms instead of 7.3 for the first
-- page on 10M events).
SELECT {{template "violation_columns"}}
FROM {{.Database}}.violation_candidates
WHERE tenant = {tenant:String}
  {{- template "raw_filter" .}}
  {{- template "page_after" .}}
  {{- template "one_row_per_retry" .}}
{{- end}}
ORDER BY time, event_id, kind
LIMIT {limit:UInt32}
{{template "settings" ""}}

{{define "violation_columns"}}kind, time, event_id, tool, session_id, run_id, request_id,
       client_name, client_version,
       revision_client, revision_server, revision_validated,
       toString(change_class) AS change_class, toString(outcome) AS outcome,
       service, service_version, detail,
       event_name, adapter_id, error_code, external_target, external_requests,
       retry_of, retry_attempt, repair_result
{{- end}}

{{define "page_after"}}
{{- if .F.After}}
          AND (time, event_id, kind) > ({after_time:DateTime64(9, 'UTC')}, {after_id:UInt64}, {after_kind:String})
          -- The same bound on time alone, which the primary key can use.
          AND time >= {after_time:DateTime64(9, 'UTC')}
{{- end}}
{{- end}}
