-- How many tables the database holds but the migrations' own ({own}), on
-- every replica of a cluster: none on a store that takes a baseline.
SELECT count() AS n
FROM {{.Tables}}
WHERE database = {database:String}
  AND NOT has({own:Array(String)}, name)
