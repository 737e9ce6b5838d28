-- Safety violations, one row per event and kind, served from
-- violation_candidates (migration 0004), whose view keeps the events of
-- each kind below with their detail; the definitions are those of
-- violations_raw.sql, which computes the same rows from the raw events:
--
--   side_effect_rejected  a call rejected after its side effect had started;
--   mixed_revision        a call validated under one revision and executed
--                         under another;
--   removed_tool_success  a call that succeeded although its change class
--                         is removal, or through an adapter whose latest
--                         registry declaration has change class removal:
--                         the table holds every successful adapter call as
--                         a candidate, and the registry is consulted here,
--                         so a declaration made after the call still counts;
--   retry_across_change   an automatic retry (a call, or a refresh_retry
--                         repair) across a semantic or authority change.
--
-- The table is sorted by (tenant, time, event_id, kind), the page order:
-- a page reads from the cursor on and stops after limit rows.
SELECT kind, time, event_id, tool, session_id, run_id, request_id,
       if(client_version != '', concat(client_name, '@', client_version), client_name) AS client,
       revision_client, revision_server, revision_validated,
       toString(change_class) AS change_class, toString(outcome) AS outcome,
       service, service_version, detail
FROM {{.Database}}.violation_candidates
WHERE tenant = {tenant:String}
  {{- template "raw_filter"}}
  AND (kind != 'removed_tool_success'
       OR change_class = 'removal'
       OR adapter_id IN
          (SELECT adapter_id FROM {{.Database}}.adapters
           WHERE tenant = {tenant:String}
           GROUP BY adapter_id
           HAVING argMax(change_class, declared_at) = 'removal'))
  AND ({after_set:Bool} = false
       OR (time, event_id, kind) > ({after_time:DateTime64(9, 'UTC')}, {after_id:UInt64}, {after_kind:String}))
  -- The same bound on time alone, which the primary key can use.
  AND ({after_set:Bool} = false OR time >= {after_time:DateTime64(9, 'UTC')})
ORDER BY time, event_id, kind
LIMIT {limit:UInt32}
