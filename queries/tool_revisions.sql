-- The registry of advertised definitions: per service, environment and
-- revision of the tools {tools} (every tool when empty), the latest
-- definition, first and last advertised, the instances that advertised
-- it, how many advertisements were merged, and the longest ttlMs of the
-- lists the revision was advertised in with the cacheScope sent with it
-- (0 and '' when none carried one), from tool_revisions. Rows
-- the engine has not merged yet are merged here; the registry has no
-- window: a revision's history is kept whole.
SELECT tool, service, environment, revision,
       argMaxMerge(definition) AS definition,
       min(first_advertised) AS first_advertised,
       max(last_advertised) AS last_advertised,
       arraySort(groupUniqArrayArray(instances)) AS instances,
       sum(advertisements) AS advertisements,
       max(list_ttl_ms) AS list_ttl_ms,
       argMaxMerge(list_cache_scope) AS list_cache_scope
FROM {{.Database}}.tool_revisions
WHERE tenant = {tenant:String}
  AND (empty({tools:Array(String)}) OR has({tools:Array(String)}, tool))
{{- if .F.Service}}
  AND service = {service:String}
{{- end}}
{{- if .F.Environment}}
  AND environment = {environment:String}
{{- end}}
GROUP BY tool, service, environment, revision
ORDER BY tool, service, environment, first_advertised, revision
{{template "settings" ""}}
