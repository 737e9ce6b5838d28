package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// renderedDocs are the files, relative to the repository's root, whose
// sections between markers are written from checked-in results files by
// `go run ./bench -render .` (go generate ./bench). TestDocsFromResults
// fails when one of them differs from what the results give.
var renderedDocs = []string{"README.md", "docs/capacity.md"}

// A generated section lies between an opening marker naming its kind and
// a results file (a path relative to the repository's root, as -out wrote
// it), and the closing marker of that kind, each on a line of its own:
//
//	<!-- bench:tables bench/results/2026-12-04.json -->
//	…written by the renderer…
//	<!-- end bench:tables -->
//
// Everything between the two markers is replaced; everything outside
// them is left as it is.
const (
	markerPrefix = "<!-- bench:"
	markerSuffix = " -->"
)

// sectionKinds maps a marker's kind to what it writes from a results file:
// tables, the -markdown output (the command, date, commit and machine,
// then one table per suite); summary, the README's sentence of ratios.
var sectionKinds = map[string]func(*Report) (string, error){
	"tables":  func(r *Report) (string, error) { return r.markdown(), nil },
	"summary": (*Report).summary,
}

// readResults reads a results file as -out writes it.
func readResults(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the results %s: %w", path, err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("cannot decode the results %s (%d bytes): %w", path, len(data), err)
	}
	if len(r.Figures) == 0 {
		return nil, fmt.Errorf("the results %s hold no figure", path)
	}
	return &r, nil
}

// renderDoc returns doc with every generated section rewritten from the
// results file its marker names, read under root. It fails on a marker
// of an unknown kind, one without its closing marker, and a results file
// that cannot be read or lacks a figure the section quotes; a document
// without markers comes back unchanged.
func renderDoc(doc []byte, root string) ([]byte, error) {
	lines := strings.SplitAfter(string(doc), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		out.WriteString(line)
		kind, file, ok := openingMarker(line)
		if !ok {
			continue
		}
		gen, known := sectionKinds[kind]
		if !known {
			return nil, fmt.Errorf("line %d: unknown generated section %q", i+1, kind)
		}
		closing := "<!-- end bench:" + kind + markerSuffix
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != closing {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("line %d: %s has no %s", i+1, strings.TrimSpace(line), closing)
		}
		r, err := readResults(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		text, err := gen(r)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", i+1, file, err)
		}
		out.WriteString(strings.TrimRight(text, "\n") + "\n")
		out.WriteString(lines[end])
		i = end
	}
	return []byte(out.String()), nil
}

// openingMarker parses `<!-- bench:KIND FILE -->`.
func openingMarker(line string) (kind, file string, ok bool) {
	s := strings.TrimSpace(line)
	if !strings.HasPrefix(s, markerPrefix) || !strings.HasSuffix(s, markerSuffix) {
		return "", "", false
	}
	f := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(s, markerPrefix), markerSuffix))
	if len(f) != 2 {
		return "", "", false
	}
	return f[0], f[1], true
}

// renderDocs rewrites renderedDocs under root, and says which changed.
func renderDocs(root string) (changed []string, err error) {
	for _, name := range renderedDocs {
		path := filepath.Join(root, filepath.FromSlash(name))
		doc, err := os.ReadFile(path)
		if err != nil {
			return changed, fmt.Errorf("cannot read %s: %w", path, err)
		}
		got, err := renderDoc(doc, root)
		if err != nil {
			return changed, fmt.Errorf("%s: %w", name, err)
		}
		if bytes.Equal(got, doc) {
			continue
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			return changed, fmt.Errorf("cannot write %s: %w", path, err)
		}
		changed = append(changed, name)
	}
	return changed, nil
}

// summary is the README's sentence: the ratios of issue 46's targets,
// from the ingest suite of one run, with its date and command.
func (r *Report) summary() (string, error) {
	ratio := func(id string) (string, error) {
		for _, f := range r.Figures {
			if f.ID == id {
				if f.Baseline == "" {
					return "", fmt.Errorf("figure %s has no ratio", id)
				}
				return fmt.Sprintf("%.2f×", f.Ratio), nil
			}
		}
		return "", fmt.Errorf("no figure %s (the summary needs the ingest suite with the embedded store)", id)
	}
	var v [3]string
	for i, id := range []string{"ingest_store.cpu_us_per_event", "floor_views.cpu_us_per_event", "ingest_no_store.cpu_us_per_event"} {
		var err error
		if v[i], err = ratio(id); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("On %s (`%s`, %d cores):\n`serve` as shipped took %s the engine's all-views floor, that floor %s a raw-table insert,\nand the ingest path without the store %s a pdata decode.",
		r.Time.UTC().Format("2006-01-02"), r.command(), r.Machine.NumCPU, v[0], v[1], v[2]), nil
}

// command is the run's command line, or the bench's bare one when the
// results do not record it.
func (r *Report) command() string {
	if r.Command == "" {
		return "go run ./bench"
	}
	return r.Command
}
