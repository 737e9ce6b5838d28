-- The lock's last row: its epoch, the migrator that wrote it last, and how
-- long ago by the store's clock (a heartbeat rewrites the row).
SELECT seq, argMax(owner, at) AS owner,
       toInt64(dateDiff('millisecond', max(at), now64(3))) AS age_ms
FROM {{.Table}}
WHERE seq = (SELECT max(seq) FROM {{.Table}})
GROUP BY seq
