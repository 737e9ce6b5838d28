-- Release: the client views held in (from, to] whose call has no server
-- span in events — none with the same tenant, trace id, request id and
-- tool within an hour of the views' times — and that no earlier release
-- stored (a release cut short is run again), once each, into events_in as
-- 'alone', where every view that feeds a report counts them. GLOBAL IN:
-- on a cluster each shard compares with every shard's events.
INSERT INTO {{.EventsIn}} {{.Columns}}
SELECT {{.Select}}
FROM {{.ClientViews}} AS c
WHERE c.held_at > {from:DateTime64(9, 'UTC')} AND c.held_at <= {to:DateTime64(9, 'UTC')}
  AND (c.tenant, c.trace_id, c.request_id, c.tool) GLOBAL NOT IN (
      SELECT tenant, trace_id, request_id, tool FROM {{.Events}}
      WHERE event_name = 'mcp.drift.call' AND client_view = ''
        AND time >= {first:DateTime64(9, 'UTC')} - INTERVAL 1 HOUR
        AND time <= {last:DateTime64(9, 'UTC')} + INTERVAL 1 HOUR)
  AND (c.tenant, c.event_id) GLOBAL NOT IN (
      SELECT tenant, event_id FROM {{.Events}}
      WHERE event_name = 'mcp.drift.call' AND client_view = 'alone'
        AND time >= {first:DateTime64(9, 'UTC')} AND time <= {last:DateTime64(9, 'UTC')})
LIMIT 1 BY c.tenant, c.event_id
