-- The server's work during the ingest role's run, from its logs and
-- counters since it started: the INSERTs into events_in (how many, the
-- CPU they took, their materialised views included, and the most memory
-- one of them held) and the background merges it launched (how many, the
-- rows they read).
WITH inserts AS (
    SELECT ProfileEvents['UserTimeMicroseconds'] + ProfileEvents['SystemTimeMicroseconds'] AS cpu_us,
           memory_usage
    FROM system.query_log
    WHERE type = 'QueryFinish' AND query_kind = 'Insert'
      AND startsWith(query, 'INSERT INTO mcpdrift.events_in ')
)
SELECT (SELECT count() FROM inserts) AS inserts,
       (SELECT sum(cpu_us) FROM inserts) AS insert_cpu_us,
       (SELECT max(memory_usage) FROM inserts) AS insert_peak_bytes,
       (SELECT sum(value) FROM system.events WHERE event = 'Merge') AS merges,
       (SELECT sum(value) FROM system.events WHERE event = 'MergedRows') AS merged_rows
