-- The declared end of every adapter's compatibility window, as its latest
-- declaration says (the adapters table keeps the latest by declared_at,
-- once merged): what the ingester counts calls after
-- (mcpdrift_adapter_calls_after_window_total). An adapter declared without
-- a window end has none.
SELECT tenant, adapter_id,
       toInt64(toUnixTimestamp(argMax(window_end, declared_at))) AS window_end_s,
       toInt64(toUnixTimestamp64Nano(max(declared_at))) AS declared_at_ns
FROM {{.Database}}.adapters
GROUP BY tenant, adapter_id
HAVING window_end_s > 0
