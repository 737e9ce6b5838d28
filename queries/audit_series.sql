-- The audited calls per bucket of {step} seconds (series.go), under the
-- audit's filters (run, session, request id and the common filter),
-- counted by the dimensions asked for: every call, the stale ones (a
-- client revision and a server revision that differ, as the audit shows
-- them, and are not one contract under two names: the pairs of
-- {same_contract}), those whose side effect had started, and their
-- external requests.
-- Read from the audited calls (tiers.tmpl), as audit.sql.
SELECT
    {{template "series_time"}},
    {{dim .F.G.Tool "t.tool" "tool"}},
    {{dim .F.G.Client "if(t.client_version = '', t.client_name, concat(t.client_name, '@', t.client_version))" "client"}},
    {{dim .F.G.Outcome "t.outcome" "outcome"}},
    {{dim .F.G.RevisionClient "t.revision_client" "revision_client"}},
    {{dim .F.G.RevisionServer "t.revision_server" "revision_server"}},
    {{dim .F.G.Adapter "t.adapter_id" "adapter"}},
    {{dim .F.G.Privilege "t.privilege" "privilege"}},
    {{dim .F.G.Approval "t.approval" "approval"}},
    {{dim .F.G.Service "t.service" "service"}},
    {{dim .F.G.Environment "t.environment" "environment"}},
    count() AS calls,
    countIf(t.revision_client != '' AND t.revision_server != '' AND t.revision_client != t.revision_server
        {{- if .F.SameContract}}
        AND NOT has({same_contract:Array(Tuple(String, String, String))}, (t.tool, t.revision_client, t.revision_server))
        {{- end}}) AS stale_calls,
    countIf(t.side_effect_started) AS side_effect_started,
    toUInt64(sum(greatest(t.external_requests, 0))) AS external_requests
FROM
(
    SELECT time AS bucket, tool, client_name, client_version, toString(outcome) AS outcome,
           revision_client, revision_server, adapter_id, toString(privilege) AS privilege,
           toString(approval) AS approval, service, environment, side_effect_started, external_requests
    FROM {{template "audited_calls" .}}
) AS t
GROUP BY time, tool, client, outcome, revision_client, revision_server, adapter, privilege, approval, service, environment
ORDER BY tool, client, outcome, revision_client, revision_server, adapter, privilege, approval, service, environment, {{template "series_fill"}}
{{template "settings" ""}}
