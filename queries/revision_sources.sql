-- Revision sources: per tool and client (name@version, the name alone
-- without a version), the calls by where their client revision came from
-- (dev.mcpdrift.revision.client.source): declared by the client in _meta or
-- not stated (read as declared, the only source before the attribute
-- existed), listed (what the server last listed to the session), inferred
-- from the arguments, or unknown (no client revision, whatever source the
-- call states). declared + listed + inferred + unknown = calls.
-- unknown_share is unknown / calls, null without calls. Served from the
-- call rollups, which keep the client ("sources" in tiers.tmpl);
-- revision_sources_raw.sql is the same report from events.
SELECT
    tool,
    if(client_version = '', client_name, concat(client_name, '@', client_version)) AS client,
    sum(t.calls) AS calls,
    sum(t.calls) - sum(t.unknown) - sum(t.listed) - sum(t.inferred) AS declared,
    sum(t.listed) AS listed,
    sum(t.inferred) AS inferred,
    sum(t.unknown) AS unknown,
    if(sum(t.calls) > 0, sum(t.unknown) / sum(t.calls), NULL) AS unknown_share
FROM
(
{{- template "sources" .}}
) AS t
GROUP BY tool, client_name, client_version
ORDER BY tool, client
{{template "settings" ""}}
