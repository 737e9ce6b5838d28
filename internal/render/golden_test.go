package render_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/internal/render"
)

var update = flag.Bool("update", false, "regenerate the golden files under testdata")

// goldenWidth is the terminal width the default text tables are fitted to.
const goldenWidth = 120

// lay decodes the rows of a report body and lays them out.
func lay[T any](build func([]T, render.Format) render.Table) func(t *testing.T, body []byte, f render.Format) render.Table {
	return func(t *testing.T, body []byte, f render.Format) render.Table {
		t.Helper()
		var b struct{ Rows []T }
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatal(err)
		}
		return build(b.Rows, f)
	}
}

var (
	digest      = regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	shortDigest = regexp.MustCompile(`sha256:[0-9a-f]{8}…`)
)

// TestTextGolden lays out every report over the rows of
// testdata/rows (the API's answers over the report fixture, with digest
// revisions): the text table fitted to 120 columns, every line measured,
// and the wide format with every revision whole.
func TestTextGolden(t *testing.T) {
	for name, build := range map[string]func(*testing.T, []byte, render.Format) render.Table{
		"tools":              lay(render.Tools),
		"stale_usage":        lay(render.StaleUsage),
		"rejections":         lay(render.Rejections),
		"repairs":            lay(render.Repairs),
		"adapter_retirement": lay(render.AdapterRetirement),
		"propagation":        lay(render.Propagation),
		"violations":         lay(render.Violations),
		"audit":              lay(render.Audit),
		"revision_sources":   lay(render.RevisionSources),
		"contract_errors":    lay(render.ContractErrors),
	} {
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "rows", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			shown := false
			for _, f := range []render.Format{render.FormatTable, render.FormatWide} {
				tbl := build(t, body, f)
				tbl.Subtitle = "2099-03-09 12:00:00Z to 2099-03-16 12:00:00Z"
				tbl.Width = goldenWidth
				var b strings.Builder
				if err := tbl.Write(&b, f); err != nil {
					t.Fatal(err)
				}
				got := b.String()
				golden(t, filepath.Join("testdata", name+"."+string(f)+".txt"), got)
				for n, l := range strings.Split(got, "\n") {
					if w := utf8.RuneCountInString(l); f == render.FormatTable && w > goldenWidth {
						t.Errorf("%s line %d is %d columns wide, over %d: %q", f, n+1, w, goldenWidth, l)
					}
				}
				// Short digests in the table, the same whole in the wide
				// format, and never a whole one in the table.
				if f == render.FormatTable {
					shown = shortDigest.MatchString(got)
					if digest.MatchString(got) {
						t.Errorf("%s shows a whole digest", f)
					}
				} else if shortDigest.MatchString(got) || digest.MatchString(got) != shown {
					t.Errorf("%s: short digests %v, whole %v; the table shows short ones: %v", f, shortDigest.MatchString(got), digest.MatchString(got), shown)
				}
			}
		})
	}
}

// TestFit fits one table to several widths: cells are cut with an
// ellipsis, widest first, never numbers, never below MinCut, and a note
// says so.
func TestFit(t *testing.T) {
	tbl := render.Table{
		Title: "Fit", Subtitle: "a subtitle long enough to be wrapped at the narrower widths",
		Columns: []render.Column{
			{Name: "name", Title: "Name"}, {Name: "calls", Title: "Calls", Numeric: true},
			{Name: "clients", Title: "Blocking clients"}, {Name: "why", Title: "Why", Long: true},
		},
		Rows: [][]string{
			{"deploy_preview-r1-r2", "1234567", "claude-desktop@0.9.1 (35), legacy-bot@1.0.0 (7)", "42 calls in the window, over the threshold of 5"},
			{"a", "1", "", ""},
		},
	}
	f := func(width int, wantCut bool) {
		t.Helper()
		tbl.Width = width
		var b strings.Builder
		if err := tbl.Text(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "1234567") {
			t.Errorf("width %d cut a number:\n%s", width, out)
		}
		if cut := strings.Contains(out, "were cut to fit"); cut != wantCut {
			t.Errorf("width %d: cut note %v, want %v:\n%s", width, cut, wantCut, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if width > 0 && utf8.RuneCountInString(l) > max(width, render.MinCut+2+7+2+render.MinCut) {
				t.Errorf("width %d: line %q is wider", width, l)
			}
		}
	}
	f(0, false)
	f(200, false)
	f(60, true)
	f(40, true)
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the output (go test -update regenerates it):\n%s", path, got)
	}
}
