-- The tables that still write the parts of their inserts wide: of the
-- tables named, those whose settings lack min_level_for_wide_part = 1, on a
-- server that knows the setting (none on one that does not).
SELECT name
FROM system.tables
WHERE database = {database:String}
  AND name IN {tables:Array(String)}
  AND NOT match(engine_full, '\\bmin_level_for_wide_part = 1\\b')
  AND (SELECT count() FROM system.merge_tree_settings WHERE name = 'min_level_for_wide_part') = 1
ORDER BY name
