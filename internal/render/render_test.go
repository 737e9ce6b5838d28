package render_test

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/render"
)

func table() render.Table {
	return render.Table{
		Title:    "Things",
		Subtitle: "a window",
		Columns: []render.Column{
			{Name: "name", Title: "Name"},
			{Name: "n", Title: "N", Numeric: true},
			{Name: "secret", Title: "Secret", Detail: true},
			{Name: "wide", Title: "Wide", Wide: true},
			{Name: "why", Title: "Why", Long: true},
		},
		Rows: [][]string{
			{"=HYPERLINK(\"x\")", "-3", "s1", "w1", "because\nof | this"},
			{"ünïcode", "12345", "s2", "w2", ""},
		},
		Notes: []string{"More rows: cursor=abc"},
	}
}

func TestCSV(t *testing.T) {
	var b strings.Builder
	if err := table().CSV(&b); err != nil {
		t.Fatal(err)
	}
	want := "name,n,secret,wide,why\r\n" +
		"\"'=HYPERLINK(\"\"x\"\")\",-3,s1,w1,\"because\r\nof | this\"\r\n" +
		"ünïcode,12345,s2,w2,\r\n"
	if b.String() != want {
		t.Errorf("CSV:\n%q\nwant\n%q", b.String(), want)
	}
}

func TestMarkdown(t *testing.T) {
	var b strings.Builder
	if err := table().Markdown(&b); err != nil {
		t.Fatal(err)
	}
	want := "### Things\n\na window\n\n" +
		"| Name | N | Wide | Why |\n| --- | ---: | --- | --- |\n" +
		"| =HYPERLINK(\"x\") | -3 | w1 | because of \\| this |\n" +
		"| ünïcode | 12345 | w2 |  |\n" +
		"\nMore rows: cursor=abc\n"
	if b.String() != want {
		t.Errorf("Markdown:\n%s\nwant\n%s", b.String(), want)
	}
	var empty strings.Builder
	_ = render.Table{Title: "None", Columns: table().Columns}.Markdown(&empty)
	if !strings.Contains(empty.String(), "_No rows._") {
		t.Errorf("empty table: %q", empty.String())
	}
}

func TestText(t *testing.T) {
	var b strings.Builder
	if err := table().Text(&b); err != nil {
		t.Fatal(err)
	}
	want := "Things, a window\n\n" +
		"Name                 N\n" +
		"---------------  -----\n" +
		"=HYPERLINK(\"x\")     -3\n" +
		"ünïcode          12345\n" +
		"\n=HYPERLINK(\"x\"): because of | this\n" +
		"\nMore rows: cursor=abc\n"
	if b.String() != want {
		t.Errorf("Text:\n%s\nwant\n%s", b.String(), want)
	}
}

func TestEscapeMarkdown(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := render.EscapeMarkdown(in); got != want {
			t.Errorf("EscapeMarkdown(%q) = %q, want %q", in, got, want)
		}
	}
	f("deploy_preview", "deploy_preview")
	f("_private_", "\\_private\\_")
	f("a|b", "a\\|b")
	f("**bold** `code` [link](x) <b>", "\\*\\*bold\\*\\* \\`code\\` \\[link\\](x) \\<b\\>")
	f("# not a heading", "\\# not a heading")
	f("issue #4", "issue #4")
	f("x'); DROP TABLE events; --", "x'); DROP TABLE events; --")
	f("line\nbreak", "line break")
}

func TestCode(t *testing.T) {
	for in, want := range map[string]string{
		"deploy_preview/1-2": "`deploy_preview/1-2`",
		"":                   "",
		"a`b":                "a\\`b",
		"a|b":                "a\\|b",
		"line\nbreak":        "line break",
	} {
		if got := render.Code(in); got != want {
			t.Errorf("Code(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormats(t *testing.T) {
	for in, want := range map[string]render.Format{"json": render.FormatJSON, "CSV": render.FormatCSV, "md": render.FormatMarkdown,
		"markdown": render.FormatMarkdown, "table": render.FormatTable, "text": render.FormatTable} {
		if got, err := render.ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := render.ParseFormat("xml"); err == nil {
		t.Error("ParseFormat(xml) succeeded")
	}
	if err := table().Write(&strings.Builder{}, render.FormatJSON); err == nil {
		t.Error("a table rendered as JSON")
	}
}

func TestValues(t *testing.T) {
	if got := render.ShortRevision("sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"); got != "sha256:2c26b46b…" {
		t.Errorf("ShortRevision = %q", got)
	}
	if got := render.ShortRevision("7"); got != "7" {
		t.Errorf("ShortRevision(7) = %q", got)
	}
	// A declared SEP-2636 tool digest keeps the prefix that names it.
	if got := render.ShortRevision("sha256-jcs-tool:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"); got != "sha256-jcs-tool:2c26b46b…" {
		t.Errorf("ShortRevision = %q", got)
	}
}
