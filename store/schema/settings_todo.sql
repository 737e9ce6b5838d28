-- The tables whose definition lacks the clause it should hold, on some node
-- (read from system.tables, on every replica of a cluster): {tables} and
-- {clauses} are parallel arrays, a table's name and a pattern of the text
-- its engine_full must contain, as the engine renders it (a TTL as
-- "TTL toDateTime(time) + toIntervalDay(30)", a setting as
-- "name = value"), so that a start-up alters only what differs.
SELECT DISTINCT name
FROM {{.Tables}}
WHERE database = {database:String}
  AND has({tables:Array(String)}, name)
  AND NOT match(engine_full, arrayElement({clauses:Array(String)}, indexOf({tables:Array(String)}, name)))
ORDER BY name
