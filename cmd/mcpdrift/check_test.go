package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

// seedCase returns the old and new tools/list files of one of the seed's
// examples (internal/toolchange/testdata/seed).
func seedCase(name string) (string, string) {
	dir := filepath.Join("..", "..", "internal", "toolchange", "testdata", "seed", name)
	return filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")
}

// TestCheck runs the release check on the seed's examples from files and
// checks each exit code and comment.
func TestCheck(t *testing.T) {
	cases := []struct {
		seed string
		args []string
		code int
		want []string
	}{
		{"deploy_preview_label", nil, 0, []string{"### ✅ Release check: every change is safe", "| `deploy_preview` | changed | additive | yes | ✅ safe |"}},
		{"deploy_preview_region", nil, 1, []string{"### ⚠️ Release check: the change needs a decision", "required `region` was added without a default",
			"`{\"branch\":\"a\"}` passes the old input schema and the new one rejects it (at /: missing property 'region')"}},
		{"project_meaning", nil, 1, []string{"### ❌ Release check: the change breaks the seed's rule", "a semantic change keeps the name `archive_project`"}},
		{"run_report_target", nil, 1, []string{"`team` became `target`", "publish the new meaning under a new tool name"}},
		{"create_issue_issueId", nil, 1, []string{"`issue.id` became `issue.issueId`", "add before renaming or removing"}},
		{"removal", nil, 1, []string{"| `delete_branch` | removed | removal | — | ⚠️ needs a decision |", "Unchanged: `get_status`."}},
		// With environment no longer an authority field, adding it
		// optionally is additive.
		{"deploy_preview_environment", []string{"-authority-fields", "host,user"}, 0, []string{"optional `environment` was added"}},
		{"deploy_preview_environment", nil, 1, []string{"optional `environment` was added: it can widen or redirect"}},
	}
	for _, tc := range cases {
		t.Run(tc.seed+strings.Join(tc.args, " "), func(t *testing.T) {
			old, new := seedCase(tc.seed)
			code, out, errOut := mcpdrift(t, append(append([]string{"check"}, tc.args...), old, new)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the comment lacks %q:\n%s", w, out)
				}
			}
		})
	}

	old, new := seedCase("run_report_target")
	code, out, errOut := mcpdrift(t, "check", old, "-format", "json", new)
	if code != 1 {
		t.Fatalf("json: exit %d: %s", code, errOut)
	}
	var r toolchange.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Tools) != 1 || r.Tools[0].Class != "semantic" || r.Tools[0].Verdict != toolchange.VerdictViolation {
		t.Errorf("json report %+v", r)
	}
}

// serveTools serves the tools of a tools/list file from an MCP server built
// with the official Go SDK, over streamable HTTP on loopback.
func serveTools(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Result struct {
			Tools []*mcp.Tool `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Result.Tools) == 0 {
		t.Fatalf("%s holds no JSON-RPC response with tools", path)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "deploy", Version: "2.0.0"}, nil)
	for _, tl := range doc.Result.Tools {
		srv.AddTool(tl, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestCheckServer checks a change against a live MCP server end to end:
// the server advertises the new list, the old one is a file.
func TestCheckServer(t *testing.T) {
	old, new := seedCase("deploy_preview_region")
	url := serveTools(t, new)
	code, live, errOut := mcpdrift(t, "check", "-server", url, old)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s%s", code, live, errOut)
	}
	_, fromFile, _ := mcpdrift(t, "check", old, new)
	if live != fromFile {
		t.Errorf("the live server's check differs from the file's:\n%s\nwant:\n%s", live, fromFile)
	}

	code, _, errOut = mcpdrift(t, "check", "-server", closedAddr(t), old)
	if code != 2 || !strings.Contains(errOut, "cannot connect to the MCP server") {
		t.Errorf("unreachable server: exit %d, %s", code, errOut)
	}
}

func TestCheckErrors(t *testing.T) {
	old, new := seedCase("removal")
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"tools":[{"name":"a"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"check"}, "want: mcpdrift check old.json new.json"},
		{[]string{"check", old}, "want: mcpdrift check old.json new.json"},
		{[]string{"check", old, new, new}, "want: mcpdrift check old.json new.json"},
		{[]string{"check", "-server", "http://127.0.0.1:1", old, new}, "with -server, name only the old list"},
		{[]string{"check", old, bad}, `bad.json: invalid tools/list: tool 0: tool "a": no inputSchema`},
		{[]string{"check", old, filepath.Join(t.TempDir(), "none.json")}, "no such file"},
		{[]string{"check", "-format", "csv", old, new}, "-format: want md or json"},
		{[]string{"check", "-bogus", old, new}, "flag provided but not defined: -bogus"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := mcpdrift(t, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q: want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

// TestCheckWeighed runs the README's example change against a real API over
// the report fixture: the comment weighs each change by the calls still
// planned with its old revision (figures counted by hand in
// internal/api's TestCheckWeighed).
func TestCheckWeighed(t *testing.T) {
	base, _ := fixtureAPI(t)
	old, new := "../../examples/tools-list/old.json", "../../examples/tools-list/new.json"
	code, out, errOut := mcpdrift(t, "check", "-api", base, "-window", "7d", old, new)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s%s", code, out, errOut)
	}
	for _, w := range []string{
		"Weighed by the calls from 2099-03-09 12:00:00Z to 2099-03-16 12:00:00Z.",
		"**What the rollout would do:** 107 calls in 7d from 2 clients (`cursor@0.48.0` 93, `claude-desktop@1.2.0` 14) planned with revision `2`; they send no `region`; with `region` required and no adapter they will be rejected",
		"| `cursor@0.48.0` | 93 | 75m | write |",
		"- 42 more calls were planned with older revisions (`1`).",
		"**1 rejected call had already started its side effect**",
		"**2 automatic retries crossed a semantic or authority change**",
		"earlier list_changed notices reached 5 sessions: 4 refreshed",
		"; 5 calls in the last 7d did not say which revision they were planned with (unknown, not assumed safe).",
		"2 more calls from 1 client (`goose@1.0.0` 2) did not say which revision they were planned with: after the rollout they will fail with TOOL_REMOVED whatever they planned with.",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("the comment lacks %q:\n%s", w, out)
		}
	}
	goldenFile(t, "check_weighed.md", out)

	// Over the last half hour nobody planned with an old revision: the
	// bounded migration and the removal are safe, the renamed result
	// field still breaks the seed's rule.
	code, out, _ = mcpdrift(t, "check", old, new, "-window", "30m", "-api", base)
	if code != 1 || !strings.Contains(out, "| `deploy_preview` | changed | bounded migration | no | ✅ safe |") ||
		!strings.Contains(out, "| `create_issue` | changed | semantic | yes | ❌ violation |") {
		t.Errorf("30m: exit %d:\n%s", code, out)
	}
	code, _, errOut = mcpdrift(t, "check", old, new, "-window", "0d", "-api", base)
	if code != 2 || !strings.Contains(errOut, "-window: invalid window") {
		t.Errorf("bad window: exit %d, %s", code, errOut)
	}
	code, _, errOut = mcpdrift(t, "check", old, new, "-unknown-callers", "maybe", "-api", base)
	if code != 2 || !strings.Contains(errOut, "-unknown-callers: want at_risk or safe") {
		t.Errorf("bad -unknown-callers: exit %d, %s", code, errOut)
	}
}

// TestCheckUnknownCallers removes delete_branch alone and weighs the
// removal by the last half hour, when its only calls are goose@1.0.0's 2,
// which did not say which revision they were planned with: unknown is not
// safe (exit 1) unless judged so as asked (exit 0).
func TestCheckUnknownCallers(t *testing.T) {
	base, _ := fixtureAPI(t)
	old := "../../examples/tools-list/old.json"
	var doc struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal([]byte(readFile(t, old)), &doc); err != nil {
		t.Fatal(err)
	}
	var kept []map[string]any
	for _, tl := range doc.Tools {
		if tl["name"] != "delete_branch" {
			kept = append(kept, tl)
		}
	}
	b, err := json.Marshal(map[string]any{"tools": kept})
	if err != nil {
		t.Fatal(err)
	}
	new := filepath.Join(t.TempDir(), "new.json")
	if err := os.WriteFile(new, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{nil, 1, []string{"### ⚠️ Release check: the change needs a decision",
			"| `delete_branch` | removed | removal | — | ⚠️ needs a decision |",
			"**Why:** removed, with no similar new tool; 2 calls in the last 30m did not say which revision they were planned with (unknown, not assumed safe), and none said revision `4` or an older one.",
			"no call in the last 30m was planned with revision `4`; 2 calls from 1 client (`goose@1.0.0` 2) did not say which revision they were planned with: after the rollout they will fail with TOOL_REMOVED whatever they planned with"}},
		{[]string{"-unknown-callers", "safe"}, 0, []string{"### ✅ Release check: every change is safe",
			"Calls that did not say which revision they were planned with are judged safe, as asked.",
			"the 2 calls that did not say which revision they were planned with were judged safe as asked"}},
		{[]string{"-unknown-callers", "at_risk"}, 1, []string{"(unknown, not assumed safe)"}},
		// Without goose, nobody called delete_branch in the half hour.
		{[]string{"-exclude-client", "goose"}, 0, []string{"but no call in the last 30m was planned with revision `4` or an older one"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"check", "-api", base, "-window", "30m"}, tc.args...)
			code, out, errOut := mcpdrift(t, append(args, old, new)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the comment lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestReadmeCheckExamples runs the check lines of the README's section on
// the release check: against a real API over the fixture, and for the
// pipeline line against a real MCP server serving the example's new list.
func TestReadmeCheckExamples(t *testing.T) {
	base, _ := fixtureAPI(t)
	mcpURL := serveTools(t, "../../examples/tools-list/new.json")
	readme := readFile(t, "../../README.md")
	start := strings.Index(readme, "## Check a tools/list change before the deploy")
	if start < 0 {
		t.Fatal("README.md has no section on the release check")
	}
	end := strings.Index(readme[start+3:], "\n## ")
	section := readme[start : start+3+end]
	var outputs []string
	revisions := 0
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "bin/mcpdrift revisions ") {
			// The fixture's registry: deploy_preview 1, then 2 for 10 minutes alongside it.
			code, out, errOut := mcpdrift(t, strings.Fields(strings.ReplaceAll(strings.TrimPrefix(line, "bin/mcpdrift "), "http://127.0.0.1:8080", base))...)
			if code != 0 || !strings.Contains(out, "deploy_preview — service deployer, environment prod") || !strings.Contains(out, "10m") {
				t.Errorf("%s: exit %d:\n%s%s", line, code, out, errOut)
			}
			revisions++
			continue
		}
		if !strings.HasPrefix(line, "bin/mcpdrift check ") {
			continue
		}
		cmdline, _, _ := strings.Cut(strings.TrimPrefix(line, "bin/mcpdrift "), " >")
		var args []string
		for _, a := range strings.Fields(cmdline) {
			switch {
			case a == "http://127.0.0.1:8080" || a == `"$MCPDRIFT_API"`:
				a = base
			case a == "http://127.0.0.1:3000/mcp":
				a = mcpURL
			case a == "tools-list.json":
				a = "../../examples/tools-list/old.json"
			case strings.HasPrefix(a, "examples/"):
				a = "../../" + a
			}
			args = append(args, a)
		}
		code, out, errOut := mcpdrift(t, args...)
		if code != 1 || !strings.Contains(out, "107 calls in 14d from 2 clients") {
			t.Errorf("%s: exit %d, want 1 and the weighed comment:\n%s%s", line, code, out, errOut)
		}
		if strings.Contains(line, "-deployed") {
			// The old list is the registry's: deploy_preview 2 and
			// delete_branch 4, what the deployer advertises now.
			if !strings.HasPrefix(out, "Old list: what `deployer` advertises now in `prod`") {
				t.Errorf("%s: the comment does not say where its old list came from:\n%s", line, out)
			}
			goldenFile(t, "check_deployed.md", out)
			continue
		}
		outputs = append(outputs, out)
	}
	if len(outputs) != 2 || revisions != 1 {
		t.Fatalf("found %d check lines and %d revisions lines in the README section, want 2 and 1", len(outputs), revisions)
	}
	if outputs[0] != outputs[1] {
		t.Errorf("the live server's check differs from the files':\n%s\nwant:\n%s", outputs[1], outputs[0])
	}
}
