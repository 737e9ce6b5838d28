package plugin

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/mcpdrift/mcpdrift/apiv1"
)

// revisionRow is one revision of a tool's history, beside the service and
// environment that advertised it: a row of the revisions table.
type revisionRow struct {
	h apiv1.RevisionHistory
	r apiv1.Revision
}

// change reads one field of the change from the previous revision; null
// for the first revision, and where the registry could not classify it.
func change(get func(c *apiv1.RevisionChange) string) func(revisionRow) *string {
	return func(x revisionRow) *string {
		if x.r.Change == nil {
			return nil
		}
		v := get(x.r.Change)
		return &v
	}
}

// revisionCols are the columns of the revisions table, named as the API's
// JSON names the fields.
var revisionCols = []column[revisionRow]{
	text("service", "Service", func(x revisionRow) string { return x.h.Service }),
	text("environment", "Environment", func(x revisionRow) string { return x.h.Environment }),
	text("revision", "Revision", func(x revisionRow) string { return x.r.Revision }),
	when("first_advertised", "First advertised", func(x revisionRow) time.Time { return x.r.FirstAdvertised }),
	when("last_advertised", "Last advertised", func(x revisionRow) time.Time { return x.r.LastAdvertised }),
	col("instances", "Instances", unitCount, func(x revisionRow) int64 { return int64(x.r.Instances) }),
	text("previous", "Previous revision", func(x revisionRow) string { return x.r.Previous }),
	col("overlap_s", "Overlap with the previous", unitSeconds, func(x revisionRow) *int64 { return x.r.OverlapS }),
	col("change_class", "Change class", "", change(func(c *apiv1.RevisionChange) string { return c.Class })),
	col("change", "Change", "", change(func(c *apiv1.RevisionChange) string { return c.Summary })),
	col("verdict", "Verdict", "", change(func(c *apiv1.RevisionChange) string { return string(c.Verdict) })),
	col("reason", "Reason", "", change(func(c *apiv1.RevisionChange) string { return c.Reason })),
	col("findings", "Findings", "", change(func(c *apiv1.RevisionChange) string {
		details := make([]string, len(c.Findings))
		for i, f := range c.Findings {
			details[i] = f.Detail
		}
		return strings.Join(details, "; ")
	})),
}

// revisionsQuery answers a revisions query: the history of the query's
// tool as the registry of advertised definitions holds it
// (GET /api/v1/tools/{tool}/revisions), one row per revision and per
// service and environment that advertised it, oldest first within each.
// The registry keeps every revision: the time range does not apply; the
// service and environment filters do.
func (rn *runner) revisionsQuery(ctx context.Context, q Query) (*data.Frame, error) {
	path := "/api/v1/tools/" + url.PathEscape(q.Tool) + "/revisions"
	v := url.Values{}
	if q.Service != "" {
		v.Set(apiv1.ParamService, q.Service)
	}
	if q.Environment != "" {
		v.Set(apiv1.ParamEnvironment, q.Environment)
	}
	var b apiv1.RevisionsBody
	if err := rn.c.get(ctx, path, v, &b); err != nil {
		return nil, err
	}
	rows := []revisionRow{}
	for _, h := range b.Histories {
		for _, r := range h.Revisions {
			rows = append(rows, revisionRow{h, r})
		}
	}
	f := tableFrame(QueryTypeRevisions, revisionCols, rows)
	f.Meta.ExecutedQueryString = "GET " + path
	if len(v) > 0 {
		f.Meta.ExecutedQueryString += "?" + v.Encode()
	}
	return f, nil
}
