INSERT INTO {{.Database}}.schema_migrations (version, name, checksum)
SELECT toUInt32(r.1), r.2, r.3
FROM (SELECT arrayJoin(arrayZip({versions:Array(String)}, {names:Array(String)}, {checksums:Array(String)})) AS r)
