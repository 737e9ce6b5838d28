-- Each materialised view's work in the server since it started: the CPU
-- its runs took (user + system, the threads of the view's own pipeline)
-- and the rows it wrote. A view that feeds another is counted without
-- the other's work.
SELECT view_name AS view,
       count() AS runs,
       sum(ProfileEvents['UserTimeMicroseconds'] + ProfileEvents['SystemTimeMicroseconds']) AS cpu_us,
       sum(written_rows) AS rows
FROM system.query_views_log
WHERE status = 'QueryFinish'
GROUP BY view_name
ORDER BY cpu_us DESC, view_name
