-- Tools seen in the window: the revisions clients planned with, the
-- revisions servers executed, the adapters that normalised calls, and the
-- volume of each. Served from the call rollups.
SELECT
    tool,
    arraySort(groupUniqArrayIf(revision_client, revision_client != '')) AS client_revisions,
    arraySort(groupUniqArrayIf(revision_server, revision_server != '')) AS server_revisions,
    arraySort(groupUniqArrayIf(adapter_id, adapter_id != '')) AS adapters,
    sum(t.calls) AS calls,
    min(t.first_seen) AS first_seen,
    max(t.last_seen) AS last_seen
FROM
(
{{- template "calls" .}}
) AS t
GROUP BY tool
ORDER BY tool
{{template "settings" ""}}
