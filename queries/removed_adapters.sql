-- The adapters whose latest declaration in the registry has change class
-- removal: the calls through them that succeeded are violations
-- (violations.sql). The latest declaration counts whenever it was made, as
-- in violations_raw.sql.
SELECT adapter_id
FROM {{.Database}}.adapters
WHERE tenant = {tenant:String}
GROUP BY adapter_id
HAVING argMax(change_class, declared_at) = 'removal'
ORDER BY adapter_id
{{template "settings" ""}}
