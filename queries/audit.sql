-- The call audit: one row per tools/call with its raw and normalised
-- arguments, the handler build, the approval decision, the external target
-- and the revisions. Searched by run, session, request id and the common
-- filter; ordered by (time, event_id) and paginated by a cursor on it. Read
-- from audit_calls, which is kept on its own retention.
SELECT time, event_id, tool, service, service_version, environment,
       request_id, session_id, run_id,
       client_name, client_version,
       revision_client, revision_server, revision_validated,
       toString(outcome) AS outcome, adapter_id, toString(approval) AS approval,
       toString(privilege) AS privilege, external_target, external_requests,
       side_effect_started, args_raw, args_normalized
FROM {{.Database}}.audit_calls
WHERE tenant = {tenant:String}
  {{- template "raw_filter" .}}
  {{- if .F.RunID}}
  AND run_id = {run_id:String}
  {{- end}}
  {{- if .F.SessionID}}
  AND session_id = {session_id:String}
  {{- end}}
  {{- if .F.RequestID}}
  AND request_id = {request_id:String}
  {{- end}}
  {{- if .F.After}}
  AND (time, event_id) > ({after_time:DateTime64(9, 'UTC')}, {after_id:UInt64})
  {{- end}}
ORDER BY time, event_id
LIMIT {limit:UInt32}
-- Sorting a tool's calls beats reading them in key order here: with the
-- tool fixed the key (tenant, tool, time) allows the latter, which read
-- the same granules in 41 ms where the top-k sort took 22 (the first page
-- of the busiest tool, 2M calls, over 10M events).
{{template "settings" "optimize_read_in_order = 0"}}
