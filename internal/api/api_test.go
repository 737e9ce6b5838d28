package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
)

// goldenCases are the requests whose answers are kept under
// testdata/golden. queries names the queries golden file (under
// queries/testdata/golden) whose rows the answer must carry unchanged.
var goldenCases = []struct {
	name, target, queries string
}{
	{"tools", "/api/v1/tools", "tools_a"},
	{"stale_usage", "/api/v1/reports/stale-usage", "stale_usage_a"},
	{"stale_usage_prod", "/api/v1/reports/stale-usage?environment=prod", "stale_usage_a_prod"},
	{"rejections", "/api/v1/reports/rejections", "rejections_a"},
	{"repairs", "/api/v1/reports/repairs", "repairs_a"},
	{"adapter_retirement", "/api/v1/reports/adapter-retirement?max_calls=5", "adapter_retirement_a"},
	{"adapter_retirement_exclude_ci", "/api/v1/reports/adapter-retirement?max_calls=5&exclude_client=ci-runner", "adapter_retirement_a_exclude_ci"},
	{"adapter_retirement_share", "/api/v1/reports/adapter-retirement?max_share=10%25&long_session=72h", "adapter_retirement_a_share"},
	{"adapter_retirement_default", "/api/v1/reports/adapter-retirement?window=7d", ""},
	{"adapter_retirement_one", "/api/v1/reports/adapter-retirement?window=14d&adapter=delete_branch/3-4&max_calls=5", ""},
	{"propagation", "/api/v1/reports/propagation", "propagation_a"},
	{"violations", "/api/v1/reports/violations", "violations_a"},
	{"violations_page", "/api/v1/reports/violations?limit=3", ""},
	{"audit_session", "/api/v1/audit/calls?session=cd09-st-4", "audit_a_session"},
	{"audit_run", "/api/v1/audit/calls?run=legacy-run-1", "audit_a_run"},
	{"audit_request", "/api/v1/audit/calls?run=legacy-run-1&request_id=acme-req-104&tool=deploy_preview", ""},
	{"tools_series", "/api/v1/tools/series?step=1d&group_by=tool", "tools_series_a"},
	{"stale_usage_series", "/api/v1/reports/stale-usage/series?step=1d&group_by=tool&group_by=revision_client", "stale_usage_series_a"},
	{"stale_usage_series_client", "/api/v1/reports/stale-usage/series?step=86400&group_by=client", "stale_usage_series_a_client"},
	{"rejections_series", "/api/v1/reports/rejections/series?step=24h&group_by=error_code", "rejections_series_a"},
	{"repairs_series", "/api/v1/reports/repairs/series?step=1d", "repairs_series_a"},
	{"adapter_retirement_series", "/api/v1/reports/adapter-retirement/series?step=1d&group_by=adapter&exclude_client=ci-runner", "adapter_retirement_series_a"},
	{"propagation_series", "/api/v1/reports/propagation/series?step=1d&group_by=tool", "propagation_series_a"},
	{"violations_series", "/api/v1/reports/violations/series?step=1d&group_by=kind", "violations_series_a"},
	{"violations_series_default_step", "/api/v1/reports/violations/series?from=-1d", ""},
	{"audit_series_run", "/api/v1/audit/calls/series?run=legacy-run-1&step=1d&group_by=client,outcome", "audit_series_a_run"},
	{"revision_sources", "/api/v1/reports/revision-sources", "revision_sources_a"},
	{"revision_sources_series", "/api/v1/reports/revision-sources/series?step=1d&group_by=client", "revision_sources_series_a"},
	{"contract_errors", "/api/v1/reports/contract-errors", "contract_errors_a"},
	{"contract_errors_tool", "/api/v1/reports/contract-errors?tool=create_issue", "contract_errors_a_tool"},
	{"contract_errors_series", "/api/v1/reports/contract-errors/series?step=1d&group_by=client", "contract_errors_series_a"},
	{"contract_errors_series_tool", "/api/v1/reports/contract-errors/series?from=-3d&step=1d&group_by=tool", ""},
}

func TestGoldenJSON(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			r := get(t, s.Handler(), tc.target, "")
			if r.status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", tc.target, r.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type = %q", ct)
			}
			golden(t, tc.name+".json", r.body)
			if tc.queries != "" {
				sameRows(t, r.body, tc.queries)
			}
		})
	}
}

// sameRows checks that the rows of an API answer are those of the queries
// golden file name: the API adds an envelope and changes nothing else.
func sameRows(t *testing.T, body []byte, name string) {
	t.Helper()
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	rows := env["rows"]
	if rows == nil {
		rows = env["tools"]
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "queries", "testdata", "golden", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var got, exp any
	if err := json.Unmarshal(rows, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &exp); err != nil {
		t.Fatal(err)
	}
	if page, ok := exp.(map[string]any); ok { // a queries page: rows and next
		exp = page["rows"]
		if next, _ := page["next"].(string); next != "" {
			var gotNext string
			_ = json.Unmarshal(env["next"], &gotNext)
			if gotNext != next {
				t.Errorf("next = %q, queries golden %s says %q", gotNext, name, next)
			}
		}
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("rows differ from queries golden %s:\n got %s\nwant %s", name, rows, want)
	}
}

// TestGoldenText keeps every report's CSV, Markdown and text table, asked
// for through Accept and through format.
func TestGoldenText(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	targets := map[string]string{
		"tools":              "/api/v1/tools",
		"stale_usage":        "/api/v1/reports/stale-usage",
		"rejections":         "/api/v1/reports/rejections",
		"repairs":            "/api/v1/reports/repairs",
		"adapter_retirement": "/api/v1/reports/adapter-retirement?max_calls=5",
		"propagation":        "/api/v1/reports/propagation",
		"violations":         "/api/v1/reports/violations?limit=4",
		"audit":              "/api/v1/audit/calls?run=legacy-run-1",
		"revision_sources":   "/api/v1/reports/revision-sources",
		"contract_errors":    "/api/v1/reports/contract-errors",
	}
	formats := []struct{ format, accept, ext, contentType string }{
		{"csv", "text/csv", ".csv", "text/csv; charset=utf-8; header=present"},
		{"md", "text/markdown", ".md", "text/markdown; charset=utf-8; variant=GFM"},
		{"table", "text/plain", ".txt", "text/plain; charset=utf-8"},
	}
	for name, target := range targets {
		for _, f := range formats {
			t.Run(name+f.ext, func(t *testing.T) {
				byAccept := get(t, s.Handler(), target, f.accept)
				sep := "?"
				if strings.Contains(target, "?") {
					sep = "&"
				}
				byParam := get(t, s.Handler(), target+sep+"format="+f.format, "application/json")
				for _, r := range []response{byAccept, byParam} {
					if r.status != http.StatusOK {
						t.Fatalf("%d %s", r.status, r.body)
					}
					if ct := r.header.Get("Content-Type"); ct != f.contentType {
						t.Errorf("Content-Type = %q, want %q", ct, f.contentType)
					}
				}
				if string(byAccept.body) != string(byParam.body) {
					t.Errorf("Accept %s and format=%s answer differently", f.accept, f.format)
				}
				golden(t, name+f.ext, byAccept.body)
			})
		}
	}
}

// TestPaging walks the violations page by page and finds every row of the
// unpaged answer once, in order, with a Link header to each next page.
func TestPaging(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	type body struct {
		Rows []map[string]any `json:"rows"`
		Next string           `json:"next"`
	}
	var all body
	r := get(t, s.Handler(), "/api/v1/reports/violations?limit=1000", "")
	if err := json.Unmarshal(r.body, &all); err != nil || all.Next != "" {
		t.Fatalf("unpaged: %v, next %q", err, all.Next)
	}
	var rows []map[string]any
	target := "/api/v1/reports/violations?limit=4"
	for pages := 0; ; pages++ {
		if pages > len(all.Rows) {
			t.Fatal("paging does not end")
		}
		r := get(t, s.Handler(), target, "")
		var b body
		if err := json.Unmarshal(r.body, &b); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, b.Rows...)
		if b.Next == "" {
			if l := r.header.Get("Link"); l != "" {
				t.Errorf("last page has Link %q", l)
			}
			break
		}
		link := r.header.Get("Link")
		want := "/api/v1/reports/violations?cursor=" + url.QueryEscape(b.Next) + "&limit=4"
		if link != "<"+want+`>; rel="next"` {
			t.Fatalf("Link = %q, want <%s>", link, want)
		}
		target = want
	}
	if !reflect.DeepEqual(rows, all.Rows) {
		t.Fatalf("pages hold %d rows, unpaged %d, or differ", len(rows), len(all.Rows))
	}
}

// TestTenant checks that a server answers for its own tenant only.
func TestTenant(t *testing.T) {
	a, _ := newServer(t, reporttest.TenantA)
	b, _ := newServer(t, reporttest.TenantB)
	target := "/api/v1/reports/adapter-retirement?max_calls=5"
	ra, rb := get(t, a.Handler(), target, ""), get(t, b.Handler(), target, "")
	golden(t, "adapter_retirement_globex.json", rb.body)
	sameRows(t, rb.body, "adapter_retirement_b")
	if string(ra.body) == string(rb.body) {
		t.Fatal("both tenants get the same answer")
	}
	c, _ := newServer(t, "nobody")
	r := get(t, c.Handler(), "/api/v1/reports/stale-usage", "")
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"rows":[]`) {
		t.Fatalf("unknown tenant: %d %s", r.status, r.body)
	}
}

func TestHealth(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	if r := get(t, s.Handler(), "/healthz", ""); r.status != 200 || string(r.body) != `{"status":"ok","version":"test"}`+"\n" {
		t.Errorf("healthz: %d %s", r.status, r.body)
	}
	if r := get(t, s.Handler(), "/readyz", ""); r.status != 200 || string(r.body) != `{"status":"ready"}`+"\n" {
		t.Errorf("readyz: %d %s", r.status, r.body)
	}
	r := get(t, s.Handler(), "/api/v2/nothing", "")
	if r.status != http.StatusNotFound || r.header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("unknown path: %d %s", r.status, r.body)
	}
}

// TestTextWidth: format=table&width=N fits every line of every text
// report within N columns, shortened digests and all; format=wide shows
// them whole.
func TestTextWidth(t *testing.T) {
	s, _ := newServer(t, reporttest.TenantA)
	digest := regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	for _, target := range []string{"/api/v1/tools?", "/api/v1/reports/stale-usage?", "/api/v1/reports/adapter-retirement?max_calls=5&",
		"/api/v1/reports/violations?", "/api/v1/audit/calls?run=legacy-run-1&"} {
		table := get(t, s.Handler(), target+"format=table&width=120", "")
		wide := get(t, s.Handler(), target+"format=wide&width=120", "")
		if table.status != http.StatusOK || wide.status != http.StatusOK || wide.header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Fatalf("%s: %d %s / %d %s", target, table.status, table.body, wide.status, wide.body)
		}
		for _, l := range strings.Split(string(table.body), "\n") {
			if n := utf8.RuneCountInString(l); n > 120 {
				t.Errorf("%swidth=120: a line of %d columns: %q", target, n, l)
			}
		}
		if digest.Match(table.body) {
			t.Errorf("%s: format=table shows a whole digest", target)
		}
		if !strings.Contains(target, "adapter-retirement") && !digest.Match(wide.body) {
			t.Errorf("%s: format=wide shows no whole digest:\n%s", target, wide.body)
		}
	}
}
