// Package render lays mcpdrift's reports out as tables of text cells and
// writes them as CSV (RFC 4180, every column), GitHub-flavoured Markdown or
// an aligned plain-text table (the columns a person reads, fitted to a
// width when one is given, or every column in full: the wide format). The
// API serves these for text/csv, text/markdown and text/plain; the CLI
// prints them.
package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Format is an output format of a report.
type Format string

// Formats.
const (
	FormatJSON     Format = "json"
	FormatCSV      Format = "csv"
	FormatMarkdown Format = "md"
	FormatTable    Format = "table"
	// FormatWide is the text table with every column but the detail ones,
	// full values (whole revisions) and no width limit.
	FormatWide Format = "wide"
)

// Formats lists every format, JSON first.
var Formats = []Format{FormatJSON, FormatCSV, FormatMarkdown, FormatTable, FormatWide}

// ParseFormat reads a format name: json, csv, md (or markdown), table (or
// text), wide.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "json":
		return FormatJSON, nil
	case "csv":
		return FormatCSV, nil
	case "md", "markdown":
		return FormatMarkdown, nil
	case "table", "text":
		return FormatTable, nil
	case "wide":
		return FormatWide, nil
	}
	return "", fmt.Errorf("unknown format %q: want json, csv, md, table or wide", s)
}

// ContentType returns the media type the API serves f as.
func (f Format) ContentType() string {
	switch f {
	case FormatCSV:
		return "text/csv; charset=utf-8; header=present"
	case FormatMarkdown:
		return "text/markdown; charset=utf-8; variant=GFM"
	case FormatTable, FormatWide:
		return "text/plain; charset=utf-8"
	}
	return "application/json; charset=utf-8"
}

// Column describes one column of a Table.
type Column struct {
	// Name is the machine name: the CSV header and the JSON field the
	// column comes from.
	Name string
	// Title is the header people read in Markdown and text tables.
	Title string
	// Numeric columns are right-aligned in text tables.
	Numeric bool
	// Detail columns appear in CSV only.
	Detail bool
	// Wide columns are left out of text tables, to keep them within a
	// terminal; the wide format, CSV and Markdown have them.
	Wide bool
	// NoCut columns are never cut to fit a width, as numeric ones: times,
	// verdicts.
	NoCut bool
	// Long columns hold free text: a Markdown column, and in a text table
	// a note under the table, keyed by the row's first cell.
	Long bool
}

// Table is a report laid out as rows of text cells, one per column.
type Table struct {
	// Title names the report ("Adapter retirement").
	Title string
	// Subtitle says what the rows cover, such as the window.
	Subtitle string
	Columns  []Column
	Rows     [][]string
	// Notes follow the table in Markdown and text, such as how to fetch
	// the next page.
	Notes []string
	// Width, when positive, fits a text table (not the wide format) within
	// this many columns: the widest text cells are cut, down to MinCut
	// runes, and end in "…", and the title and notes are wrapped. Numeric
	// and NoCut cells are never cut, so a table of many columns may stay
	// wider.
	Width int
}

// MinCut is the fewest runes Width cuts a text column down to.
const MinCut = 8

// Write writes t in format f; JSON is not a table format.
func (t Table) Write(w io.Writer, f Format) error {
	switch f {
	case FormatCSV:
		return t.CSV(w)
	case FormatMarkdown:
		return t.Markdown(w)
	case FormatTable:
		return t.Text(w)
	case FormatWide:
		return t.text(w, true)
	}
	return fmt.Errorf("cannot render a table as %q", f)
}

// CSV writes every column, a header row of column names first, with CRLF
// line ends (RFC 4180). A text cell that a spreadsheet would run as a
// formula (starting with =, +, -, @, tab or CR) is prefixed with a single
// quote; numeric columns are written as they are.
func (t Table) CSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = c.Name
	}
	if err := cw.Write(head); err != nil {
		return fmt.Errorf("cannot write csv header: %w", err)
	}
	rec := make([]string, len(t.Columns))
	for n, row := range t.Rows {
		for i, c := range t.Columns {
			rec[i] = cell(row, i)
			if !c.Numeric {
				rec[i] = defuseFormula(rec[i])
			}
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("cannot write csv row %d: %w", n, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("cannot write csv: %w", err)
	}
	return nil
}

func defuseFormula(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// Markdown writes a GitHub-flavoured Markdown table of the non-detail
// columns under a heading, then the notes.
func (t Table) Markdown(w io.Writer) error {
	cols := t.visible(func(c Column) bool { return !c.Detail })
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "### %s\n\n", EscapeMarkdown(t.Title))
	}
	if t.Subtitle != "" {
		fmt.Fprintf(&b, "%s\n\n", EscapeMarkdown(t.Subtitle))
	}
	if len(t.Rows) == 0 {
		b.WriteString("_No rows._\n")
	} else {
		b.WriteString("|")
		for _, i := range cols {
			fmt.Fprintf(&b, " %s |", EscapeMarkdown(t.Columns[i].Title))
		}
		b.WriteString("\n|")
		for _, i := range cols {
			if t.Columns[i].Numeric {
				b.WriteString(" ---: |")
			} else {
				b.WriteString(" --- |")
			}
		}
		b.WriteString("\n")
		for _, row := range t.Rows {
			b.WriteString("|")
			for _, i := range cols {
				fmt.Fprintf(&b, " %s |", EscapeMarkdown(cell(row, i)))
			}
			b.WriteString("\n")
		}
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "%s\n", EscapeMarkdown(n))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Code renders s as Markdown inline code, or as escaped text when it holds
// a backtick, a line break or a pipe (which splits a table cell even inside
// a code span).
func Code(s string) string {
	if s == "" || strings.ContainsAny(s, "`|\n\r") {
		return EscapeMarkdown(s)
	}
	return "`" + s + "`"
}

// EscapeMarkdown makes s safe inside a Markdown table cell or paragraph:
// it escapes the characters that start markup and folds line breaks.
func EscapeMarkdown(s string) string {
	rs := []rune(s)
	word := func(i int) bool {
		return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]))
	}
	var b strings.Builder
	for i, r := range rs {
		switch {
		case r == '\\' || r == '|' || r == '*' || r == '`' || r == '[' || r == ']' || r == '<' || r == '>' || r == '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '_' && !(word(i-1) && word(i+1)), r == '#' && i == 0:
			// An underscore inside a word (deploy_preview) is no emphasis
			// in GFM; a heading mark only counts at the start.
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n' || r == '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Text writes an aligned plain-text table of the columns that are neither
// detail, wide nor long, fitted to t.Width, then, per row, its long cells
// as notes, then the notes.
func (t Table) Text(w io.Writer) error { return t.text(w, false) }

// text writes the text table; wide adds the wide columns and ignores
// t.Width.
func (t Table) text(w io.Writer, wide bool) error {
	cols := t.visible(func(c Column) bool { return !c.Detail && (wide || !c.Wide) && !c.Long })
	long := t.visible(func(c Column) bool { return !c.Detail && c.Long })
	limit := t.Width
	if wide {
		limit = 0
	}
	var b strings.Builder
	para := func(s, indent string) {
		for _, l := range wrap(s, limit, indent) {
			b.WriteString(l + "\n")
		}
	}
	if t.Title != "" {
		title := t.Title
		if t.Subtitle != "" {
			title += ", " + t.Subtitle
		}
		para(title, "")
		b.WriteString("\n")
	}
	var cut bool
	if len(t.Rows) == 0 {
		b.WriteString("(no rows)\n")
	} else {
		width := make([]int, len(t.Columns))
		for _, i := range cols {
			width[i] = utf8.RuneCountInString(t.Columns[i].Title)
			for _, row := range t.Rows {
				width[i] = max(width[i], utf8.RuneCountInString(oneLine(cell(row, i))))
			}
		}
		if limit > 0 {
			cut = t.fit(width, cols, limit)
		}
		line := func(cells func(i int) string) {
			var l strings.Builder
			for n, i := range cols {
				if n > 0 {
					l.WriteString("  ")
				}
				s := clip(cells(i), width[i])
				pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(s))
				if t.Columns[i].Numeric {
					l.WriteString(pad + s)
				} else {
					l.WriteString(s + pad)
				}
			}
			b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
		}
		line(func(i int) string { return t.Columns[i].Title })
		line(func(i int) string { return strings.Repeat("-", width[i]) })
		for _, row := range t.Rows {
			line(func(i int) string { return oneLine(cell(row, i)) })
		}
		if len(long) > 0 {
			b.WriteString("\n")
			for _, row := range t.Rows {
				for _, i := range long {
					if v := cell(row, i); v != "" {
						para(oneLine(cell(row, 0))+": "+oneLine(v), "  ")
					}
				}
			}
		}
	}
	notes := t.Notes
	if cut {
		notes = append(slices.Clip(notes), fmt.Sprintf("Cells ending in … were cut to fit %d columns; the wide format shows every value in full.", limit))
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			para(n, "  ")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fit narrows the text columns of width, widest first and down to MinCut,
// until a line of cols takes at most limit runes; it reports whether it
// narrowed any.
func (t Table) fit(width []int, cols []int, limit int) bool {
	total := 2 * (len(cols) - 1)
	for _, i := range cols {
		total += width[i]
	}
	cut := false
	for total > limit {
		widest := -1
		for _, i := range cols {
			if c := t.Columns[i]; !c.Numeric && !c.NoCut && width[i] > MinCut && (widest < 0 || width[i] > width[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		width[widest]--
		total--
		cut = true
	}
	return cut
}

// clip cuts s to n runes, the last one "…", when it is longer.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// wrap breaks s into lines of at most limit runes at spaces, the lines
// after the first indented; a word longer than a line is broken. A limit
// of 0 is no limit.
func wrap(s string, limit int, indent string) []string {
	if limit <= 0 || utf8.RuneCountInString(s) <= limit {
		return []string{s}
	}
	if 2*len(indent) >= limit {
		indent = ""
	}
	var lines []string
	cur, prefix := []rune{}, []rune{}
	flush := func() {
		lines = append(lines, string(cur))
		prefix = []rune(indent)
		cur = append([]rune{}, prefix...)
	}
	for _, word := range strings.Fields(s) {
		wr := []rune(word)
		if len(cur) > len(prefix) && len(cur)+1+len(wr) > limit {
			flush()
		}
		if len(cur) > len(prefix) {
			cur = append(cur, ' ')
		}
		for len(cur)+len(wr) > limit {
			room := limit - len(cur)
			if room <= 0 {
				flush()
				continue
			}
			cur = append(cur, wr[:room]...)
			wr = wr[room:]
			flush()
		}
		cur = append(cur, wr...)
	}
	if len(cur) > len(prefix) {
		lines = append(lines, string(cur))
	}
	return lines
}

func (t Table) visible(keep func(Column) bool) []int {
	var idx []int
	for i, c := range t.Columns {
		if keep(c) {
			idx = append(idx, i)
		}
	}
	return idx
}

func cell(row []string, i int) string {
	if i < len(row) {
		return row[i]
	}
	return ""
}

func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s)
}
