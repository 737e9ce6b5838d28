-- The schema epoch: odd while a migrator holds the lock (lock.go,
-- "Migrating while ingest runs"). Read by every writer before an insert.
SELECT max(seq) AS seq FROM {{.Table}}
