-- Whether the table {table} has the columns of {has} (patterns of their
-- declarations in create_table_query) without the TTL they should hold
-- ({clause}, a pattern of the declarations as the engine renders them:
-- "`args_raw` String CODEC(ZSTD(3)) TTL toDateTime(time) + toIntervalDay(30)"),
-- on some node (read from system.tables, on every replica of a cluster). A
-- column's TTL is not in engine_full. A store migrated only part of the
-- way, without the columns, has nothing to do.
SELECT DISTINCT name
FROM {{.Tables}}
WHERE database = {database:String}
  AND name = {table:String}
  AND match(create_table_query, {has:String})
  AND NOT match(create_table_query, {clause:String})
