package plugin

import (
	"context"
	"slices"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// variableQuery lists the values of a template variable seen over
// [from, to), sorted, as a frame of text and value.
//
// The API has no endpoint for distinct values yet: tools come from
// /api/v1/tools, adapters from the adapter retirement report (which lists
// declared adapters too), and services, environments and clients from the
// call audit (paginated, up to Settings.MaxRows calls), with the clients of
// the rejections report and the adapter callers added.
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
		var b toolsBody
		v := all.filterParams(from, to)
		executed = "/api/v1/tools?" + v.Encode()
		if err := rn.c.get(ctx, "/api/v1/tools", v, &b); err != nil {
			return nil, err
		}
		for _, t := range b.Rows {
			add(t.Tool)
		}
	case VariableAdapters:
		rep := reports[QueryTypeAdapterRetirement].(*reportOf[adapterRow])
		rows, ex, _, err := rep.fetch(ctx, rn, all, from, to, false)
		if err != nil {
			return nil, err
		}
		executed = ex
		for _, r := range rows {
			add(r.AdapterID)
		}
	case VariableServices, VariableEnvironments, VariableClients:
		rep := reports[QueryTypeAudit].(*reportOf[auditRow])
		rows, ex, _, err := rep.fetch(ctx, rn, all, from, to, false)
		switch {
		case isAuthProblem(err):
			// A token without the audit scope: fall back on the reports
			// that carry these values for some calls.
			executed = ex + " (refused: " + err.Error() + ")"
			notice = "The token may not read the call audit; values come from the rejections, adapter and violations reports only."
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
			case VariableClients:
				add(r.client())
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
	f := data.NewFrame(q.Variable, data.NewField("text", nil, vals), data.NewField("value", nil, slices.Clone(vals)))
	f.Meta = &data.FrameMeta{ExecutedQueryString: "GET " + executed}
	if notice != "" {
		f.AppendNotices(data.Notice{Severity: data.NoticeSeverityInfo, Text: notice})
	}
	return f, nil
}

// addReportValues adds the values of variable that the reports other than
// the audit carry: clients from the rejections and the adapter callers,
// services from the adapters and the violations.
func (rn *runner) addReportValues(ctx context.Context, variable string, from, to time.Time, add func(string)) error {
	all := Query{}
	switch variable {
	case VariableClients:
		rej := reports[QueryTypeRejections].(*reportOf[rejectionRow])
		rows, _, _, err := rej.fetch(ctx, rn, all, from, to, false)
		if err != nil {
			return err
		}
		for _, r := range rows {
			add(r.client())
		}
		fallthrough
	case VariableServices:
		ad := reports[QueryTypeAdapterRetirement].(*reportOf[adapterRow])
		rows, _, _, err := ad.fetch(ctx, rn, all, from, to, false)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if variable == VariableClients {
				for _, c := range r.Callers {
					add(c.Client)
				}
				continue
			}
			for _, s := range r.ServiceNames {
				add(s)
			}
		}
		if variable == VariableServices {
			vio := reports[QueryTypeViolations].(*reportOf[violationRow])
			vrows, _, _, err := vio.fetch(ctx, rn, all, from, to, false)
			if err != nil {
				return err
			}
			for _, r := range vrows {
				add(r.Service)
			}
		}
	}
	return nil
}
