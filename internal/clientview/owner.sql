-- The process whose claim of a period was stored.
SELECT argMin(owner, at) AS owner FROM {{.Claims}}
WHERE epoch = {epoch:UInt64} AND released_to = toDateTime64(0, 3, 'UTC')
