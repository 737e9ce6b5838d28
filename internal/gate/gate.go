// Package gate is the release gate on adapter retirement: from the adapter
// retirement report it decides whether one compatibility adapter can be
// removed now, and writes the decision as Markdown fit for a pull-request
// comment — the verdict and its reason, the adapter's remaining use, the
// clients that block it and what removing it would have cost.
package gate

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/humanize"
	"github.com/mcpdrift/mcpdrift/internal/render"
	"github.com/mcpdrift/mcpdrift/internal/retirement"
)

// ErrUnknownAdapter is returned when the report has no adapter by the
// given id: no server declared it and no call in the window used it.
var ErrUnknownAdapter = errors.New("unknown adapter")

// Decision is the gate's answer for one adapter.
type Decision struct {
	// Adapter is the adapter's row of the report.
	Adapter apiv1.AdapterRow
	// Report is the report the decision was taken from.
	Report apiv1.ReportBody[apiv1.AdapterRow]
	// ExcludedClients are the clients the report left out, as asked.
	ExcludedClients []string
}

// Pass reports whether the adapter can be retired: its verdict is ready.
func (d Decision) Pass() bool { return d.Adapter.Verdict == retirement.VerdictReady }

// Decide finds adapter in report, the adapter retirement report over every
// adapter, with excluded the clients it was asked to leave out.
func Decide(report apiv1.ReportBody[apiv1.AdapterRow], adapter string, excluded []string) (Decision, error) {
	i := slices.IndexFunc(report.Rows, func(r apiv1.AdapterRow) bool { return r.AdapterID == adapter })
	if i < 0 {
		known := make([]string, len(report.Rows))
		for j, r := range report.Rows {
			known[j] = r.AdapterID
		}
		list := "none"
		if len(known) > 0 {
			list = strings.Join(known, ", ")
		}
		return Decision{}, fmt.Errorf("%w %q: no server declared it and no call used it from %s to %s; known adapters: %s",
			ErrUnknownAdapter, adapter, render.HumanTime(report.From), render.HumanTime(report.To), list)
	}
	if report.Thresholds == nil {
		return Decision{}, errors.New("the report carries no thresholds: is it the adapter retirement report?")
	}
	return Decision{Adapter: report.Rows[i], Report: report, ExcludedClients: excluded}, nil
}

// Markdown writes the decision as a pull-request comment.
func (d Decision) Markdown(w io.Writer) error {
	a := d.Adapter
	var b strings.Builder
	switch a.Verdict {
	case retirement.VerdictReady:
		fmt.Fprintf(&b, "### ✅ Adapter %s can be retired\n\n", render.Code(a.AdapterID))
	case retirement.VerdictAtRisk:
		fmt.Fprintf(&b, "### ⚠️ Adapter %s cannot be retired yet: at risk\n\n", render.Code(a.AdapterID))
	default:
		fmt.Fprintf(&b, "### ❌ Adapter %s cannot be retired yet: %s\n\n", render.Code(a.AdapterID), render.EscapeMarkdown(a.Verdict))
	}
	fmt.Fprintf(&b, "**Verdict: `%s`**: %s.\n\n", a.Verdict, render.EscapeMarkdown(a.Reason))

	tool := render.Code(a.Tool)
	if a.RevisionFrom != "" || a.RevisionTo != "" {
		tool += fmt.Sprintf(", revision %s → %s", render.Code(render.ShortRevision(a.RevisionFrom)), render.Code(render.ShortRevision(a.RevisionTo)))
	}
	if a.ChangeClass != "" {
		tool += " (" + render.EscapeMarkdown(a.ChangeClass) + ")"
	}
	if !a.Registered {
		tool += "; not declared by any server (seen on calls only)"
	}
	rows := [][2]string{
		{"Tool", tool},
		{"Window", render.Window(d.Report.From, d.Report.To)},
		{"Thresholds", render.EscapeMarkdown(apiclient.DescribeThresholds(*d.Report.Thresholds))},
	}
	if len(d.ExcludedClients) > 0 {
		ex := make([]string, len(d.ExcludedClients))
		for i, c := range d.ExcludedClients {
			ex[i] = render.Code(c)
		}
		rows = append(rows, [2]string{"Excluded clients", strings.Join(ex, ", ")})
	}
	rows = append(rows,
		[2]string{"Calls through the adapter", fmt.Sprint(a.Calls)},
		[2]string{"Share of the tool's calls", fmt.Sprintf("%s (%d of %d)", humanize.Percent(a.Share), a.Calls, a.ToolCalls)},
		[2]string{"Calls to the tool without a client revision", fmt.Sprint(a.UnknownRevisionCalls)},
	)
	switch {
	case a.LastSeen == nil:
		rows = append(rows, [2]string{"Last seen", "never (no call through it is stored)"})
	case a.LastSeenInWindow:
		rows = append(rows, [2]string{"Last seen", render.HumanTime(*a.LastSeen) + " (in the window)"})
	default:
		rows = append(rows, [2]string{"Last seen", render.HumanTime(*a.LastSeen) + " (not in the window)"})
	}
	if a.Calls > 0 {
		services := ""
		if len(a.ServiceNames) > 0 {
			names := make([]string, len(a.ServiceNames))
			for i, s := range a.ServiceNames {
				names[i] = render.EscapeMarkdown(s)
			}
			services = " (" + strings.Join(names, ", ") + ")"
		}
		rows = append(rows,
			[2]string{"Sessions, clients, services", fmt.Sprintf("%d, %d, %d%s", a.Sessions, a.Clients, a.Services, services)},
			[2]string{"Highest privilege", orUnknown(render.EscapeMarkdown(a.MaxPrivilege), a.UnknownPrivilegeCalls)},
			[2]string{"Oldest session", orUnknown(age(a.MaxSessionAgeS), a.UnknownAgeCalls)},
		)
	}
	if a.RemovedToolSuccesses > 0 {
		rows = append(rows, [2]string{"Removed-tool successes", fmt.Sprintf("%d (a removed tool's call succeeded through it)", a.RemovedToolSuccesses)})
	}
	switch {
	case a.WindowEnd == nil:
		rows = append(rows, [2]string{"Declared window end", "none declared"})
	case a.WindowEnded:
		rows = append(rows, [2]string{"Declared window end", render.HumanTime(*a.WindowEnd) + " (ended)"})
	default:
		rows = append(rows, [2]string{"Declared window end", render.HumanTime(*a.WindowEnd)})
	}
	b.WriteString("| | |\n| --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", r[0], r[1])
	}

	if len(a.BlockingClients) > 0 {
		b.WriteString("\n#### Blocking clients\n\n| Client | Calls | Calls to the tool without a client revision | Oldest session | Highest privilege |\n| --- | ---: | ---: | ---: | --- |\n")
		for _, c := range a.BlockingClients {
			fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |\n", render.Code(c.Client), c.Calls, c.UnknownRevisionCalls,
				orUnknown(age(c.MaxSessionAgeS), c.UnknownAgeCalls), orUnknown(render.EscapeMarkdown(c.MaxPrivilege), c.UnknownPrivilegeCalls))
		}
		// A blocked adapter's blocking clients are the ones that called
		// through it.
		n := 0
		for _, c := range a.Callers {
			if c.Calls > 0 {
				n++
			}
		}
		if a.Verdict == retirement.VerdictBlocked && n > len(a.BlockingClients) {
			fmt.Fprintf(&b, "\n%d clients call it; the table lists the %d with the most calls.\n", n, len(a.BlockingClients))
		}
	}

	b.WriteString("\n#### What if it were removed\n\n")
	if a.WouldBeRejected == 0 {
		b.WriteString("No call in the window needed the adapter: removing it would have rejected none.\n")
	} else {
		share := ""
		if a.ToolCalls > 0 {
			share = fmt.Sprintf(" (%s of %s's %d calls)", humanize.Percent(float64(a.WouldBeRejected)/float64(a.ToolCalls)), render.Code(a.Tool), a.ToolCalls)
		}
		fmt.Fprintf(&b, "Had the adapter been removed before the window, **%d %s**%s would have been rejected instead of normalised.\n",
			a.WouldBeRejected, humanize.Plural(a.WouldBeRejected, "call", "calls"), share)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// age is a session age in words, "—" when no call gave one.
func age(s *int64) string {
	if s == nil {
		return "—"
	}
	return humanize.Age(*s)
}

// orUnknown adds to a known figure how many calls did not give it; "—"
// when there is neither (a client with no call through the adapter).
func orUnknown(known string, unknown uint64) string {
	n := fmt.Sprintf("%d %s", unknown, humanize.Plural(unknown, "call", "calls"))
	switch {
	case unknown == 0 && known == "":
		return "—"
	case unknown == 0:
		return known
	case known == "" || known == "—":
		return "unknown (" + n + " without it)"
	}
	return known + " (and " + n + " without it)"
}
