package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// markdown returns the figures as Markdown, for docs/capacity.md: the
// command and the date once at the top, with the machine, then one table
// per suite run (in the order they ran), each under a heading naming the
// suite and a line with what it was sent. A figure measured against
// another of the same run gives that figure's label and the ratio; the
// issue's targets are ratios, and they are what holds from one run to
// the next.
func (r *Report) markdown() string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "Measured by `%s` on %s UTC", r.command(), r.Time.UTC().Format("2006-01-02 15:04"))
	if r.Commit != "" {
		fmt.Fprintf(&b, " at commit %s", shortCommit(r.Commit))
	}
	fmt.Fprintf(&b, ", nproc %d, %s", m.NumCPU, m.GoVersion)
	if m.CPUModel != "" {
		fmt.Fprintf(&b, ", %s", m.CPUModel)
	}
	if m.LoadAvg != "" {
		fmt.Fprintf(&b, ", load average %s at the start", m.LoadAvg)
	}
	b.WriteString(".")
	if r.Error != "" {
		fmt.Fprintf(&b, " **The run failed:** %s.", mdCell(r.Error))
	}
	b.WriteString("\n")

	labels := map[string]string{}
	for _, f := range r.Figures {
		labels[f.ID] = f.Label
	}
	for _, suite := range knownSuites {
		var figs []Figure
		for _, f := range r.Figures {
			if f.Suite == suite {
				figs = append(figs, f)
			}
		}
		if len(figs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s suite\n\n", suite)
		if line := r.suiteLine(suite); line != "" {
			b.WriteString(line + "\n\n")
		}
		b.WriteString("| figure | value | against (same run) | ratio | target |\n| --- | ---: | --- | ---: | --- |\n")
		for _, f := range figs {
			against, ratio := "", ""
			if f.Baseline != "" {
				against = labels[f.Baseline]
				if against == "" {
					against = f.Baseline
				}
				ratio = fmt.Sprintf("%.2f×", f.Ratio)
			}
			target := f.Target
			if f.Met != nil {
				target += map[bool]string{true: " (met)", false: " (missed)"}[*f.Met]
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCell(f.Label), formatValue(f.Value, f.Unit), mdCell(against), ratio, mdCell(target))
		}
	}
	return b.String()
}

// suiteLine says what a suite's figures were measured on.
func (r *Report) suiteLine(suite string) string {
	c := r.Config
	switch suite {
	case SuiteIngest, SuiteCollector:
		s := fmt.Sprintf("%d events in %d OTLP/gRPC requests of %d records from %d streams; redaction: %s",
			c.Events, r.Requests, c.Batch, c.Streams, c.Redaction)
		if c.IngestAck == "spooled" {
			s += fmt.Sprintf("; (c) acknowledged once spooled, inserts of up to %d events", c.InsertMax)
		}
		if p := r.Collector; suite == SuiteCollector && p != nil {
			s += fmt.Sprintf("; (k) %s, batches of %d, into ClickHouse %s", p.Version, p.BatchEvents, p.ServerVersion)
		}
		return s + "."
	case SuiteReports, SuiteStorage, SuiteConsole:
		return fmt.Sprintf("%d simulated events over %gh (%d tools, %d sessions, %d clients, %d servers) in Writes of %d; %d runs per report after %d warm-ups.",
			c.ReportEvents, c.ReportSpanH, c.ReportTools, c.ReportSessions, c.ReportClients, c.ReportServers, c.ReportBatch, c.ReportRuns, c.ReportWarmups)
	case SuiteOverload:
		return fmt.Sprintf("A %gs flood on %d streams of %d-record requests into MaxPendingEvents %d and a spool of %d bytes.",
			c.OverloadDurationS, c.OverloadStreams, c.OverloadBatch, c.OverloadMaxPending, c.OverloadSpoolBytes)
	}
	return ""
}

// shortCommit is a commit as git log --oneline abbreviates it (12
// hex digits), its "-dirty" kept.
func shortCommit(c string) string {
	hash, dirty, _ := strings.Cut(c, "-")
	if len(hash) > 12 {
		hash = hash[:12]
	}
	if dirty != "" {
		return hash + "-" + dirty
	}
	return hash
}

// mdCell makes s safe in a table cell: no pipe ends it, no newline
// breaks the row.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// writeMarkdown writes r.markdown() to path, creating its directory.
func (r *Report) writeMarkdown(path string) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("cannot create the Markdown's directory %s: %w", dir, err)
		}
	}
	if err := os.WriteFile(path, []byte(r.markdown()), 0o644); err != nil {
		return fmt.Errorf("cannot write the Markdown tables to %s: %w", path, err)
	}
	return nil
}

// commandLine is the bench's command line as `go run ./bench` with args,
// for Config.Command.
func commandLine(args []string) string {
	return strings.TrimSpace("go run ./bench " + strings.Join(args, " "))
}
