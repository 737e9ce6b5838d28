-- The ids of a tenant's events timed at or after a moment, the latest
-- first: the ingester's deduplication set at start-up.
SELECT event_id
FROM {{.Database}}.events
WHERE tenant = {tenant:String} AND time >= {since:DateTime64(9, 'UTC')}
ORDER BY time DESC
LIMIT {limit:UInt64}
