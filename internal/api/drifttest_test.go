package api_test

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

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/drifttest"
	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

// oldList is the list agents planned with against the example server:
// its release 1.
const oldList = "../../examples/driftserver/old.json"

// startDriftserver builds examples/driftserver into a directory of the
// test and serves it over streamable HTTP on loopback with args (release
// 2 unless they say otherwise); it returns the endpoint.
func startDriftserver(t *testing.T, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "driftserver")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/driftserver").CombinedOutput(); err != nil {
		t.Fatalf("cannot build the example server: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"-release", "2", "-listen", "127.0.0.1:0"}, args...)...)
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
		t.Fatalf("the example server printed no endpoint: %v", err)
	}
	return strings.TrimPrefix(strings.TrimSpace(line), "serving ")
}

// tripwire is an HTTP server on loopback that stands for a server under
// test that nothing may reach: it counts the requests that do, and
// answers each 418.
func tripwire(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, "no request may reach this server", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", &n
}

// driftServer is an API server over the fixture store whose drift test
// endpoint may call 127.0.0.1 (or is off, with no hosts).
func driftServer(t *testing.T, dc api.DriftTestConfig) *api.Server {
	t.Helper()
	fx := reporttest.Open(t)
	cfg := api.DefaultConfig()
	cfg.Tenant = reporttest.TenantA
	cfg.DriftTest = dc
	s, err := api.New(cfg, fx.Store, fx.Runner, "test", nil, api.WithClock(func() time.Time { return fx.Now }))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// postDrift sends body to path with the bearer token (none when "") and the
// Accept header accept ("" for none).
func postDrift(t *testing.T, h http.Handler, path, token, accept string, body any) response {
	t.Helper()
	b, ok := body.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: rec.Code, header: rec.Header(), body: out}
}

// verdictLines writes each result as "tool pass kind arguments verdict",
// the figures the CLI and the endpoint must agree on.
func verdictLines(r drifttest.Report) []string {
	var out []string
	for _, res := range r.Results {
		var args bytes.Buffer
		_ = json.Compact(&args, res.Arguments)
		out = append(out, fmt.Sprintf("%s %s %s %s %s→%s %s", res.Tool, res.Pass, res.Kind, args.String(), res.OldRevision, res.NewRevision, res.Verdict))
	}
	return out
}

// TestDriftTest runs the drift test through the endpoint against the
// example server, as it follows the seed and with a fault, and checks
// that it gives the verdicts drifttest.Run gives for the same input (the
// code mcpdrift drifttest runs); a dry run plans the same calls and sends
// none; the answers match the OpenAPI document.
func TestDriftTest(t *testing.T) {
	s := driftServer(t, api.DriftTestConfig{AllowHosts: []string{"127.0.0.1"}, MaxCallsPerTool: 6, Timeout: time.Minute})
	_, c := openAPI(t, s.Handler())
	old := readFile(t, oldList)
	oldTools, err := toolchange.Decode(old)
	if err != nil {
		t.Fatal(err)
	}

	r := get(t, s.Handler(), "/api/v1/drifttest", "")
	var settings api.DriftTestSettings
	if err := json.Unmarshal(r.body, &settings); r.status != http.StatusOK || err != nil ||
		!reflect.DeepEqual(settings, api.DriftTestSettings{Enabled: true, Allowed: true, AllowHosts: []string{"127.0.0.1"}, MaxCallsPerTool: 6, DefaultMaxCalls: 6, TimeoutSeconds: 60}) {
		t.Fatalf("GET /api/v1/drifttest: %d %s", r.status, r.body)
	}
	validate(t, c, "/paths/"+pointer("/api/v1/drifttest")+"/get/responses/200/content/application~1json/schema", r.body)

	for _, tc := range []struct {
		fault    string
		pass     bool
		failures int
	}{{"", true, 0}, {"no-adapter", false, 6}} {
		t.Run("fault="+tc.fault, func(t *testing.T) {
			endpoint := startDriftserver(t, "-fault", tc.fault)
			want, err := drifttest.Run(context.Background(), oldTools, drifttest.Options{Target: drifttest.Target{URL: endpoint},
				AllowHosts: []string{"127.0.0.1"}, MaxCallsPerTool: 6})
			if err != nil {
				t.Fatal(err)
			}
			r := postDrift(t, s.Handler(), "/api/v1/drifttest", "", "", map[string]any{"server": endpoint, "old": json.RawMessage(old)})
			var got api.DriftTestBody
			if err := json.Unmarshal(r.body, &got); r.status != http.StatusOK || err != nil {
				t.Fatalf("POST: %d %s (%v)", r.status, r.body, err)
			}
			validate(t, c, "/paths/"+pointer("/api/v1/drifttest")+"/post/responses/200/content/application~1json/schema", r.body)
			g, w := verdictLines(got.Report), verdictLines(want)
			if got.Pass != tc.pass || got.Failures != tc.failures || want.Failures() != tc.failures || len(g) != 24 || !reflect.DeepEqual(g, w) {
				t.Fatalf("pass %v, %d failures, %d results:\n%s\nwant pass %v, %d failures, those of drifttest.Run:\n%s",
					got.Pass, got.Failures, len(g), strings.Join(g, "\n"), tc.pass, tc.failures, strings.Join(w, "\n"))
			}

			dry := postDrift(t, s.Handler(), "/api/v1/drifttest", "", "", map[string]any{"server": endpoint, "old": json.RawMessage(old), "dry_run": true})
			var planned api.DriftTestBody
			if err := json.Unmarshal(dry.body, &planned); dry.status != http.StatusOK || err != nil || !planned.Pass || !planned.Report.DryRun {
				t.Fatalf("dry run: %d %s", dry.status, dry.body)
			}
			for i, res := range planned.Report.Results {
				if res.Answer != nil || res.Verdict != "" || i >= len(got.Report.Results) || res.Tool != got.Report.Results[i].Tool ||
					!bytes.Equal(res.Arguments, got.Report.Results[i].Arguments) {
					t.Errorf("dry run call %d: %+v, want the call the run sent, with no answer", i, res)
				}
			}

			md := postDrift(t, s.Handler(), "/api/v1/drifttest", "", "text/markdown", map[string]any{"server": endpoint, "old": json.RawMessage(old), "max_calls": 1})
			var wantMD bytes.Buffer
			one, err := drifttest.Run(context.Background(), oldTools, drifttest.Options{Target: drifttest.Target{URL: endpoint},
				AllowHosts: []string{"127.0.0.1"}, MaxCallsPerTool: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := one.Markdown(&wantMD); err != nil {
				t.Fatal(err)
			}
			if md.status != http.StatusOK || !strings.HasPrefix(md.header.Get("Content-Type"), "text/markdown") || string(md.body) != wantMD.String() {
				t.Errorf("Markdown: %d %s\n%s\nwant what drifttest prints:\n%s", md.status, md.header.Get("Content-Type"), md.body, wantMD.String())
			}
		})
	}
}

// TestDriftTestRefusals: everything the endpoint refuses, it refuses
// before any request leaves: the endpoint off, a host not allowed, a
// misspelt field, too many calls, no old list or two. A redirect to a
// host not allowed is refused at the redirect.
func TestDriftTestRefusals(t *testing.T) {
	tw, hits := tripwire(t)
	u, _ := url.Parse(tw)
	elsewhere := "http://localhost:" + u.Port() + "/mcp"
	old := json.RawMessage(readFile(t, oldList))

	off := driftServer(t, api.DefaultDriftTestConfig())
	r := postDrift(t, off.Handler(), "/api/v1/drifttest", "", "", map[string]any{"server": tw, "old": old, "dry_run": true})
	if p := checkProblem(t, r, http.StatusNotFound); !strings.Contains(p.Detail, "-api.drifttest.allow-host") {
		t.Errorf("off: %s, want how to turn it on", p.Detail)
	}
	var settings api.DriftTestSettings
	r = get(t, off.Handler(), "/api/v1/drifttest", "")
	if err := json.Unmarshal(r.body, &settings); r.status != http.StatusOK || err != nil || settings.Enabled || len(settings.AllowHosts) != 0 ||
		!strings.Contains(settings.Detail, "-api.drifttest.allow-host") {
		t.Errorf("GET while off: %d %s, want enabled false and how to turn it on", r.status, r.body)
	}

	s := driftServer(t, api.DriftTestConfig{AllowHosts: []string{"127.0.0.1"}, MaxCallsPerTool: 3, Timeout: time.Minute})
	for _, tc := range []struct {
		name   string
		body   any
		status int
		param  string
		detail string
	}{
		{"host", map[string]any{"server": elsewhere, "old": old}, 400, "server", "host not allowed: the drift test sends real calls, so this server calls only the hosts of -api.drifttest.allow-host (127.0.0.1)"},
		{"scheme", map[string]any{"server": "file:///etc/passwd", "old": old}, 400, "server", "is not an http or https URL"},
		{"misspelt dry_run", []byte(`{"server":"` + tw + `","old":` + string(old) + `,"dryrun":true}`), 400, "", `unknown field "dryrun"`},
		{"no server", map[string]any{"old": old}, 400, "server", "name the MCP endpoint under test"},
		{"no old list", map[string]any{"server": tw}, 400, "old", "give one old list"},
		{"two old lists", map[string]any{"server": tw, "old": old, "deployed": map[string]any{"service": "deployer"}}, 400, "old", "give one old list"},
		{"too many calls", map[string]any{"server": tw, "old": old, "max_calls": 4}, 400, "max_calls", "want 1 to 3 (-api.drifttest.max-calls), not 4"},
		{"bad old list", map[string]any{"server": tw, "old": map[string]any{"tools": 3}}, 400, "old", "old: "},
		{"unknown service", map[string]any{"server": tw, "deployed": map[string]any{"service": "nope"}}, 400, "service", `service "nope" has advertised no tool definition`},
		{"server down", map[string]any{"server": tw, "old": old, "dry_run": true}, 502, "server", "could not run"},
		{"redirect", map[string]any{"server": redirectTo(t, elsewhere), "old": old, "dry_run": true}, 502, "server", "redirect refused: host not allowed"},
	} {
		before := hits.Load()
		r := postDrift(t, s.Handler(), "/api/v1/drifttest", "", "", tc.body)
		p := checkProblem(t, r, tc.status)
		if p.Parameter != tc.param || !strings.Contains(p.Detail, tc.detail) {
			t.Errorf("%s: %d %q (parameter %q), want %d %q (parameter %q)", tc.name, r.status, p.Detail, p.Parameter, tc.status, tc.detail, tc.param)
		}
		// Only the server that is down is reached: it stands for an
		// allowed server that answers no MCP.
		if n := hits.Load() - before; (n > 0) != (tc.name == "server down") {
			t.Errorf("%s: %d requests reached the tripwire", tc.name, n)
		}
	}
}

// redirectTo starts a server on 127.0.0.1 (an allowed host) that
// redirects every request to to.
func redirectTo(t *testing.T, to string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestDriftTestOneAtATime: while a drift test runs, another is refused
// with 429 and Retry-After; one that outlasts -api.drifttest.timeout ends
// with 504.
func TestDriftTestOneAtATime(t *testing.T) {
	hit := make(chan struct{}, 1)
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hit <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	s := driftServer(t, api.DriftTestConfig{AllowHosts: []string{"127.0.0.1"}, MaxCallsPerTool: 6, Timeout: 2 * time.Second})
	body := map[string]any{"server": hang.URL + "/mcp", "old": json.RawMessage(readFile(t, oldList)), "dry_run": true}
	first := make(chan response, 1)
	go func() { first <- postDrift(t, s.Handler(), "/api/v1/drifttest", "", "", body) }()
	select {
	case <-hit:
	case <-time.After(30 * time.Second):
		t.Fatal("the first drift test reached no server")
	}
	r := postDrift(t, s.Handler(), "/api/v1/drifttest", "", "", body)
	if p := checkProblem(t, r, http.StatusTooManyRequests); r.header.Get("Retry-After") == "" || !strings.Contains(p.Detail, "already running") {
		t.Errorf("second drift test: %d %s, Retry-After %q", r.status, r.body, r.header.Get("Retry-After"))
	}
	r = <-first
	if p := checkProblem(t, r, http.StatusGatewayTimeout); !strings.Contains(p.Detail, "did not finish within 2s") {
		t.Errorf("first drift test: %s", r.body)
	}
	// The slot is free again: the next one runs (and times out too).
	if r := postDrift(t, s.Handler(), "/api/v1/drifttest", "", "", body); r.status != http.StatusGatewayTimeout {
		t.Errorf("third drift test: %d %s, want 504", r.status, r.body)
	}
}

// TestDriftTestScopes: only a token with the drifttest scope makes the
// server send calls; read, audit and ingest tokens, even together, are
// refused with 403 and nothing is sent; the deployed list needs read too.
func TestDriftTestScopes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.jsonl")
	tk := map[string]string{}
	for name, scopes := range map[string][]auth.Scope{
		"drifttest":      {auth.ScopeDriftTest},
		"drifttest+read": {auth.ScopeDriftTest, auth.ScopeRead},
		"read+audit":     {auth.ScopeRead, auth.ScopeAudit},
		"read":           {auth.ScopeRead},
		"ingest":         {auth.ScopeIngest},
	} {
		token, rec, err := auth.Generate(reporttest.TenantA, scopes, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := auth.Append(path, rec); err != nil {
			t.Fatal(err)
		}
		tk[name] = token
	}
	tokens, err := auth.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := api.DefaultConfig()
	cfg.DriftTest.AllowHosts = []string{"127.0.0.1"}
	s, _ := liveServer(t, cfg, tokens)
	tw, hits := tripwire(t)
	old := json.RawMessage(readFile(t, oldList))
	for _, tc := range []struct {
		token  string
		body   map[string]any
		status int // 502: the scope passed and the tripwire was called
	}{
		{"drifttest", map[string]any{"server": tw, "old": old}, 502},
		{"drifttest+read", map[string]any{"server": tw, "deployed": map[string]any{"service": "deployer"}}, 502},
		{"drifttest", map[string]any{"server": tw, "deployed": map[string]any{"service": "deployer"}}, 403},
		{"read+audit", map[string]any{"server": tw, "old": old, "dry_run": true}, 403},
		{"read", map[string]any{"server": tw, "old": old}, 403},
		{"ingest", map[string]any{"server": tw, "old": old}, 403},
		{"", map[string]any{"server": tw, "old": old}, 401},
	} {
		before := hits.Load()
		r := postDrift(t, s.Handler(), "/api/v1/drifttest", tk[tc.token], "", tc.body)
		if r.status != tc.status {
			t.Errorf("token %q, %v: %d %s, want %d", tc.token, tc.body["deployed"], r.status, r.body, tc.status)
		}
		if reached := hits.Load() > before; reached != (tc.status == 502) {
			t.Errorf("token %q: the server under test reached %v, want %v", tc.token, reached, tc.status == 502)
		}
	}
	// GET answers any token of the tenant whether it may run one; the
	// hosts only to one that may.
	for _, tc := range []struct {
		token, want string
		status      int
	}{
		{"drifttest", `{"enabled":true,"allowed":true,"allow_hosts":["127.0.0.1"],"max_calls_per_tool":6,"default_max_calls":6,"timeout_s":60}`, 200},
		{"read+audit", `{"enabled":true,"allowed":false,"detail":"running a drift test needs a token with the drifttest scope; token ID has [read audit]","allow_hosts":[],"max_calls_per_tool":6,"default_max_calls":6,"timeout_s":60}`, 200},
		{"", "", 401},
	} {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/drifttest", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tk[tc.token])
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		got := regexp.MustCompile(`token [0-9a-f]+ has`).ReplaceAllString(strings.TrimSpace(rec.Body.String()), "token ID has")
		if rec.Code != tc.status || (tc.want != "" && got != tc.want) {
			t.Errorf("GET with token %q: %d %s, want %d %s", tc.token, rec.Code, got, tc.status, tc.want)
		}
	}
}
