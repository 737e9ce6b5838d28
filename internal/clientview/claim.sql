-- A claim of a period: of the claims of one epoch, the store keeps the
-- first (one block per insert_deduplication_token), so one process
-- releases each period.
INSERT INTO {{.Claims}} (epoch, owner, released_to)
SETTINGS insert_deduplicate = 1, insert_deduplication_token = '{{.Token}}'
VALUES ({epoch:UInt64}, {owner:String}, toDateTime64(0, 3, 'UTC'))
