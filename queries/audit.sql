-- The call audit: one row per tools/call with its raw and normalised
-- arguments, the handler build, the approval decision, the external target
-- and the revisions. Searched by run, session, request id and the common
-- filter; ordered by (time, event_id) and paginated by a cursor on it.
-- Read from the audited calls, a page of each of their two tables
-- (tiers.tmpl, "audited_page").
SELECT time, event_id, tool, service, service_version, environment,
       request_id, session_id, run_id,
       client_name, client_version,
       revision_client, revision_server, revision_validated,
       toString(outcome) AS outcome, adapter_id, toString(approval) AS approval,
       toString(privilege) AS privilege, external_target, external_requests,
       side_effect_started, args_raw, args_normalized
FROM {{template "audited_page" .}}
ORDER BY time, event_id
LIMIT {limit:UInt32}
-- Sorting a tool's calls beats reading them in key order here (the first
-- page of the busiest tool, 2M calls, over 10M events: 22 ms for the
-- top-k sort, 41 for a read in audit_calls' key order).
{{template "settings" "optimize_read_in_order = 0"}}
