package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/internal/api"
)

// TestReportWidth prints every report as a table fitted to 120 columns,
// and with -o wide, against golden files: each line of the table measured,
// digests short in the table and whole in the wide output.
func TestReportWidth(t *testing.T) {
	base, _ := fixtureAPI(t)
	digest := regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	for _, name := range api.ReportNames() {
		t.Run(name, func(t *testing.T) {
			args := []string{"report", name, "-api", base}
			if name == "audit" {
				args = append(args, "-run", "legacy-run-1")
			}
			code, table, errOut := mcpdrift(t, append(args, "-width", "120")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			goldenFile(t, "report_"+name+".width120.txt", table)
			for n, l := range strings.Split(table, "\n") {
				if w := utf8.RuneCountInString(l); w > 120 {
					t.Errorf("line %d is %d columns wide: %q", n+1, w, l)
				}
			}
			code, wide, errOut := mcpdrift(t, append(args, "-o", "wide")...)
			if code != 0 {
				t.Fatalf("-o wide: exit %d: %s", code, errOut)
			}
			goldenFile(t, "report_"+name+".wide.txt", wide)
			if digest.MatchString(table) || strings.Contains(wide, "…") {
				t.Errorf("whole digests in the table, or cut values in the wide output:\n%s\n%s", table, wide)
			}
		})
	}
	if code, _, errOut := mcpdrift(t, "report", "tools", "-api", base, "-width", "10"); code == 0 || !strings.Contains(errOut, "-width: invalid width") {
		t.Errorf("-width 10: exit %d, %s", code, errOut)
	}
}

// TestTableWidth: -width wins; output that is not a character device (a
// file, a pipe, a buffer) is never cut; a character device, as a terminal
// is, takes COLUMNS, else 120.
func TestTableWidth(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	dev, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	t.Setenv("COLUMNS", "")
	for _, c := range []struct {
		flag    int
		out     *os.File
		columns string
		want    int
	}{
		{80, file, "", 80}, {0, dev, "", 0}, {-1, file, "200", 0}, {-1, dev, "", defaultWidth}, {-1, dev, "200", 200}, {-1, dev, "wide", defaultWidth},
	} {
		t.Setenv("COLUMNS", c.columns)
		if got := tableWidth(c.flag, c.out); got != c.want {
			t.Errorf("tableWidth(%d, %s) with COLUMNS=%q = %d, want %d", c.flag, c.out.Name(), c.columns, got, c.want)
		}
	}
	if got := tableWidth(-1, &strings.Builder{}); got != 0 {
		t.Errorf("tableWidth to a buffer = %d, want 0", got)
	}
}
