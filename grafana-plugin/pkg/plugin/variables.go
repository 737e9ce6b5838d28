package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/mcpdrift/mcpdrift/apiv1"
)

// variableQuery lists the values of a template variable seen over
// [from, to), sorted, as a frame of text and value.
//
// The API has no endpoint for distinct values yet: tools come from
// /api/v1/tools, adapters from the adapter retirement report (which lists
// declared adapters too), clients from the stale-usage series grouped by
// client in one bucket (the call rollups: every client that called), and
// services and environments from the call audit (paginated, up to
// Settings.MaxRows calls), with the services of the adapter and violations
// reports added.
func (rn *runner) variableQuery(ctx context.Context, q Query, from, to time.Time) (*data.Frame, error) {
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" {
			seen[s] = true
		}
	}
	// The variable lists everything, whatever the other variables say.
	all := Query{}
	var executed, notice string
	switch q.Variable {
	case VariableTools:
		var b apiv1.ReportBody[apiv1.ToolRow]
		v := all.filterParams(from, to)
		executed = "/api/v1/tools?" + v.Encode()
		if err := rn.c.get(ctx, "/api/v1/tools", v, &b); err != nil {
			return nil, err
		}
		for _, t := range b.Rows {
			add(t.Tool)
		}
	case VariableAdapters:
		rep := reports[QueryTypeAdapterRetirement].(*reportOf[apiv1.AdapterRow])
		rows, ex, _, err := rep.fetch(ctx, rn, all, from, to, false)
		if err != nil {
			return nil, err
		}
		executed = ex
		for _, r := range rows {
			add(r.AdapterID)
		}
	case VariableClients:
		v := all.filterParams(from, to)
		v.Set(apiv1.ParamGroupBy, "client")
		v.Set(apiv1.ParamStep, strconv.FormatInt(int64(ceilMinute(to.Sub(from))/time.Second), 10))
		path := reports[QueryTypeStaleUsage].seriesPath()
		executed = path + "?" + v.Encode()
		var b seriesBody
		if err := rn.c.get(ctx, path, v, &b); err != nil {
			return nil, err
		}
		for _, row := range b.Rows {
			var p struct {
				Client string `json:"client"`
				Calls  uint64 `json:"calls"`
			}
			raw, err := json.Marshal(row)
			if err == nil {
				err = json.Unmarshal(raw, &p)
			}
			if err != nil {
				return nil, fmt.Errorf("cannot read a point of the clients series: %w", err)
			}
			if p.Calls > 0 {
				add(p.Client)
			}
		}
	case VariableServices, VariableEnvironments:
		rep := reports[QueryTypeAudit].(*reportOf[apiv1.AuditRow])
		rows, ex, _, err := rep.fetch(ctx, rn, all, from, to, false)
		switch {
		case isAuthProblem(err):
			// A token without the audit scope: fall back on the reports
			// that carry these values for some calls.
			executed = ex + " (refused: " + err.Error() + ")"
			notice = "The token may not read the call audit; values come from the adapter and violations reports only."
		case err != nil:
			return nil, err
		default:
			executed = ex
		}
		for _, r := range rows {
			switch q.Variable {
			case VariableServices:
				add(r.Service)
			case VariableEnvironments:
				add(r.Environment)
			}
		}
		if err := rn.addReportValues(ctx, q.Variable, from, to, add); err != nil {
			return nil, err
		}
	}
	vals := make([]string, 0, len(seen))
	for s := range seen {
		vals = append(vals, s)
	}
	slices.Sort(vals)
	texts := slices.Clone(vals)
	if q.None {
		texts, vals = append([]string{"None"}, texts...), append([]string{allValue}, vals...)
	}
	f := data.NewFrame(q.Variable, data.NewField("text", nil, texts), data.NewField("value", nil, vals))
	f.Meta = &data.FrameMeta{ExecutedQueryString: "GET " + executed}
	if notice != "" {
		f.AppendNotices(data.Notice{Severity: data.NoticeSeverityInfo, Text: notice})
	}
	return f, nil
}

// addReportValues adds the services that the reports other than the audit
// carry: those of the adapters and of the violations.
func (rn *runner) addReportValues(ctx context.Context, variable string, from, to time.Time, add func(string)) error {
	if variable != VariableServices {
		return nil
	}
	all := Query{}
	ad := reports[QueryTypeAdapterRetirement].(*reportOf[apiv1.AdapterRow])
	rows, _, _, err := ad.fetch(ctx, rn, all, from, to, false)
	if err != nil {
		return err
	}
	for _, r := range rows {
		for _, s := range r.ServiceNames {
			add(s)
		}
	}
	vio := reports[QueryTypeViolations].(*reportOf[apiv1.ViolationRow])
	vrows, _, _, err := vio.fetch(ctx, rn, all, from, to, false)
	if err != nil {
		return err
	}
	for _, r := range vrows {
		add(r.Service)
	}
	return nil
}
