-- The INSERTs into events_in that run now, on this server or on every
-- replica of a cluster ({{.Processes}}): a migrator waits for them to end.
SELECT count() AS n FROM {{.Processes}} WHERE startsWith(query, {insert:String})
