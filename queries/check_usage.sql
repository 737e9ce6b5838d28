-- Release check usage: for the tools a release check names ({tools}), per
-- tool × client revision, the calls planned with that revision, who made
-- them (each client's calls, oldest session and highest privilege), the
-- stale rejections and the rejected calls whose side effect had started;
-- and per tool the automatic retries across a semantic or authority change
-- (the retry_across_change violations). The calls come from the call
-- rollups, which keep the client ("calls" in tiers.tmpl), whatever the
-- filter; the retries from violation_candidates over the same resolved
-- window. The calls that did not say which revision their client planned
-- with have the row of revision_client '' (unknown): a release check
-- weighs them too, never as safe unless asked (toolchange.Weigh).
WITH
per_client AS
(
    SELECT tool, revision_client, client_name, client_version,
           sum(t.calls) AS calls,
           uniqHLL12MergeState(t.sessions) AS sessions,
           uniqHLL12MergeState(t.runs) AS runs,
           max(t.privilege) AS max_privilege,
           max(t.max_session_age_s) AS max_session_age_s,
           sumIf(t.calls, t.outcome = 'rejected_stale') AS stale_rejections,
           sumIf(t.side_effects, t.outcome IN ('rejected_stale', 'rejected_incompatible', 'rejected_invalid')) AS rejected_side_effects,
           min(t.first_seen) AS first_seen,
           max(t.last_seen) AS last_seen
    FROM
    (
    {{- template "calls" .}}
    ) AS t
    WHERE has({tools:Array(String)}, tool)
    GROUP BY tool, revision_client, client_name, client_version
),
retries AS
(
    SELECT tool, count() AS retries_across_change
    FROM {{.Database}}.violation_candidates
    WHERE tenant = {tenant:String}
      AND kind = 'retry_across_change'
      AND has({tools:Array(String)}, tool)
      {{- template "raw_filter" .}}
    GROUP BY tool
)
SELECT
    p.tool AS tool,
    p.revision_client AS revision_client,
    sum(p.calls) AS calls,
    uniqHLL12Merge(p.sessions) AS sessions,
    uniqHLL12Merge(p.runs) AS runs,
    countIf(p.client_name != '' OR p.client_version != '') AS clients,
    if(sum(p.calls) > 0, toString(max(p.max_privilege)), '') AS max_privilege,
    max(p.max_session_age_s) AS max_session_age_s,
    sum(p.stale_rejections) AS stale_rejections,
    sum(p.rejected_side_effects) AS rejected_side_effects,
    min(p.first_seen) AS first_seen,
    max(p.last_seen) AS last_seen,
    any(r.retries_across_change) AS retries_across_change,
    groupArray(CAST((p.client_name, p.client_version, p.calls, p.max_session_age_s, toString(p.max_privilege)),
                    'Tuple(name String, version String, calls UInt64, max_session_age_s Int64, max_privilege String)')) AS callers_raw
FROM per_client AS p
LEFT JOIN retries AS r ON r.tool = p.tool
GROUP BY p.tool, p.revision_client
ORDER BY tool, revision_client
{{template "settings" ""}}
