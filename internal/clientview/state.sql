-- The store's clock, the release period it falls in, the held_at up to
-- which client views were released (1970 before the first release), and
-- the first held_at past it (1970 when none waits). The store's clock
-- decides, so that every releaser agrees on the period whatever its own
-- clock says.
SELECT now64(3, 'UTC') AS now,
       intDiv(toUInt64(toUnixTimestamp64Milli(now64(3, 'UTC'))), {interval_ms:UInt64}) AS epoch,
       (SELECT max(released_to) FROM {{.Claims}}) AS released_to,
       (SELECT min(held_at) FROM {{.ClientViews}}
        WHERE held_at > (SELECT max(released_to) FROM {{.Claims}})) AS first_held
