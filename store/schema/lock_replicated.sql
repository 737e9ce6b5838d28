-- 1 when every replica of the cluster holds the row of an epoch in the lock.
SELECT toUInt8(ifNull(
         (SELECT count() FROM clusterAllReplicas({{.Cluster}}, {{.Database}}, schema_lock) WHERE seq = {seq:UInt64})
         >= (SELECT count() FROM clusterAllReplicas({{.Cluster}}, system.one)),
         0)) AS ok
