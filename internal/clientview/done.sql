-- A finished release: the held_at it released up to, which the next
-- release starts from.
INSERT INTO {{.Claims}} (epoch, owner, released_to)
VALUES ({epoch:UInt64}, {owner:String}, {to:DateTime64(9, 'UTC')})
