package registry

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/humanize"
)

// WriteText prints histories as aligned text tables, one per service and
// environment: what `mcpdrift revisions` shows.
func WriteText(w io.Writer, tool string, histories []apiv1.RevisionHistory) error {
	if len(histories) == 0 {
		_, err := fmt.Fprintf(w, "No advertised revision of %s in the registry.\n", tool)
		return err
	}
	for i, h := range histories {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s — service %s, environment %s\n\n", h.Tool, orNone(h.Service), orNone(h.Environment))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "REVISION\tALGORITHM\tFIRST ADVERTISED\tLAST ADVERTISED\tINSTANCES\tLIST TTL\tOVERLAP\tCHANGE")
		for _, r := range h.Revisions {
			overlap, change := "-", "-"
			if r.OverlapS != nil {
				overlap = humanize.Age(*r.OverlapS)
			}
			if r.Change != nil {
				change = orNone(r.Change.Class) + ": " + r.Change.Summary
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", r.Revision, r.AlgorithmLabel, stamp(r.FirstAdvertised), stamp(r.LastAdvertised), r.Instances, listTTL(r), overlap, change)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// WriteText prints the diff for people: the change, then the line diff.
func (d Diff) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s %s → %s (service %s, environment %s)\n\n", d.Tool, d.From, d.To, orNone(d.Service), orNone(d.Environment))
	fmt.Fprintf(w, "Class: %s\nVerdict: %s\nReason: %s\n", orNone(d.Class), d.Verdict, d.Reason)
	if a := d.OldArguments; a != nil {
		fmt.Fprintf(w, "Old arguments stay valid: %s", a.Answer)
		if len(a.Witness) > 0 {
			fmt.Fprintf(w, " (counterexample %s)", a.Witness)
		}
		fmt.Fprintln(w)
	}
	for _, f := range d.Findings {
		fmt.Fprintf(w, "- %s: %s\n", f.Class, f.Detail)
	}
	_, err := fmt.Fprintf(w, "\n%s", strings.TrimSuffix(d.SchemaDiff, "\n")+"\n")
	return err
}

// listTTL says a revision's cache hint: the ttl, rounded down as
// humanize.Age rounds (in ms below a second), then the cacheScope when one was sent, such as
// "48h shared"; "-" without a hint.
func listTTL(r apiv1.Revision) string {
	if r.ListTTLMs == 0 && r.ListCacheScope == "" {
		return "-"
	}
	s := fmt.Sprintf("%dms", r.ListTTLMs)
	if r.ListTTLMs >= 1000 {
		s = humanize.Age(r.ListTTLMs / 1000)
	}
	if r.ListCacheScope != "" {
		s += " " + r.ListCacheScope
	}
	return s
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// WriteMarkdown says, above a check's report, where its old list came
// from and which tools are mid-deploy.
func (d *Deployed) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "Old list: what `%s` advertises now in `%s` (registry of advertised definitions, latest advertisement %s).\n",
		d.Service, orNone(d.Environment), stamp(d.At))
	for _, m := range d.MidDeploy {
		fmt.Fprintf(w, "\n**Mid-deploy:** `%s` is advertised under revisions %s at once; the check compares the newest.\n", m.Tool, strings.Join(m.Revisions, ", "))
	}
	_, err := fmt.Fprintln(w)
	return err
}
