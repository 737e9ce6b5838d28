-- Revision sources computed from the raw events: the reference for
-- revision_sources.sql. Same columns, same definitions.
SELECT
    tool,
    if(client_version = '', client_name, concat(client_name, '@', client_version)) AS client,
    count() AS calls,
    countIf(revision_client != '' AND revision_client_source NOT IN ('listed', 'inferred')) AS declared,
    countIf(revision_client != '' AND revision_client_source = 'listed') AS listed,
    countIf(revision_client != '' AND revision_client_source = 'inferred') AS inferred,
    countIf(revision_client = '') AS unknown,
    if(count() > 0, countIf(revision_client = '') / count(), NULL) AS unknown_share
FROM {{.Database}}.events
WHERE tenant = {tenant:String}
  AND event_name = 'mcp.drift.call'
  {{- template "raw_filter" .}}
GROUP BY tool, client_name, client_version
ORDER BY tool, client
{{template "settings" ""}}
