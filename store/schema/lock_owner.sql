-- The migrator whose claim of an epoch was stored.
SELECT any(owner) AS owner FROM {{.Table}} WHERE seq = {seq:UInt64}
