package toolchange

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpdrift/mcpdrift/internal/humanize"
	"github.com/mcpdrift/mcpdrift/internal/render"
)

var verdictText = map[Verdict]string{
	VerdictSafe:          "✅ safe",
	VerdictNeedsDecision: "⚠️ needs a decision",
	VerdictViolation:     "❌ violation",
}

// Markdown writes the report as a pull-request comment: a summary table,
// then each tool that is not unchanged with its reason, path and findings.
func (r Report) Markdown(w io.Writer) error {
	var b strings.Builder
	counts := map[Verdict]int{}
	var unchanged []string
	for _, c := range r.Tools {
		counts[c.Verdict]++
		if c.Status == StatusUnchanged {
			unchanged = append(unchanged, render.Code(c.Tool))
		}
	}
	switch {
	case counts[VerdictViolation] > 0:
		b.WriteString("### ❌ Release check: the change breaks the seed's rule\n\n")
	case counts[VerdictNeedsDecision] > 0:
		b.WriteString("### ⚠️ Release check: the change needs a decision\n\n")
	default:
		b.WriteString("### ✅ Release check: every change is safe\n\n")
	}
	if r.From != nil && r.To != nil {
		fmt.Fprintf(&b, "Weighed by the calls from %s to %s.", render.HumanTime(*r.From), render.HumanTime(*r.To))
		if r.UnknownCallers == UnknownCallersSafe {
			b.WriteString(" Calls that did not say which revision they were planned with are judged safe, as asked.")
		}
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "%d %s checked: %d safe, %d %s a decision, %d %s.\n\n",
		len(r.Tools), humanize.Plural(len(r.Tools), "tool", "tools"), counts[VerdictSafe],
		counts[VerdictNeedsDecision], humanize.Plural(counts[VerdictNeedsDecision], "needs", "need"),
		counts[VerdictViolation], humanize.Plural(counts[VerdictViolation], "violation", "violations"))
	if len(unchanged) == len(r.Tools) {
		b.WriteString("No tool changed.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("| Tool | Change | Class | Old arguments valid | Verdict |\n| --- | --- | --- | --- | --- |\n")
	for _, c := range r.Tools {
		if c.Status == StatusUnchanged {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", render.Code(c.Tool), c.Status, classText(c.Class), answerText(c.OldArguments), verdictText[c.Verdict])
	}
	if len(unchanged) > 0 {
		fmt.Fprintf(&b, "\nUnchanged: %s.\n", strings.Join(unchanged, ", "))
	}
	for _, c := range r.Tools {
		if c.Status == StatusUnchanged {
			continue
		}
		c.markdown(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (c Change) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "\n#### %s: %s, %s\n\n", render.Code(c.Tool), classText(c.Class), strings.TrimLeft(verdictText[c.Verdict], "✅⚠️❌ \ufe0f"))
	switch {
	case c.OldRevision != "" && c.NewRevision != "":
		fmt.Fprintf(b, "Revision %s → %s.\n", render.Code(render.ShortRevision(c.OldRevision)), render.Code(render.ShortRevision(c.NewRevision)))
	case c.OldRevision != "":
		fmt.Fprintf(b, "Revision %s, removed.\n", render.Code(render.ShortRevision(c.OldRevision)))
	default:
		fmt.Fprintf(b, "Revision %s, new.\n", render.Code(render.ShortRevision(c.NewRevision)))
	}
	fmt.Fprintf(b, "\n**Why:** %s.\n", text(c.Reason))
	if c.Path != "" {
		fmt.Fprintf(b, "\n**Path:** %s.\n", text(c.Path))
	}
	if a := c.OldArguments; a != nil {
		fmt.Fprintf(b, "\n**Can an existing session still send its old arguments?** %s", answerText(a))
		if a.Reason != "" {
			fmt.Fprintf(b, ": %s", text(a.Reason))
		}
		b.WriteString(".\n")
	}
	if a := c.OldReaders; a != nil && a.Answer != AnswerYes {
		fmt.Fprintf(b, "\n**Can a client on the old snapshot still read the results?** %s", answerText(a))
		if a.Reason != "" {
			fmt.Fprintf(b, ": %s", text(a.Reason))
		}
		b.WriteString(".\n")
	}
	if u := c.Usage; u != nil {
		u.markdown(b)
	}
	if len(c.Findings) > 0 {
		b.WriteString("\n")
		for _, f := range c.Findings {
			class := ""
			if f.Class != "" {
				class = " (" + classText(f.Class) + ")"
			}
			fmt.Fprintf(b, "- %s%s: %s\n", f.Area, class, text(f.Detail))
		}
	}
}

// text escapes Markdown in a sentence but keeps its `code` spans.
func text(s string) string {
	parts := strings.Split(s, "`")
	for i := range parts {
		if i%2 == 0 {
			parts[i] = render.EscapeMarkdown(parts[i])
		}
	}
	if len(parts)%2 == 0 { // an unmatched backtick: escape it all
		return render.EscapeMarkdown(s)
	}
	return strings.Join(parts, "`")
}

func classText(class string) string {
	if class == "" {
		return "none"
	}
	return strings.ReplaceAll(class, "_", " ")
}

func answerText(a *Compatibility) string {
	if a == nil {
		return "—"
	}
	return strings.ReplaceAll(string(a.Answer), "_", " ")
}

func (u *Usage) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "\n**What the rollout would do:** %s.\n", text(u.Rollout))
	if u.Calls > 0 {
		b.WriteString("\n| Client | Calls | Oldest session | Highest privilege |\n| --- | ---: | ---: | --- |\n")
		for _, c := range u.Clients {
			fmt.Fprintf(b, "| %s | %d | %s | %s |\n", render.Code(c.Client), c.Calls, ageText(c.MaxSessionAgeS), privilegeText(c.MaxPrivilege))
		}
		fmt.Fprintf(b, "\n%d %s, %d %s", u.Sessions, humanize.Plural(int(u.Sessions), "session", "sessions"), u.Runs, humanize.Plural(int(u.Runs), "run", "runs"))
		if u.LastSeen != nil {
			fmt.Fprintf(b, "; last call %s", render.HumanTime(*u.LastSeen))
		}
		b.WriteString(".\n")
	}
	var notes []string
	if u.OlderCalls > 0 && u.Calls > 0 {
		notes = append(notes, fmt.Sprintf("%d more %s planned with older revisions (%s)", u.OlderCalls, humanize.Plural(int(u.OlderCalls), "call was", "calls were"), codes(u.OlderRevisions)))
	}
	if u.StaleRejections > 0 || u.RejectedSideEffects > 0 {
		n := fmt.Sprintf("%d stale %s in the window", u.StaleRejections, humanize.Plural(int(u.StaleRejections), "rejection", "rejections"))
		if u.RejectedSideEffects > 0 {
			n += fmt.Sprintf("; **%d rejected %s had already started its side effect**: this tool's rejections do not yet come before every external effect", u.RejectedSideEffects, humanize.Plural(int(u.RejectedSideEffects), "call", "calls"))
		}
		notes = append(notes, n)
	}
	if p := u.Propagation; p != nil {
		n := fmt.Sprintf("earlier list_changed notices reached %d %s: %d refreshed", p.NotifiedSessions, humanize.Plural(int(p.NotifiedSessions), "session", "sessions"), p.RefreshedSessions)
		if p.LagP95Ms != nil {
			n += fmt.Sprintf(" (p95 lag %s)", humanize.Age(int64(*p.LagP95Ms/1000)))
		}
		n += fmt.Sprintf(", %d never did, and %d stale %s followed the notice", p.NeverRefreshed, p.StaleCallsAfterNotice, humanize.Plural(int(p.StaleCallsAfterNotice), "call", "calls"))
		notes = append(notes, n)
	}
	if u.RetriesAcrossChange > 0 {
		notes = append(notes, fmt.Sprintf("**%d automatic %s crossed a semantic or authority change** of this tool: its clients retry without a new decision", u.RetriesAcrossChange, humanize.Plural(int(u.RetriesAcrossChange), "retry", "retries")))
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			fmt.Fprintf(b, "- %s.\n", n)
		}
	}
}

func ageText(s *int64) string {
	if s == nil || *s <= 0 {
		return "unknown"
	}
	return humanize.Age(*s)
}

func privilegeText(p string) string {
	if p == "" {
		return "unknown"
	}
	return p
}
