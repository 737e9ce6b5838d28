package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// httpGet returns the body the API answers for target.
func httpGet(t *testing.T, base, target string) string {
	t.Helper()
	resp, err := http.Get(base + target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v: %s", target, resp.StatusCode, err, b)
	}
	return string(b)
}

// TestReport prints each report through a real API on loopback and finds
// the API's own answer, in every format.
func TestReport(t *testing.T) {
	base, _ := fixtureAPI(t)
	cases := []struct {
		args   []string
		target string
	}{
		{[]string{"report", "adapter-retirement", "-max-calls", "5"}, "/api/v1/reports/adapter-retirement?max_calls=5&format=table"},
		{[]string{"report", "adapter-retirement", "--max-calls=5", "--format", "md"}, "/api/v1/reports/adapter-retirement?max_calls=5&format=md"},
		{[]string{"report", "stale-usage", "-format", "csv", "-environment", "prod"}, "/api/v1/reports/stale-usage?environment=prod&format=csv"},
		{[]string{"report", "tools"}, "/api/v1/tools?format=table"},
		{[]string{"report", "repairs", "-tool", "create_issue"}, "/api/v1/reports/repairs?tool=create_issue&format=table"},
		{[]string{"report", "rejections", "-from", "2099-03-14T00:00:00Z", "-to", "2099-03-15T00:00:00Z"}, "/api/v1/reports/rejections?from=2099-03-14T00:00:00Z&to=2099-03-15T00:00:00Z&format=table"},
		{[]string{"report", "propagation"}, "/api/v1/reports/propagation?format=table"},
		{[]string{"report", "violations", "-limit", "3"}, "/api/v1/reports/violations?limit=3&format=table"},
		{[]string{"report", "revision-sources", "-client", "cline", "-format", "csv"}, "/api/v1/reports/revision-sources?client=cline&format=csv"},
		{[]string{"report", "contract-errors", "-tool", "create_issue", "-format", "md"}, "/api/v1/reports/contract-errors?tool=create_issue&format=md"},
		{[]string{"report", "audit", "-run", "legacy-run-1", "-request-id", "acme-req-42", "-format", "md"}, "/api/v1/audit/calls?run=legacy-run-1&request_id=acme-req-42&format=md"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := mcpdrift(t, append(tc.args, "-api", base)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if want := httpGet(t, base, tc.target); out != want {
				t.Errorf("printed\n%s\nthe API answers\n%s", out, want)
			}
		})
	}
	goldenFile(t, "report_adapter_retirement.txt", func() string {
		_, out, _ := mcpdrift(t, "report", "adapter-retirement", "-max-calls", "5", "-api", base)
		return out
	}())

	// JSON is indented, and the excluded clients reach the report.
	code, out, errOut := mcpdrift(t, "report", "adapter-retirement", "-api", base, "-format", "json",
		"-max-calls", "5", "-exclude-client", "ci-runner")
	if code != 0 || !strings.HasPrefix(out, "{\n  \"report\": \"adapter-retirement\",") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	var body struct {
		Rows any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &body); err != nil {
		t.Fatal(err)
	}
	want := readJSON(t, filepath.Join("..", "..", "queries", "testdata", "golden", "adapter_retirement_a_exclude_ci.json"))
	if !reflect.DeepEqual(body.Rows, want) {
		t.Errorf("rows with -exclude-client ci-runner differ from the queries golden file")
	}
}

func readJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestReportErrors(t *testing.T) {
	base, fx := fixtureAPI(t)
	saved := defaultAPI
	defaultAPI = closedAddr(t)
	t.Cleanup(func() { defaultAPI = saved })
	t.Setenv("MCPDRIFT_API", "")
	os.Unsetenv("MCPDRIFT_API")

	cases := []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "name the report first"},
		{[]string{"report", "nope"}, `unknown report "nope"`},
		{[]string{"report", "stale-usage", "-max-calls", "5", "-api", base}, "report stale-usage does not take -max-calls"},
		{[]string{"report", "stale-usage", "-from", "yesterday", "-api", base}, `-from: invalid time "yesterday"`},
		{[]string{"report", "adapter-retirement", "-window", "0d", "-api", base}, "-window: invalid window"},
		{[]string{"report", "adapter-retirement", "-max-share", "150%", "-api", base}, "-max-share: invalid share"},
		{[]string{"report", "violations", "-cursor", "bogus", "-api", base}, "-cursor: invalid cursor"},
		{[]string{"report", "stale-usage", "-format", "xml", "-api", base}, "-format: unknown format"},
		{[]string{"report", "stale-usage", "extra", "-api", base}, "flags go after the report name"},
		{[]string{"report", "stale-usage", "-api", closedAddr(t)}, "connection refused"},
		// No -api, nothing at the default address: the data directory.
		{[]string{"report", "stale-usage", "-data.dir", t.TempDir()}, "holds no mcpdrift data"},
		{[]string{"report", "stale-usage", "-data.dir", fx.Dir}, "a server holds the data directory " + fx.Dir},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := mcpdrift(t, tc.args...)
			if code != 1 || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, tc.want)
			}
		})
	}
}

// TestReadmeReportExamples runs the report, gate and curl examples of the
// README's "Read what was stored" against a real API over the fixture, so
// that the documentation cannot drift from the commands.
func TestReadmeReportExamples(t *testing.T) {
	base, _ := fixtureAPI(t)
	readme := readFile(t, "../../README.md")
	start := strings.Index(readme, "## Read what was stored")
	end := strings.Index(readme[start:], "\n## ")
	section := readme[start : start+end]
	var ran int
	for _, line := range strings.Split(section, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "bin/mcpdrift "):
			args := append(strings.Fields(strings.TrimPrefix(line, "bin/mcpdrift ")), "-api", base)
			code, out, errOut := mcpdrift(t, args...)
			if code != 0 && !(args[0] == "gate" && code == 1) {
				t.Errorf("%s: exit %d: %s", line, code, errOut)
			}
			if out == "" {
				t.Errorf("%s printed nothing", line)
			}
			ran++
		case strings.HasPrefix(line, "curl -s 'http://127.0.0.1:8080/"):
			u := strings.Trim(strings.TrimPrefix(line, "curl -s "), "'")
			httpGet(t, base, strings.TrimPrefix(u, "http://127.0.0.1:8080"))
			ran++
		}
	}
	if ran < 5 {
		t.Errorf("found %d examples in the README section, want at least 5", ran)
	}
}
