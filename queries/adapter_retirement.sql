-- Adapter retirement: every adapter of the registry (its latest declaration
-- before the window's end) and every adapter id seen on calls in the window,
-- with its use by the clients the filter keeps: calls, the share of its
-- tool's traffic, first and last seen, distinct sessions, clients and
-- services, the highest privilege and the oldest session among its callers,
-- the calls whose session age or privilege is unknown, the calls to its
-- tool (through it or not) whose client revision is unknown, the
-- removed_tool_success violations through it, when it was last used (in the
-- window, or else before it, as far back as the retention), and each
-- caller's own figures. would_be_rejected is the what-if: the
-- calls it normalised, which would have been rejected had it been removed.
-- The verdict is computed in Go (retirement.go). The adapted calls come
-- from adapted_*, which keeps the client; the tool's traffic from usage_*
-- when the filter names no client, from the call rollups otherwise; the
-- calls without a client revision from the call rollups, which key on
-- revision_client and keep the client whatever the filter; the registry
-- from the adapters table. adapter_retirement_raw.sql is the same report
-- from events.
WITH
per_client AS
(
    SELECT adapter_id, tool, client_name, client_version,
           sum(t.calls) AS calls,
           sum(t.normalized) AS normalized,
           sum(t.calls_unknown_age) AS unknown_age,
           sumIf(t.calls, t.privilege = '') AS unknown_privilege,
           uniqHLL12MergeState(t.sessions) AS sessions,
           groupUniqArray(t.service) AS services,
           max(t.privilege) AS max_privilege,
           max(t.max_session_age_s) AS max_session_age_s,
           min(t.first_seen) AS first_seen,
           max(t.last_seen) AS last_seen
    FROM
    (
    {{- template "adapted" .}}
    ) AS t
    GROUP BY adapter_id, tool, client_name, client_version
),
{{template "adapter_used" .}},
{{template "adapter_violations" .}},
{{template "adapter_before" .}},
traffic AS
(
    SELECT tool, sum(t.calls) AS tool_calls
    FROM
    (
    {{- template "traffic" .}}
    ) AS t
    GROUP BY tool
),
{{template "adapter_registry" .}},
-- The calls without a client revision, per tool and client
-- ("adapter_unknown_calls" in tiers.tmpl); the answer keeps the adapters'
-- tools.
unknown_per_client AS
(
    SELECT tool, client_name, client_version, sum(t.calls) AS calls
    FROM
    (
    {{- template "adapter_unknown_calls" .}}
    ) AS t
    GROUP BY tool, client_name, client_version
),
{{template "adapter_unknown" .}}
{{template "retirement_answer" .}}
{{template "settings" ""}}
