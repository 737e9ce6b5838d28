-- The tables that still write the parts of their inserts wide: of the
-- tables named, those whose settings lack min_level_for_wide_part = 1 on
-- some node (read from system.tables, on every replica of a cluster), when
-- the server asked knows the setting (none when it does not).
SELECT DISTINCT name
FROM {{.Tables}}
WHERE database = {database:String}
  AND name IN {tables:Array(String)}
  AND NOT match(engine_full, '\\bmin_level_for_wide_part = 1\\b')
  AND (SELECT count() FROM system.merge_tree_settings WHERE name = 'min_level_for_wide_part') = 1
ORDER BY name
