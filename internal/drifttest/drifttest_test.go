package drifttest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/internal/drifttest"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

var update = flag.Bool("update", false, "rewrite the golden reports under testdata/")

// server is the example server examples/driftserver, built once.
var server string

// TestMain builds the example server, and checks that no test leaves an
// MCP session running.
func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "drifttest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	server = filepath.Join(dir, "driftserver")
	if out, err := exec.Command("go", "build", "-o", server, "../../examples/driftserver").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "cannot build the example server: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

const oldList = "../../examples/driftserver/old.json"

func readOld(t *testing.T) toolchange.List {
	t.Helper()
	b, err := os.ReadFile(oldList)
	if err != nil {
		t.Fatal(err)
	}
	l, err := toolchange.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// serveHTTP starts the example server over streamable HTTP on loopback
// and returns its endpoint; it stops with the test.
func serveHTTP(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(server, append(args, "-listen", "127.0.0.1:0")...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the example server printed no endpoint: %v", err)
	}
	return strings.TrimPrefix(strings.TrimSpace(line), "serving ")
}

// stdio is the example server as a command over stdio.
func stdio(args ...string) drifttest.Target {
	return drifttest.Target{Command: append([]string{server}, args...)}
}

// counter is a reverse proxy in front of a server that counts the
// tools/call requests it forwards, per tool.
type counter struct {
	mu    sync.Mutex
	calls map[string]int
	any   int
}

func (c *counter) total() (map[string]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.calls {
		out[k] = v
	}
	return out, c.any
}

func proxy(t *testing.T, endpoint string) (string, *counter) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c := &counter{calls: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		c.mu.Lock()
		c.any++
		if msg.Method == "tools/call" {
			c.calls[msg.Params.Name]++
		}
		c.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + u.Path, c
}

func run(t *testing.T, target drifttest.Target, maxCalls int) drifttest.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := drifttest.Run(ctx, readOld(t), drifttest.Options{Target: target, AllowHosts: []string{"127.0.0.1"},
		MaxCallsPerTool: maxCalls, Version: "test", RunID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// failing returns the failures of a report as "tool pass verdict".
func failing(r drifttest.Report) []string {
	var out []string
	for _, res := range r.Results {
		if !res.Verdict.Pass() {
			out = append(out, fmt.Sprintf("%s %s %s", res.Tool, res.Pass, res.Verdict))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// verdicts returns every result as "tool pass arguments verdict".
func verdicts(r drifttest.Report) []string {
	var out []string
	for _, res := range r.Results {
		out = append(out, fmt.Sprintf("%s %s %s %s", res.Tool, res.Pass, res.Arguments, res.Verdict))
	}
	return out
}

// TestExampleServers runs the drift test against the example server that
// follows the seed and against each of its faults, over both transports:
// the seed's server passes every call, each fault fails exactly the calls
// it breaks, with the verdict named, in both passes. The Markdown report
// of each is a golden under testdata/, the same over both transports.
func TestExampleServers(t *testing.T) {
	for _, tc := range []struct {
		fault string
		want  []string // the failures
	}{
		{"", nil},
		{"no-adapter", []string{"deploy_preview declared success_without_adapter", "deploy_preview stock success_without_adapter"}},
		{"vague-error", []string{"deploy_preview declared vague_error", "deploy_preview stock vague_error"}},
		{"side-effect", []string{"close_ticket declared rejection_after_side_effect", "close_ticket stock rejection_after_side_effect"}},
		{"removed-answers", []string{"delete_branch declared removed_tool_answers", "delete_branch stock removed_tool_answers"}},
		// An adapter that drops a field answers like one that renames it:
		// only the server's call events show it (TestDrifttestAudit in
		// cmd/mcpdrift, with -mcpdrift).
		{"drops-field", nil},
	} {
		name := tc.fault
		if name == "" {
			name = "seed"
		}
		t.Run(name, func(t *testing.T) {
			args := []string{"-release", "2", "-fault", tc.fault}
			byHTTP := run(t, drifttest.Target{URL: serveHTTP(t, args...)}, 4)
			byStdio := run(t, stdio(args...), 4)
			if got := failing(byHTTP); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("failures over HTTP:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if byHTTP.Pass() != (tc.want == nil) {
				t.Errorf("Pass() = %v with failures %v", byHTTP.Pass(), tc.want)
			}
			if h, s := verdicts(byHTTP), verdicts(byStdio); !reflect.DeepEqual(h, s) {
				t.Errorf("stdio and HTTP disagree:\n%s\n---\n%s", strings.Join(s, "\n"), strings.Join(h, "\n"))
			}
			byHTTP.Server = "driftserver"
			var md bytes.Buffer
			if err := byHTTP.Markdown(&md); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", name+".md"), md.Bytes())
		})
	}
}

// TestSeedServerVerdicts spells out what the seed's server answers, call
// by call: the declared client gets each bounded migration's adapter, the
// semantic change's INCOMPATIBLE_TOOL_SCHEMA and the removal's
// TOOL_REMOVED; the stock client, whose arguments are all the server has,
// gets the adapter where only the old revision fits them and runs as
// current where the new one accepts them unchanged.
func TestSeedServerVerdicts(t *testing.T) {
	r := run(t, drifttest.Target{URL: serveHTTP(t, "-release", "2")}, 2)
	want := []string{
		`close_ticket declared {"ticket":"a"} rejected`,
		`close_ticket stock {"ticket":"a"} rejected`,
		`create_issue declared {"labels":[],"title":"a"} normalized`,
		`create_issue stock {"labels":[],"title":"a"} normalized`,
		`delete_branch declared {"branch":"a"} removed`,
		`delete_branch stock {"branch":"a"} removed`,
		`deploy_preview declared {"branch":"a"} normalized`,
		`deploy_preview stock {"branch":"a"} normalized`,
	}
	if got := verdicts(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("verdicts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, res := range r.Results {
		if res.Tool == "close_ticket" {
			if code := res.Answer.Structured["error_code"]; code != "INCOMPATIBLE_TOOL_SCHEMA" || res.Answer.Structured["current_revision"] != "2" {
				t.Errorf("close_ticket answer %+v: want INCOMPATIBLE_TOOL_SCHEMA naming revision 2", res.Answer.Structured)
			}
		}
	}
}

// TestMaxCallsAndDryRun counts, at a proxy in front of the server, the
// tools/call requests that reach it: never more than -max-calls per tool,
// and none in a dry run, which still lists the tools and plans the calls.
func TestMaxCallsAndDryRun(t *testing.T) {
	endpoint, c := proxy(t, serveHTTP(t, "-release", "2"))
	ctx := context.Background()
	dry, err := drifttest.Run(ctx, readOld(t), drifttest.Options{Target: drifttest.Target{URL: endpoint},
		AllowHosts: []string{"127.0.0.1"}, MaxCallsPerTool: 3, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if calls, any := c.total(); len(calls) != 0 || any == 0 {
		t.Fatalf("dry run: tools/call per tool %v, %d requests: want none, and the listing", calls, any)
	}
	if len(dry.Results) != 12 || !dry.Pass() || dry.Results[0].Answer != nil {
		t.Fatalf("dry run: %d planned calls, pass %v: want 3 per changed or removed tool, unsent", len(dry.Results), dry.Pass())
	}
	r := run(t, drifttest.Target{URL: endpoint}, 3)
	calls, _ := c.total()
	want := map[string]int{"close_ticket": 3, "create_issue": 3, "delete_branch": 3, "deploy_preview": 3}
	if !reflect.DeepEqual(calls, want) || len(r.Results) != 12 {
		t.Fatalf("tools/call per tool %v, %d results: want %v", calls, len(r.Results), want)
	}
}

// TestAllowHost: a URL whose host is not allowed is refused before
// anything is sent; the server behind it sees no request at all.
func TestAllowHost(t *testing.T) {
	endpoint, c := proxy(t, serveHTTP(t, "-release", "2"))
	u, _ := url.Parse(endpoint)
	for _, tc := range []struct {
		allow []string
		ok    bool
	}{
		{nil, false},
		{[]string{"staging.example.com"}, false},
		{[]string{"127.0.0.2", "localhost"}, false},
		{[]string{"127.0.0.1:1"}, false},
		{[]string{"staging.example.com", "127.0.0.1"}, true},
		{[]string{u.Host}, true},
	} {
		_, before := c.total()
		_, err := drifttest.Run(context.Background(), readOld(t), drifttest.Options{Target: drifttest.Target{URL: endpoint},
			AllowHosts: tc.allow, MaxCallsPerTool: 1, DryRun: true})
		if refused := errors.Is(err, drifttest.ErrHostNotAllowed); refused == tc.ok {
			t.Errorf("allow %v: err %v, want allowed %v", tc.allow, err, tc.ok)
		}
		calls, after := c.total()
		if len(calls) != 0 || (after > before) != tc.ok {
			t.Errorf("allow %v: %d requests reached the server (tools/call %v): want some only when allowed", tc.allow, after-before, calls)
		}
	}
}

// TestRedirectStaysOnAllowedHosts: a server on an allowed host that
// redirects to a host not allowed (localhost, though it is the same
// machine) does not get the calls through: the redirect is refused and no
// request reaches the other host; one to an allowed host is followed.
func TestRedirectStaysOnAllowedHosts(t *testing.T) {
	endpoint, c := proxy(t, serveHTTP(t, "-release", "2"))
	u, _ := url.Parse(endpoint)
	elsewhere := *u
	elsewhere.Host = "localhost:" + u.Port()
	for _, tc := range []struct {
		to string
		ok bool
	}{{elsewhere.String(), false}, {endpoint, true}} {
		redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, tc.to, http.StatusTemporaryRedirect)
		}))
		_, before := c.total()
		_, err := drifttest.Run(context.Background(), readOld(t), drifttest.Options{Target: drifttest.Target{URL: redirect.URL},
			AllowHosts: []string{"127.0.0.1"}, MaxCallsPerTool: 1, DryRun: true})
		redirect.Close()
		_, after := c.total()
		if refused := errors.Is(err, drifttest.ErrHostNotAllowed); refused == tc.ok || (after > before) != tc.ok {
			t.Errorf("redirect to %s: err %v, %d requests reached it; want followed %v", tc.to, err, after-before, tc.ok)
		}
	}
}

// TestOldListIsRelease1: examples/driftserver/old.json is what release 1
// of the example server lists.
func TestOldListIsRelease1(t *testing.T) {
	ctx := context.Background()
	doc, _, err := stdio("-release", "1").List(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	indented.WriteString("\n")
	golden(t, oldList, indented.Bytes())
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to rewrite it):\n%s", path, got)
	}
}

// TestOldListCacheHint runs the drift test of the old list, as sent with
// a cache hint (ttlMs 172800000, cacheScope shared: clients may keep it
// 48 hours) and without, against the server that forgets
// deploy_preview's adapter: every verdict, passing or not, is the same,
// and its reason is the one without the hint followed by the release
// check's clause with the figures; the report carries the hint and its
// Markdown says it once, and again in each failure's reason.
func TestOldListCacheHint(t *testing.T) {
	b, err := os.ReadFile(oldList)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["ttlMs"], doc["cacheScope"] = 172800000, "shared"
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	hinted, err := toolchange.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := serveHTTP(t, "-release", "2", "-fault", "no-adapter")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runWith := func(old toolchange.List) drifttest.Report {
		t.Helper()
		r, err := drifttest.Run(ctx, old, drifttest.Options{Target: drifttest.Target{URL: endpoint}, AllowHosts: []string{"127.0.0.1"},
			MaxCallsPerTool: 2, Version: "test", RunID: "t"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	plain, got := runWith(readOld(t)), runWith(hinted)

	const hint = "clients may keep the old list for up to 48h without listing again (ttlMs 172800000, cacheScope shared)"
	if plain.OldCache != nil || got.OldCache == nil || got.OldCache.TTLMs != 172800000 || got.OldCache.Scope != "shared" {
		t.Errorf("old_cache without the hint %+v, with it %+v: want none, then 172800000 shared", plain.OldCache, got.OldCache)
	}
	if len(got.Results) != 8 || len(plain.Results) != len(got.Results) {
		t.Fatalf("%d results with the hint, %d without: want 8 each", len(got.Results), len(plain.Results))
	}
	for i, res := range got.Results {
		p := plain.Results[i]
		if res.Verdict != p.Verdict || res.Reason != p.Reason+"; "+hint || strings.Contains(p.Reason, "ttlMs") {
			t.Errorf("%s %s: %s %q, without the hint %s %q: want the same verdict, its reason followed by %q",
				res.Tool, res.Pass, res.Verdict, res.Reason, p.Verdict, p.Reason, hint)
		}
	}
	var md bytes.Buffer
	if err := got.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(md.String(), hint); got.Pass() || n != 1+got.Failures() ||
		!strings.Contains(md.String(), "Cache hint of the old list: "+hint+"; old calls can arrive that long after the deploy.\n") {
		t.Errorf("Markdown names the hint %d times, want once and in each of the %d failures:\n%s", n, got.Failures(), md.String())
	}
}
