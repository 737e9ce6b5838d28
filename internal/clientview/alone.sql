-- The client views released with event times in [first, last]: counted
-- before and after a release, to tell how many it released.
SELECT count() AS n FROM {{.Events}}
WHERE event_name = 'mcp.drift.call' AND client_view = 'alone'
  AND time >= {first:DateTime64(9, 'UTC')} AND time <= {last:DateTime64(9, 'UTC')}
