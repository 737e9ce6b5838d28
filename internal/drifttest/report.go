package drifttest

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// Report is a drift test's outcome.
type Report struct {
	// Server names the server under test: its URL or its command.
	Server string `json:"server"`
	// DryRun says that nothing was sent: Results hold the calls that
	// would be.
	DryRun bool `json:"dry_run"`
	// MaxCallsPerTool bounds the calls sent to each tool, both passes
	// together.
	MaxCallsPerTool int `json:"max_calls_per_tool"`
	// Audited says that each answer was checked against the server's
	// call event in mcpdrift's audit (Result.Confirmed).
	Audited bool `json:"audited"`
	// Reverse, in a reverse run, is the adapter tested as if it were gone
	// and who its retirement would hit.
	Reverse *Reverse `json:"reverse,omitempty"`
	// Unchanged are the tools the old and new lists define alike: no call
	// is sent to them.
	Unchanged []string `json:"unchanged"`
	// Results are the calls, tool by tool, each argument object in the
	// declared pass then the stock pass.
	Results []Result `json:"results"`
	// OldCache is the old list's cache hint, when it had one (the
	// tools/list result's ttlMs and cacheScope, or the registry's for a
	// -deployed list): clients may keep planning with the old list that
	// long after the deploy, so each verdict's reason names it, and the
	// adapters and rejections it judged must serve that long.
	OldCache *toolchange.Cache `json:"old_cache,omitempty"`
	// Deployed, when the old list came from the registry (drifttest
	// -deployed), is that list and where it was advertised; Markdown
	// leaves it to the caller (registry.Deployed.WriteMarkdown).
	Deployed *registry.Deployed `json:"deployed,omitempty"`
}

// Failures counts the results whose verdict fails.
func (r Report) Failures() int {
	n := 0
	for _, res := range r.Results {
		if res.Verdict != "" && !res.Verdict.Pass() {
			n++
		}
	}
	return n
}

// Pass reports whether every call sent passed.
func (r Report) Pass() bool { return r.Failures() == 0 }

// Markdown writes the report as a pull-request comment.
func (r Report) Markdown(w io.Writer) error {
	var b strings.Builder
	tools := map[string]bool{}
	for _, res := range r.Results {
		tools[res.Tool] = true
	}
	switch {
	case r.DryRun:
		fmt.Fprintf(&b, "### Drift test (dry run): %d calls to %s of %s, none sent\n\n", len(r.Results), plural(len(tools), "tool"), r.Server)
	case r.Pass():
		fmt.Fprintf(&b, "### ✅ Drift test: every old call was adapted or rejected cleanly\n\n%d calls to %s of %s, at most %d per tool.\n\n",
			len(r.Results), plural(len(tools), "changed or removed tool"), r.Server, r.MaxCallsPerTool)
	default:
		fmt.Fprintf(&b, "### ❌ Drift test: %d of %d old calls broke the seed's rules\n\n%s of %s, at most %d calls per tool.\n\n",
			r.Failures(), len(r.Results), capitalize(plural(len(tools), "changed or removed tool")), r.Server, r.MaxCallsPerTool)
	}
	if rv := r.Reverse; rv != nil {
		fmt.Fprintf(&b, "Reverse: the calls adapter `%s` serves (`%s`, revision `%s` → `%s`), sent to a server without it; each must be rejected cleanly.\n\n",
			rv.Adapter.AdapterID, rv.Adapter.Tool, mcpgo.Short(rv.Adapter.RevisionFrom), mcpgo.Short(rv.Adapter.RevisionTo))
	}
	if len(r.Results) == 0 {
		b.WriteString("No tool changed or was removed: nothing to send.\n\n")
	} else {
		b.WriteString("| Tool | Client | Arguments | Answer | Verdict |\n| --- | --- | --- | --- | --- |\n")
		for _, res := range r.Results {
			fmt.Fprintf(&b, "| `%s` %s | %s | %s | %s | %s |\n", res.Tool, revisions(res.Call), passName(res), argsCell(res.Call),
				answerCell(res), verdictCell(res))
		}
		b.WriteString("\n")
	}
	if r.Audited && !r.DryRun {
		found, missing := 0, 0
		for _, res := range r.Results {
			switch {
			case res.Confirmed == nil:
			case res.Confirmed.Found:
				found++
			default:
				missing++
			}
		}
		fmt.Fprintf(&b, "Checked against the server's call events in mcpdrift's audit: %d found, %d not found in time", found, missing)
		if n := len(r.Results) - found - missing; n > 0 {
			fmt.Fprintf(&b, ", %d not searchable (stock calls over stdio have no session id)", n)
		}
		b.WriteString(".\n\n")
	}
	if len(r.Unchanged) > 0 {
		fmt.Fprintf(&b, "Unchanged, not called: `%s`.\n\n", strings.Join(r.Unchanged, "`, `"))
	}
	if r.OldCache != nil {
		fmt.Fprintf(&b, "Cache hint of the old list: %s; old calls can arrive that long after the deploy.\n\n", r.OldCache.Reason())
	}
	if r.Reverse != nil {
		r.Reverse.markdown(&b)
	}
	if !r.DryRun && !r.Pass() {
		b.WriteString("#### Failures\n\n")
		for _, res := range r.Results {
			if res.Verdict.Pass() {
				continue
			}
			fmt.Fprintf(&b, "- `%s`, %s client, %s: **%s**: %s.\n", res.Tool, res.Pass, cell(string(res.Arguments)), res.Verdict, res.Reason)
		}
		b.WriteString("\nThe seed asks each old call to be normalised by a deterministic adapter, or rejected with " +
			"`STALE_TOOL_SCHEMA` (side_effect_started false, the current revision, required_action refresh_tools) " +
			"before any side effect; a removed tool must fail with `TOOL_REMOVED`.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// revisions writes a call's revisions, old → new.
func revisions(c Call) string {
	if c.NewRevision == "" {
		return fmt.Sprintf("(`%s` → removed)", mcpgo.Short(c.OldRevision))
	}
	return fmt.Sprintf("(`%s` → `%s`)", mcpgo.Short(c.OldRevision), mcpgo.Short(c.NewRevision))
}

// argsCell writes a call's arguments, saying when they were recorded from
// an agent's call and when they hold redaction markers.
func argsCell(c Call) string {
	s := cell(string(c.Arguments))
	if c.Kind == KindRecorded {
		s = "recorded " + s
		if c.Redacted {
			s += " (redacted)"
		}
	}
	return s
}

func passName(r Result) string {
	if r.Pass == PassDeclared {
		return "declares `" + mcpgo.Short(r.OldRevision) + "`"
	}
	return "stock"
}

func answerCell(r Result) string {
	s := answerText(r.Answer)
	if c := r.Confirmed; c != nil && c.Found {
		s += "; event `" + c.Outcome + "`"
		if c.SideEffectStarted {
			s += ", side effect started"
		}
	}
	return s
}

func answerText(a *Answer) string {
	switch {
	case a == nil:
		return "not sent"
	case a.Error != "":
		return "error: " + cell(a.Error)
	case a.IsError:
		if code, _ := a.Structured["error_code"].(string); code != "" {
			return "`" + code + "`"
		}
		return "error: " + cell(a.Text)
	}
	return "success"
}

func verdictCell(r Result) string {
	switch {
	case r.Verdict == "":
		return "—"
	case r.Verdict.Pass():
		return "✅ " + string(r.Verdict)
	}
	return "❌ " + string(r.Verdict)
}

// maxCell bounds a table cell.
const maxCell = 120

// cell makes text fit a Markdown table cell: one line, pipes escaped, cut
// to maxCell runes, as a code span when it holds no backtick.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxCell {
		s = string(r[:maxCell]) + "…"
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	if !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	return s
}

// plural writes n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// capitalize upper-cases the first letter of an ASCII sentence.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
