-- The client views held in (from, to]: how many, the span of their event
-- times (what the release compares with the events), and the newest
-- held_at among them.
SELECT count() AS held,
       min(time) AS first_time,
       max(time) AS last_time
FROM {{.ClientViews}}
WHERE held_at > {from:DateTime64(9, 'UTC')} AND held_at <= {to:DateTime64(9, 'UTC')}
