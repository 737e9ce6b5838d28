-- Adapter retirement computed from the raw events: the reference for
-- adapter_retirement.sql, over the same resolved window. Same columns, same
-- definitions; the registry is the adapters table in both.
WITH
per_client AS
(
    SELECT adapter_id, tool, client_name, client_version,
           count() AS calls,
           countIf(outcome = 'normalized') AS normalized,
           countIf(session_age_s <= 0) AS unknown_age,
           countIf(privilege = '') AS unknown_privilege,
           uniqHLL12StateIf(if(session_id != '', session_id, run_id), session_id != '' OR run_id != '') AS sessions,
           groupUniqArray(service) AS services,
           max(privilege) AS max_privilege,
           max(session_age_s) AS max_session_age_s,
           min(time) AS first_seen,
           max(time) AS last_seen
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.call'
      AND adapter_id != ''
      {{- template "raw_filter" .}}
    GROUP BY adapter_id, tool, client_name, client_version
),
{{template "adapter_used" .}},
{{template "adapter_violations" .}},
{{template "adapter_before" .}},
traffic AS
(
    SELECT tool, count() AS tool_calls
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.call'
      {{- template "raw_filter" .}}
    GROUP BY tool
),
{{template "adapter_registry" .}},
-- The calls without a client revision, per tool and client; the answer
-- keeps the adapters' tools.
unknown_per_client AS
(
    SELECT tool, client_name, client_version, count() AS calls
    FROM {{.Database}}.events
    WHERE tenant = {tenant:String}
      AND event_name = 'mcp.drift.call'
      AND revision_client = ''
      {{- template "raw_filter" .}}
    GROUP BY tool, client_name, client_version
),
{{template "adapter_unknown" .}}
{{template "retirement_answer" .}}
{{template "settings" ""}}
