-- Stale-revision usage: per tool × client revision × server revision, the
-- calls and what became of them, who made them, when, and the calls of the
-- equal period before the window, which the trend compares them with
-- (StaleUsageRow.Trend). Served from
-- usage_* when the filter names no client, from the call rollups otherwise
-- ("traffic" in tiers.tmpl); stale_usage_raw.sql is the same report from
-- events.
--
-- rejected counts the three rejected_* outcomes; removed and failed are
-- counted apart. clients counts distinct name@version pairs (exact: a
-- uniqExact state in usage_*, the client columns in calls_*); sessions and
-- runs merge uniqHLL12 sketches (exact up to 16, then within about 1.6%;
-- see migration 8).
--
-- The totals are read from the plan's Spans, the coarsest buckets that fit
-- the window; the previous period's calls, a plain sum, from its Previous.
WITH
totals AS
(
    SELECT
        tool,
        revision_client,
        revision_server,
        sum(t.calls) AS calls,
        sum(t.calls_current) AS current,
        sum(t.calls_normalized) AS normalized,
        sum(t.calls_rejected) AS rejected,
        sum(t.calls_removed) AS removed,
        sum(t.calls_failed) AS failed,
        uniqHLL12Merge(t.sessions) AS sessions,
        uniqHLL12Merge(t.runs) AS runs,
        {{if .Coarse}}uniqExactMerge(t.clients){{else}}uniqExactIf((t.client_name, t.client_version), t.client_name != '' OR t.client_version != ''){{end}} AS clients,
        min(t.first_seen) AS first_seen,
        max(t.last_seen) AS last_seen
    FROM
    (
    {{- template "traffic" .}}
    ) AS t
    GROUP BY tool, revision_client, revision_server
),
previous AS
(
    SELECT tool, revision_client, revision_server, sum(h.calls) AS calls_previous
    FROM
    (
    {{- template "previous" .}}
    ) AS h
    GROUP BY tool, revision_client, revision_server
)
SELECT
    tool,
    revision_client,
    revision_server,
    if(revision_client = '', NULL, toBool(revision_client != revision_server)) AS stale,
    calls, current, normalized, rejected, removed, failed, sessions, runs, clients, first_seen, last_seen,
    calls_previous,
    {previous_from:DateTime64(9, 'UTC')} AS previous_from,
    {{template "history" .}} AS history_from
FROM totals
LEFT JOIN previous USING (tool, revision_client, revision_server)
ORDER BY tool, revision_client, revision_server
{{template "settings" ""}}
