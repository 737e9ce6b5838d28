package drifttest

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/gate"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// retirementPath is the API endpoint of the adapter retirement report.
const retirementPath = "/api/v1/reports/adapter-retirement"

// VerdictAdapterPresent: in a reverse run, the adapter that should be gone
// still normalised the call: the server under test is not the build
// without it.
const VerdictAdapterPresent Verdict = "adapter_still_present"

// Reverse is a reverse run's adapter and who its retirement would hit,
// weighed by usage as `mcpdrift gate` weighs it.
type Reverse struct {
	// Adapter is the adapter's row of the adapter retirement report: its
	// tool and revisions, its calls, share, clients and verdict.
	Adapter apiv1.AdapterRow `json:"adapter"`
	// gate is the gate's decision as Markdown.
	gate string
}

// retirement reads the adapter retirement report over window ("" for the
// report's default) and decides on adapter as the gate does. The drift
// test's own calls (client ClientName) are left out: they are who would
// be hit only in a test.
func (a Audit) retirement(ctx context.Context, adapter, window string) (*Reverse, error) {
	q := url.Values{"exclude_client": {ClientName}}
	if window != "" {
		q.Set("window", window)
	}
	var report apiv1.ReportBody[apiv1.AdapterRow]
	if err := a.Client.GetJSON(ctx, retirementPath, q, &report); err != nil {
		return nil, fmt.Errorf("cannot read the adapter retirement report: %w", err)
	}
	d, err := gate.Decide(report, adapter, []string{ClientName})
	if err != nil {
		return nil, err
	}
	var md bytes.Buffer
	if err := d.Markdown(&md); err != nil {
		return nil, err
	}
	return &Reverse{Adapter: d.Adapter, gate: md.String()}, nil
}

// reverseScope keeps, of the check, only the adapter's tool, after making
// sure the old list holds the revision the adapter serves and the server
// lists another.
func reverseScope(check toolchange.Report, old toolchange.List, rv *Reverse) (toolchange.Report, error) {
	a := rv.Adapter
	o, ok := old.Tool(a.Tool)
	if !ok {
		return check, fmt.Errorf("adapter %s serves tool %s, which the old list does not define", a.AdapterID, a.Tool)
	}
	if a.RevisionFrom != "" && o.Revision != a.RevisionFrom {
		return check, fmt.Errorf("adapter %s serves calls of %s revision %s, but the old list defines revision %s: give the list it serves",
			a.AdapterID, a.Tool, mcpgo.Short(a.RevisionFrom), mcpgo.Short(o.Revision))
	}
	scoped := check
	scoped.Tools = nil
	for _, c := range check.Tools {
		if c.Tool != a.Tool {
			continue
		}
		if c.Status == toolchange.StatusUnchanged {
			return check, fmt.Errorf("the server lists %s at revision %s, the one adapter %s serves calls of: nothing to test",
				a.Tool, mcpgo.Short(o.Revision), a.AdapterID)
		}
		scoped.Tools = append(scoped.Tools, c)
	}
	return scoped, nil
}

// judgeReverse fails the calls the adapter still normalised.
func judgeReverse(results []Result, adapter string) {
	for i := range results {
		r := &results[i]
		if r.Answer == nil {
			continue
		}
		id, _ := r.Answer.Meta[mcpgo.MetaAdapterID].(string)
		if r.Confirmed != nil && r.Confirmed.AdapterID != "" {
			id = r.Confirmed.AdapterID
		}
		if id == adapter {
			r.Verdict, r.Reason = VerdictAdapterPresent, fmt.Sprintf("the server under test still normalises with `%s`: run -reverse against the build without it", adapter)
		}
	}
}

// markdown writes who the retirement would hit: the gate's decision, its
// headings one level down.
func (rv *Reverse) markdown(b *strings.Builder) {
	b.WriteString("#### Who would be hit, weighed by usage as `mcpdrift gate` weighs it\n\n")
	for _, line := range strings.SplitAfter(rv.gate, "\n") {
		if strings.HasPrefix(line, "#") {
			line = "#" + line
		}
		b.WriteString(line)
	}
	b.WriteString("\n")
}
