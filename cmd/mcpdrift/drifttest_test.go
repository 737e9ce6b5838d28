package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/drifttest"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/testing/loopback"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// TestDrifttestErrors: what cannot run exits 2 with a message, before any
// call: a host not allowed, no -allow-host, bad flags, a server that does
// not answer.
func TestDrifttestErrors(t *testing.T) {
	old := "../../examples/driftserver/old.json"
	closed := "http://" + loopback.Addr(t) + "/mcp"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-server", "https://mcp.example.com/mcp", "-allow-host", "127.0.0.1,staging.example.com", old}, "mcp.example.com is not among the allowed hosts"},
		{[]string{"-server", "http://127.0.0.1:3001/mcp", old}, "no -allow-host given"},
		{[]string{"-server", "ftp://127.0.0.1/mcp", "-allow-host", "127.0.0.1", old}, "not an http or https URL"},
		{[]string{old}, "no server"},
		{[]string{"-server", closed, "-server-cmd", "x", "-allow-host", "127.0.0.1", old}, "name one"},
		{[]string{"-server", closed, "-allow-host", "127.0.0.1", "-format", "yaml", old}, "-format"},
		{[]string{"-server", closed, "-allow-host", "127.0.0.1", old, old}, "want one old list"},
		{[]string{"-server", closed, "-allow-host", "127.0.0.1", "-max-calls", "0", old}, "at least 1"},
		{[]string{"-server", closed, "-allow-host", "127.0.0.1", "-deployed", "-service", "driftserver", old}, "-deployed takes the old list from the registry, and ../../examples/driftserver/old.json names one too"},
		{[]string{"-server", closed, "-allow-host", "127.0.0.1", "-deployed"}, "-deployed needs -service"},
		{[]string{"-server", closed, "-allow-host", "127.0.0.1", "-environment", "prod", old}, "give -deployed with them"},
		{[]string{"-server", closed, "-allow-host", "127.0.0.1"}, "want one old list"},
		{[]string{"-server", "https://mcp.example.com/mcp", "-allow-host", "127.0.0.1", "-deployed", "-service", "driftserver", "-api", closed}, "mcp.example.com is not among the allowed hosts"},
		{[]string{"-server", closed, "-allow-host", "127.0.0.1", old}, "cannot connect"},
	} {
		code, out, errOut := mcpdrift(t, append([]string{"drifttest"}, tc.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("drifttest %v: exit %d, stdout %q, stderr %q: want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestDrifttestDryRunJSON: a dry run over stdio prints the planned calls
// as JSON, unanswered, and exits 0.
func TestDrifttestDryRunJSON(t *testing.T) {
	server := filepath.Join(t.TempDir(), "driftserver")
	build(t, server, "../../examples/driftserver")
	code, out, errOut := mcpdrift(t, "drifttest", "-dry-run", "-format", "json", "-max-calls", "2",
		"-server-cmd", server+" -release 2", "../../examples/driftserver/old.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r drifttest.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !r.DryRun || len(r.Results) != 8 || r.Results[0].Answer != nil || r.Results[0].Pass != drifttest.PassDeclared ||
		r.Results[1].Pass != drifttest.PassStock || len(r.Unchanged) != 1 {
		t.Fatalf("dry run report: %s", out)
	}
}

// TestDrifttestAudit runs the drift test with -mcpdrift against a real
// `mcpdrift serve` that the example server sends its drift events to:
// every call of both passes is found in the audit (over HTTP each stock
// session has an id), the seed's server still passes, and the adapter
// that drops labels, invisible in the answers, fails on exactly the calls
// that sent labels.
func TestDrifttestAudit(t *testing.T) {
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	bin := t.TempDir()
	build(t, filepath.Join(bin, "mcpdrift"), ".")
	build(t, filepath.Join(bin, "driftserver"), "../../examples/driftserver")
	srv := startServe(t, filepath.Join(bin, "mcpdrift"), t.TempDir())

	for _, tc := range []struct {
		fault string
		code  int
		want  []string // the failures, "tool pass arguments verdict"
	}{
		{"", 0, nil},
		{"drops-field", 1, []string{
			`create_issue declared {"labels":[],"title":"a"} adapter_dropped_field`,
			`create_issue stock {"labels":[],"title":"a"} adapter_dropped_field`,
			`create_issue declared {"labels":["a"],"title":"a"} adapter_dropped_field`,
			`create_issue stock {"labels":["a"],"title":"a"} adapter_dropped_field`,
		}},
	} {
		t.Run("fault="+tc.fault, func(t *testing.T) {
			endpoint := startDriftserver(t, filepath.Join(bin, "driftserver"), srv.grpc, tc.fault)
			code, stdout, stderr := mcpdrift(t, "drifttest", "-server", endpoint, "-allow-host", "127.0.0.1",
				"-mcpdrift", "http://"+srv.api, "-format", "json", "../../examples/driftserver/old.json")
			var r drifttest.Report
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatalf("exit %d: %v: %s%s", code, err, stdout, stderr)
			}
			var failures []string
			for _, res := range r.Results {
				if res.Confirmed == nil || !res.Confirmed.Found {
					t.Errorf("%s %s %s: no call event found", res.Tool, res.Pass, res.Arguments)
				}
				if !res.Verdict.Pass() {
					failures = append(failures, fmt.Sprintf("%s %s %s %s", res.Tool, res.Pass, compact(res.Arguments), res.Verdict))
				}
			}
			if code != tc.code || !r.Audited || len(r.Results) != 24 || !reflect.DeepEqual(failures, tc.want) {
				t.Fatalf("exit %d, audited %v, %d results, failures:\n%s\nwant exit %d, 24 results, failures:\n%s",
					code, r.Audited, len(r.Results), strings.Join(failures, "\n"), tc.code, strings.Join(tc.want, "\n"))
			}
		})
	}

	// -audit: an agent's call planned with revision 1, its title holding
	// an AWS access key, is sampled from the audit and sent again as
	// stored: the key redacted, the labels kept.
	t.Run("audit", func(t *testing.T) {
		endpoint := startDriftserver(t, filepath.Join(bin, "driftserver"), srv.grpc, "")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		agent := mcp.NewClient(&mcp.Implementation{Name: "release-agent", Version: "1.4.0"}, nil)
		cs, err := agent.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		const secret = "AKIAIOSFODNN7EXAMPLE"
		// The agent also deploys once through deploy_preview-1-to-2: the
		// caller the reverse run below finds.
		for _, call := range []*mcp.CallToolParams{
			{Name: "create_issue", Meta: mcp.Meta{"dev.mcpdrift/revision": "1"},
				Arguments: map[string]any{"title": "rotate " + secret, "labels": []string{"ops"}}},
			{Name: "deploy_preview", Meta: mcp.Meta{"dev.mcpdrift/revision": "1"}, Arguments: map[string]any{"branch": "fix-login"}},
		} {
			if res, err := cs.CallTool(ctx, call); err != nil || res.IsError {
				t.Fatalf("the agent's %s call: %v %+v", call.Name, err, res)
			}
		}
		cs.Close()
		api := &apiclient.Client{BaseURL: "http://" + srv.api}
		for stored := false; !stored; {
			var body apiv1.ReportBody[apiv1.AuditRow]
			if err := api.GetJSON(ctx, "/api/v1/audit/calls", url.Values{"client": {"release-agent"}}, &body); err != nil {
				t.Fatal(err)
			}
			stored = len(body.Rows) == 2
			if !stored {
				select {
				case <-ctx.Done():
					t.Fatal("the agent's call was not stored within a minute")
				case <-time.After(200 * time.Millisecond):
				}
			}
		}

		code, stdout, stderr := mcpdrift(t, "drifttest", "-server", endpoint, "-allow-host", "127.0.0.1",
			"-mcpdrift", "http://"+srv.api, "-audit", "-format", "json", "../../examples/driftserver/old.json")
		var r drifttest.Report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil || code != 0 {
			t.Fatalf("exit %d: %v: %s%s", code, err, stdout, stderr)
		}
		if strings.Contains(stdout, secret) {
			t.Fatalf("the report holds the secret the audit redacted:\n%s", stdout)
		}
		var recorded []drifttest.Result
		for _, res := range r.Results {
			if res.Kind == drifttest.KindRecorded {
				recorded = append(recorded, res)
			}
		}
		if len(recorded) != 4 || recorded[0].Tool != "create_issue" || recorded[2].Tool != "deploy_preview" ||
			compact(recorded[2].Arguments) != `{"branch":"fix-login"}` || recorded[2].Redacted || recorded[2].Verdict != drifttest.VerdictNormalized {
			t.Fatalf("%d recorded calls, want the agent's two, each in both passes: %s", len(recorded), stdout)
		}
		for _, res := range recorded[:2] {
			var args struct {
				Title  string   `json:"title"`
				Labels []string `json:"labels"`
			}
			_ = json.Unmarshal(res.Arguments, &args)
			if res.Tool != "create_issue" || !res.Redacted || !strings.HasPrefix(args.Title, "rotate [REDACTED:hmac:") ||
				!reflect.DeepEqual(args.Labels, []string{"ops"}) || res.Verdict != drifttest.VerdictNormalized {
				t.Errorf("recorded call %s %s: %s, redacted %v, %s", res.Tool, res.Pass, res.Arguments, res.Redacted, res.Verdict)
			}
		}
	})

	// -reverse: the calls deploy_preview-1-to-2 serves, sent to the build
	// that retires it, are rejected cleanly; who would be hit is the
	// agent's one call above, drifttest's own 18 through the adapter (3
	// argument objects, 2 passes, 3 runs) left out. Sent to a build that
	// still has it, each call fails as adapter_still_present.
	t.Run("reverse", func(t *testing.T) {
		const adapter = "deploy_preview-1-to-2"
		retired := startDriftserver(t, filepath.Join(bin, "driftserver"), srv.grpc, "", "-retire", adapter)
		args := []string{"drifttest", "-allow-host", "127.0.0.1", "-mcpdrift", "http://" + srv.api, "-reverse", adapter}
		code, stdout, stderr := mcpdrift(t, append(args, "-server", retired, "-format", "json", "../../examples/driftserver/old.json")...)
		var r drifttest.Report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil || code != 0 {
			t.Fatalf("exit %d: %v: %s%s", code, err, stdout, stderr)
		}
		if r.Reverse == nil || r.Reverse.Adapter.AdapterID != adapter || r.Reverse.Adapter.Calls != 1 || r.Reverse.Adapter.Clients != 1 || len(r.Results) != 6 {
			t.Fatalf("reverse %+v, %d results: want %s with the agent's 1 call, 6 results", r.Reverse, len(r.Results), adapter)
		}
		for _, res := range r.Results {
			if res.Tool != "deploy_preview" || res.Verdict != drifttest.VerdictRejected || res.Answer.Structured["error_code"] != "STALE_TOOL_SCHEMA" {
				t.Errorf("%s %s %s: %s %v", res.Tool, res.Pass, res.Arguments, res.Verdict, res.Answer.Structured)
			}
		}

		code, stdout, stderr = mcpdrift(t, append(args, "-server", startDriftserver(t, filepath.Join(bin, "driftserver"), srv.grpc, ""),
			"../../examples/driftserver/old.json")...)
		if code != 1 || strings.Count(stdout, "❌ adapter_still_present") != 6 ||
			!strings.Contains(stdout, "#### Who would be hit, weighed by usage as `mcpdrift gate` weighs it") ||
			!strings.Contains(stdout, "#### ❌ Adapter `deploy_preview-1-to-2` cannot be retired yet") ||
			!strings.Contains(stdout, "| `release-agent@1.4.0` | 1 |") || strings.Contains(stdout, "| `mcpdrift-drifttest@") {
			t.Fatalf("against the build that keeps the adapter: exit %d, want 1, 6 calls adapter_still_present and the gate:\n%s%s", code, stdout, stderr)
		}
	})
}

// TestDrifttestDeployed takes the old list from the registry of a real
// `mcpdrift serve`: release 1 of the example server advertises its tools
// there from prod, and the drift test of release 2 (in staging) with
// -deployed -service driftserver -environment prod gives, call for call,
// the verdicts and the comment of the test with old.json, the comment
// under a line that says where the list came from. Without -environment,
// for a service the registry does not know, and for one mid-deploy, it
// exits 2, and no request reaches the server under test. A list deployed
// with a cache hint has it named in the revisions and in the reasons of
// the release check's verdicts against it.
func TestDrifttestDeployed(t *testing.T) {
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	bin := t.TempDir()
	build(t, filepath.Join(bin, "mcpdrift"), ".")
	driftserver := filepath.Join(bin, "driftserver")
	build(t, driftserver, "../../examples/driftserver")
	srv := startServe(t, filepath.Join(bin, "mcpdrift"), t.TempDir(), "-api.drifttest.allow-host", "127.0.0.1")
	api := "http://" + srv.api

	startDriftserver(t, driftserver, srv.grpc, "", "-release", "1", "-environment", "prod")
	waitDeployed(t, api, "prod", func(d registry.Deployed) bool {
		return revisionsOf(t, d) == "close_ticket@1 create_issue@1 delete_branch@1 deploy_preview@1 search_docs@1"
	})
	staging := startDriftserver(t, driftserver, srv.grpc, "", "-environment", "staging")
	waitDeployed(t, api, "staging", func(d registry.Deployed) bool {
		return revisionsOf(t, d) == "close_ticket@2 create_issue@2 deploy_preview@2 search_docs@1"
	})

	send := func(args ...string) (int, string, string) {
		t.Helper()
		return mcpdrift(t, append([]string{"drifttest", "-server", staging, "-allow-host", "127.0.0.1"}, args...)...)
	}
	deployed := []string{"-deployed", "-service", "driftserver", "-environment", "prod", "-api", api}
	verdicts := func(out string) ([]string, *drifttest.Report) {
		t.Helper()
		var r drifttest.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		var v []string
		for _, res := range r.Results {
			v = append(v, fmt.Sprintf("%s %s %s %s %s→%s %s", res.Tool, res.Pass, res.Kind, compact(res.Arguments), res.OldRevision, res.NewRevision, res.Verdict))
		}
		return v, &r
	}
	code, fileOut, stderr := send("-format", "json", "../../examples/driftserver/old.json")
	if code != 0 {
		t.Fatalf("drifttest old.json: exit %d: %s%s", code, fileOut, stderr)
	}
	want, _ := verdicts(fileOut)
	code, out, stderr := send(append(deployed, "-format", "json")...)
	got, r := verdicts(out)
	if code != 0 || len(got) != 24 || !reflect.DeepEqual(got, want) {
		t.Fatalf("drifttest -deployed: exit %d, %d results:\n%s\nwant exit 0 and those of old.json:\n%s\n%s",
			code, len(got), strings.Join(got, "\n"), strings.Join(want, "\n"), stderr)
	}
	if r.Deployed == nil || r.Deployed.Service != "driftserver" || r.Deployed.Environment != "prod" || !reflect.DeepEqual(r.Unchanged, []string{"search_docs"}) {
		t.Errorf("deployed %+v, unchanged %v", r.Deployed, r.Unchanged)
	}
	code, fileMD, _ := send("../../examples/driftserver/old.json")
	_, md, stderr := send(deployed...)
	if code != 0 || !strings.HasPrefix(md, "Old list: what `driftserver` advertises now in `prod` (registry of advertised definitions") ||
		!strings.HasSuffix(md, "\n\n"+fileMD) {
		t.Errorf("the comment of -deployed:\n%s%s\nwant a line on the list, then that of old.json (exit %d):\n%s", md, stderr, code, fileMD)
	}
	// POST /api/v1/drifttest of serve gives the verdicts and the comment
	// of the CLI, the old list inline or from the registry.
	oldJSON, err := os.ReadFile("../../examples/driftserver/old.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		wantMD string
	}{
		{"old", map[string]any{"server": staging, "old": json.RawMessage(oldJSON)}, fileMD},
		{"deployed", map[string]any{"server": staging, "deployed": map[string]any{"service": "driftserver", "environment": "prod"}}, md},
	} {
		status, out := postDriftTest(t, api, tc.body, "application/json")
		var b struct {
			Pass     bool             `json:"pass"`
			Failures int              `json:"failures"`
			Report   drifttest.Report `json:"report"`
		}
		if err := json.Unmarshal(out, &b); status != http.StatusOK || err != nil {
			t.Fatalf("POST /api/v1/drifttest %s: %d %s", tc.name, status, out)
		}
		report, _ := json.Marshal(b.Report)
		if got, _ := verdicts(string(report)); !b.Pass || b.Failures != 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("POST /api/v1/drifttest %s: pass %v, %d failures:\n%s\nwant those of the CLI:\n%s", tc.name, b.Pass, b.Failures,
				strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if status, out := postDriftTest(t, api, tc.body, "text/markdown"); status != http.StatusOK || string(out) != tc.wantMD {
			t.Errorf("POST /api/v1/drifttest %s as Markdown: %d\n%s\nwant the CLI's:\n%s", tc.name, status, out, tc.wantMD)
		}
	}

	// Without -api, the registry is -mcpdrift's.
	if code, out, stderr := send("-deployed", "-service", "driftserver", "-environment", "prod", "-mcpdrift", api, "-dry-run"); code != 0 ||
		!strings.Contains(out, "### Drift test (dry run): 24 calls to 4 tools") {
		t.Errorf("-deployed -mcpdrift -dry-run: exit %d:\n%s%s", code, out, stderr)
	}

	// A tripwire on loopback stands for the server under test in the
	// failures: any request to it is a call sent.
	var requests atomic.Int64
	tripwire := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "no call may reach the server", http.StatusTeapot)
	}))
	defer tripwire.Close()
	startDriftserver(t, driftserver, srv.grpc, "", "-release", "1", "-environment", "eu")
	waitDeployed(t, api, "eu", func(d registry.Deployed) bool { return len(revisionsOf(t, d)) > 0 })
	startDriftserver(t, driftserver, srv.grpc, "", "-environment", "eu")
	waitDeployed(t, api, "eu", func(d registry.Deployed) bool { return len(d.MidDeploy) == 3 })
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-deployed", "-service", "nobody", "-api", api},
			`-service: service "nobody" has advertised no tool definition (dev.mcpdrift.advertised) in the registry`},
		{[]string{"-deployed", "-service", "driftserver", "-environment", "qa", "-api", api},
			`-service: service "driftserver" has advertised no tool definition (dev.mcpdrift.advertised) in environment "qa" in the registry`},
		{[]string{"-deployed", "-service", "driftserver", "-api", api},
			`-environment: service "driftserver" advertises in 3 environments (eu, prod, staging): choose one`},
		{[]string{"-deployed", "-service", "driftserver", "-environment", "eu", "-api", api},
			`service "driftserver" is mid-deploy in environment "eu": its instances advertise close_ticket under 1 and 2, create_issue under 1 and 2, deploy_preview under 1 and 2 at once`},
		{[]string{"-deployed", "-service", "driftserver", "-environment", "prod", "-api", api, "../../examples/driftserver/old.json"},
			"give one of them"},
	} {
		code, out, stderr := mcpdrift(t, append([]string{"drifttest", "-server", tripwire.URL + "/mcp", "-allow-host", "127.0.0.1"}, tc.args...)...)
		if code != 2 || out != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("drifttest %v: exit %d, stdout %q, stderr %q: want 2 and %q", tc.args, code, out, stderr, tc.want)
		}
	}
	status, body := postDriftTest(t, api, map[string]any{"server": tripwire.URL + "/mcp",
		"deployed": map[string]any{"service": "driftserver", "environment": "eu"}}, "application/json")
	if status != http.StatusBadRequest || !strings.Contains(string(body), `service \"driftserver\" is mid-deploy in environment \"eu\"`) {
		t.Errorf("POST /api/v1/drifttest mid-deploy: %d %s, want 400 naming the deploy", status, body)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the server under test in runs that exited 2", n)
	}

	// A deployed list that carries a cache hint: release 1 with -list-ttl
	// 48h -list-cache-scope shared, in environment hinted. The registry's
	// revisions name the hint, and the release check of release 2 (the
	// staging server) against that list names it, with the figure, in
	// the reason of each change that is not safe on its own: the three
	// changed tools and the removed one. No call was planned in hinted,
	// so the weighed check finds the bounded migrations and the removal
	// safe; close_ticket's semantic change stays a violation.
	startDriftserver(t, driftserver, srv.grpc, "", "-release", "1", "-environment", "hinted", "-list-ttl", "48h", "-list-cache-scope", "shared")
	waitDeployed(t, api, "hinted", func(d registry.Deployed) bool {
		return revisionsOf(t, d) == "close_ticket@1 create_issue@1 delete_branch@1 deploy_preview@1 search_docs@1"
	})
	if code, out, stderr := mcpdrift(t, "revisions", "-api", api, "-service", "driftserver", "-environment", "hinted", "deploy_preview"); code != 0 ||
		!regexp.MustCompile(`(?m)^1 +declared +\S+ \S+ +\S+ \S+ +\d+ +48h shared +- +-$`).MatchString(out) {
		t.Errorf("revisions of the hinted list: exit %d, want revision 1 with LIST TTL 48h shared:\n%s%s", code, out, stderr)
	}
	code, out, stderr = mcpdrift(t, "check", "-deployed", "-service", "driftserver", "-environment", "hinted", "-api", api, "-server", staging, "-format", "json")
	var check apiclient.CheckBody
	if err := json.Unmarshal([]byte(out), &check); code != 1 || err != nil {
		t.Fatalf("check against the hinted list: exit %d, %v: %s%s", code, err, out, stderr)
	}
	const hint = "clients may keep the old list for up to 48h without listing again (ttlMs 172800000, cacheScope shared)"
	named := map[string]string{}
	for _, c := range check.Tools {
		named[c.Tool] = fmt.Sprintf("%s %v", c.Verdict, strings.Contains(c.Reason, hint))
	}
	if want := map[string]string{"close_ticket": "violation true", "create_issue": "safe true", "delete_branch": "safe true",
		"deploy_preview": "safe true", "search_docs": "safe false"}; !reflect.DeepEqual(named, want) {
		t.Errorf("verdicts and hints against the hinted list %v, want %v", named, want)
	}
	if check.OldCache == nil || check.OldCache.TTLMs != 172800000 || check.OldCache.Scope != "shared" {
		t.Errorf("old_cache %+v, want 172800000 shared", check.OldCache)
	}
	// The drift test against the hinted list: the verdicts of old.json,
	// each reason naming the hint with the check's words and figures.
	code, out, stderr = send("-deployed", "-service", "driftserver", "-environment", "hinted", "-api", api, "-format", "json")
	got, r = verdicts(out)
	if code != 0 || !reflect.DeepEqual(got, want) || r.OldCache == nil || r.OldCache.TTLMs != 172800000 || r.OldCache.Scope != "shared" {
		t.Fatalf("drifttest -deployed hinted: exit %d, old_cache %+v, results:\n%s\nwant exit 0, 172800000 shared and those of old.json%s",
			code, r.OldCache, strings.Join(got, "\n"), stderr)
	}
	for _, res := range r.Results {
		if !strings.HasSuffix(res.Reason, "; "+hint) {
			t.Errorf("drifttest -deployed hinted: %s %s reason %q, want it to end with the hint", res.Tool, res.Pass, res.Reason)
		}
	}
}

// postDriftTest posts body to the drift test endpoint of the API at base,
// accepting accept, and returns the status and the body.
func postDriftTest(t *testing.T, base string, body map[string]any, accept string) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/drifttest", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// waitDeployed polls GET /api/v1/deployed for driftserver in environment
// env until done accepts the answer, for at most a minute.
func waitDeployed(t *testing.T, api, env string, done func(registry.Deployed) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &apiclient.Client{BaseURL: api}
	var d registry.Deployed
	for {
		b, err := c.Get(ctx, "/api/v1/deployed", url.Values{"service": {"driftserver"}, "environment": {env}})
		if err == nil {
			d = registry.Deployed{}
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			if done(d) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("driftserver's advertisements in %s: %+v (%v) after a minute", env, d, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// revisionsOf lists the tools of a deployed list as tool@revision.
func revisionsOf(t *testing.T, d registry.Deployed) string {
	t.Helper()
	if len(d.List) == 0 {
		return ""
	}
	l, err := toolchange.Decode(d.List)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range l.Tools {
		out = append(out, tool.Name+"@"+tool.Revision)
	}
	return strings.Join(out, " ")
}

// startDriftserver starts the example server over HTTP on loopback,
// sending its drift events to grpc, and returns its endpoint.
func startDriftserver(t *testing.T, bin, grpc, fault string, extra ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-release", "2", "-fault", fault, "-listen", "127.0.0.1:0", "-otlp", grpc}, extra...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(strings.TrimSpace(line), "serving ")
}

// compact writes JSON without spaces.
func compact(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
