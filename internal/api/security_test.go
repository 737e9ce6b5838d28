package api_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/testing/authtest"
	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
)

// tokenSet holds the tokens of the security tests, by name.
type tokenSet map[string]string

// newTokens writes a token file with the tokens the security tests use and
// loads it: both tenants with read and audit, and tenant A with one scope
// each.
func newTokens(t *testing.T) (*auth.Tokens, tokenSet) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens.jsonl")
	set := tokenSet{}
	for _, tk := range []struct {
		name, tenant string
		scopes       []auth.Scope
	}{
		{"a", reporttest.TenantA, []auth.Scope{auth.ScopeRead, auth.ScopeAudit}},
		{"b", reporttest.TenantB, []auth.Scope{auth.ScopeRead, auth.ScopeAudit}},
		{"a-read", reporttest.TenantA, []auth.Scope{auth.ScopeRead}},
		{"a-audit", reporttest.TenantA, []auth.Scope{auth.ScopeAudit}},
		{"a-ingest", reporttest.TenantA, []auth.Scope{auth.ScopeIngest}},
	} {
		token, rec, err := auth.Generate(tk.tenant, tk.scopes, tk.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := auth.Append(path, rec); err != nil {
			t.Fatal(err)
		}
		set[tk.name] = token
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, token := range set {
		if strings.Contains(string(data), token) {
			t.Fatalf("the token file holds token %s in clear", name)
		}
	}
	tokens, err := auth.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tokens, set
}

// liveServer starts an API server with tokens over the fixture store on a
// loopback port.
func liveServer(t *testing.T, cfg api.Config, tokens *auth.Tokens) (*api.Server, *reporttest.Fixture) {
	t.Helper()
	fx := reporttest.Open(t)
	cfg.Listen = "127.0.0.1:0"
	s, err := api.New(cfg, fx.Store, fx.Runner, "test", nil, api.WithClock(func() time.Time { return fx.Now }), api.WithTokens(tokens))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s, fx
}

// call requests base+target with the bearer token (none when "") and
// returns the answer.
func call(t *testing.T, hc *http.Client, base, target, token string, header http.Header) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

// reportPaths returns the paths of the OpenAPI document that need a token,
// with the parameters each declares.
func reportPaths(t *testing.T, doc map[string]any) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for path, item := range doc["paths"].(map[string]any) {
		op, isGet := item.(map[string]any)["get"].(map[string]any)
		if !isGet {
			continue // POST /api/v1/check: TestCheckTenantAndScope
		}
		if sec, ok := op["security"].([]any); ok && len(sec) == 0 {
			continue
		}
		if tags, _ := op["tags"].([]any); len(tags) > 0 && tags[0] == "registry" {
			continue // no window, a tool in the path: TestRegistryTenancy
		}
		if tags, _ := op["tags"].([]any); len(tags) > 0 && tags[0] == "drifttest" {
			continue // no tenant's data, its own scope: TestDriftTestScopes
		}
		var names []string
		for _, p := range op["parameters"].([]any) {
			ref := p.(map[string]any)["$ref"].(string)
			names = append(names, strings.TrimPrefix(ref, "#/components/parameters/"))
		}
		out[path] = names
	}
	if len(out) < 8 {
		t.Fatalf("the document lists %d report paths: %v", len(out), out)
	}
	return out
}

// leaves collects the string values of a JSON document.
func leaves(v any, into map[string]bool) {
	switch x := v.(type) {
	case string:
		into[x] = true
	case []any:
		for _, e := range x {
			leaves(e, into)
		}
	case map[string]any:
		for _, e := range x {
			leaves(e, into)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestTenantIsolation proves that a token of tenant A sees none of tenant
// B's rows through any endpoint of the OpenAPI document, in any format,
// whatever filter or header it sends: the strings only B's answers hold
// never appear in A's.
func TestTenantIsolation(t *testing.T) {
	tokens, tk := newTokens(t)
	s, _ := liveServer(t, api.DefaultConfig(), tokens)
	base := "http://" + s.Addr()
	hc := &http.Client{Timeout: time.Minute}
	var doc map[string]any
	if err := json.Unmarshal(call(t, hc, base, "/api/v1/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	paths := reportPaths(t, doc)
	window := "?from=-30d"

	// What each tenant's JSON answers hold.
	strs := map[string]map[string]bool{"a": {}, "b": {}}
	var bodiesA strings.Builder
	for path := range paths {
		for _, who := range []string{"a", "b"} {
			r := call(t, hc, base, path+window, tk[who], nil)
			if r.status != http.StatusOK {
				t.Fatalf("%s with %s's token: %d %s", path, who, r.status, r.body)
			}
			var v any
			if err := json.Unmarshal(r.body, &v); err != nil {
				t.Fatal(err)
			}
			leaves(v, strs[who])
			if who == "a" {
				bodiesA.Write(r.body)
			}
		}
	}
	var onlyB []string
	for s := range strs["b"] {
		if _, err := time.Parse(time.RFC3339, s); err == nil {
			continue // times are rendered differently in each format
		}
		if !strs["a"][s] && len(s) >= 5 && !strings.Contains(bodiesA.String(), s) {
			onlyB = append(onlyB, s)
		}
	}
	sort.Strings(onlyB)
	for _, want := range []string{"globex-agent@9.9.9", "globex-req-1000002", `{"branch":"globex-secret"}`} {
		if !slices.Contains(onlyB, want) {
			t.Fatalf("tenant B's answers lack %q: the test would prove nothing (B-only strings: %v)", want, onlyB)
		}
	}
	leak := func(what string, body []byte) {
		t.Helper()
		text := string(body)
		for _, s := range onlyB {
			if strings.Contains(text, s) {
				t.Errorf("%s: tenant A's answer holds tenant B's %q", what, s)
				return
			}
		}
		if strings.Contains(text, reporttest.TenantB) {
			t.Errorf("%s: tenant A's answer names tenant %s", what, reporttest.TenantB)
		}
	}

	// Filters and headers that try to reach B's rows.
	attempts := []struct {
		query  string
		header http.Header
		status int
	}{
		{"", nil, http.StatusOK},
		{"&client=globex-agent", nil, http.StatusOK},
		{"&exclude_client=cursor", nil, http.StatusOK},
		{"&tenant=" + reporttest.TenantB, nil, http.StatusBadRequest},
		{"&tenant_id=" + reporttest.TenantB, nil, http.StatusBadRequest},
		{"", http.Header{"X-Scope-Orgid": {reporttest.TenantB}, "X-Tenant": {reporttest.TenantB}, "X-Mcpdrift-Tenant": {reporttest.TenantB}}, http.StatusOK},
	}
	formats := []string{"json", "csv", "md", "table"}
	for path, params := range paths {
		for _, a := range attempts {
			for _, f := range formats {
				q := a.query
				if strings.HasPrefix(q, "&client=") && !slices.Contains(params, "client") {
					continue
				}
				target := path + window + q + "&format=" + f
				r := call(t, hc, base, target, tk["a"], a.header)
				if r.status != a.status {
					t.Errorf("GET %s: %d, want %d: %s", target, r.status, a.status, r.body)
					continue
				}
				leak(target, r.body)
			}
		}
		// B's own identifiers as filters bring none of B's rows.
		for p, v := range map[string]string{"session": "bg-d0-0", "request_id": "globex-req-1000002", "client": "globex-agent", "tool": "search_docs"} {
			if !slices.Contains(params, p) {
				continue
			}
			for _, f := range formats {
				target := path + window + "&" + p + "=" + url.QueryEscape(v) + "&format=" + f
				r := call(t, hc, base, target, tk["a"], nil)
				if r.status != http.StatusOK {
					t.Errorf("GET %s: %d", target, r.status)
					continue
				}
				leak(target, r.body)
			}
		}
	}
}

// TestTokensAndScopes checks authentication and the scopes of every route:
// no token and unknown tokens are 401, a token without the endpoint's
// scope is 403 (read for reports, audit for the call audit), and health
// and the document answer without a token.
func TestTokensAndScopes(t *testing.T) {
	tokens, tk := newTokens(t)
	s, _ := liveServer(t, api.DefaultConfig(), tokens)
	base := "http://" + s.Addr()
	hc := &http.Client{Timeout: time.Minute}
	for _, p := range []string{"/healthz", "/readyz", "/api/v1/openapi.json"} {
		if r := call(t, hc, base, p, "", nil); r.status != http.StatusOK {
			t.Errorf("%s without a token: %d", p, r.status)
		}
	}
	var doc map[string]any
	_ = json.Unmarshal(call(t, hc, base, "/api/v1/openapi.json", "", nil).body, &doc)
	before := s.AuthFailures()
	refused := uint64(0)
	for path := range reportPaths(t, doc) {
		audit := strings.HasPrefix(path, "/api/v1/audit/")
		want := map[string]int{
			"a": 200, "a-read": 200, "a-audit": 403, "a-ingest": 403,
			"":                           401,
			"mcpdrift_not-a-known-token": 401,
			tk["a"] + "x":                401,
		}
		if audit {
			want["a-read"], want["a-audit"] = 403, 200
		}
		for who, status := range want {
			token := tk[who]
			if token == "" {
				token = who
			}
			r := call(t, hc, base, path, token, nil)
			if r.status != status {
				t.Errorf("%s with token %q: %d, want %d: %s", path, who, r.status, status, r.body)
			}
			if status >= 400 {
				refused++
				checkProblem(t, r, status)
				if status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("%s: 401 without WWW-Authenticate: %v", path, r.header)
				}
			}
		}
		// Another scheme, or the token as a parameter, is no token.
		for _, h := range []http.Header{{"Authorization": {"Basic " + tk["a"]}}, {"Authorization": {tk["a"]}}} {
			if r := call(t, hc, base, path, "", h); r.status != 401 {
				t.Errorf("%s with %v: %d, want 401", path, h, r.status)
			}
			refused++
		}
		if r := call(t, hc, base, path+"?access_token="+tk["a"], "", nil); r.status != 401 {
			t.Errorf("%s with ?access_token: %d, want 401", path, r.status)
		}
		refused++
	}
	if got := s.AuthFailures() - before; got != refused {
		t.Errorf("AuthFailures grew by %d, want %d", got, refused)
	}
	// An unknown path is answered 401 too, not 404: nothing about the API
	// is learnt without a token.
	if r := call(t, hc, base, "/api/v1/nowhere", "", nil); r.status != 401 {
		t.Errorf("unknown path without a token: %d", r.status)
	}
}

// hostile are values that would break out of a string literal, a comment
// or a query parameter placeholder if they reached SQL as text.
var hostile = []string{
	`'`, `\'; --`, `x'); DROP TABLE events; --`, `' OR 1=1 /* */ --`, "`#",
	`{tenant:String}`, `{p0:String}}{`, "a\x00b", "\r\n\t",
	"ünïcödé 🙂 \u202e\u200b\ufeff", "%", "-1",
	reporttest.TenantB, reporttest.TenantA + "' OR tenant = '" + reporttest.TenantB,
	strings.Repeat("A", 30000), strings.Repeat(`\'`, 3000),
}

// TestHostileParameters sends hostile values through every parameter of
// every endpoint, as the OpenAPI document lists them: each answer is a 200
// holding none of tenant B's rows or a 400 problem, never a 5xx, and the
// data is the same afterwards.
func TestHostileParameters(t *testing.T) {
	tokens, tk := newTokens(t)
	s, _ := liveServer(t, api.DefaultConfig(), tokens)
	base := "http://" + s.Addr()
	hc := &http.Client{Timeout: time.Minute}
	var doc map[string]any
	_ = json.Unmarshal(call(t, hc, base, "/api/v1/openapi.json", "", nil).body, &doc)
	paths := reportPaths(t, doc)

	snapshot := func() map[string]string {
		out := map[string]string{}
		for path := range paths {
			for _, who := range []string{"a", "b"} {
				r := call(t, hc, base, path+"?from=-30d&limit=500", tk[who], nil)
				if r.status == http.StatusBadRequest { // no limit parameter
					r = call(t, hc, base, path+"?from=-30d", tk[who], nil)
				}
				if r.status != http.StatusOK {
					t.Fatalf("%s: %d %s", path, r.status, r.body)
				}
				out[path+" "+who] = string(r.body)
			}
		}
		return out
	}
	before := snapshot()

	n := 0
	for path, params := range paths {
		for _, p := range params {
			for _, v := range hostile {
				target := path + "?" + url.Values{p: {v}}.Encode()
				r := call(t, hc, base, target, tk["a"], nil)
				n++
				short := v
				if len(short) > 40 {
					short = short[:40] + "…"
				}
				switch r.status {
				case http.StatusOK:
					if strings.Contains(string(r.body), "globex-") {
						t.Errorf("%s=%q on %s: tenant B's rows in A's answer", p, short, path)
					}
				case http.StatusBadRequest, http.StatusNotAcceptable:
					checkProblem(t, r, r.status)
				default:
					t.Errorf("%s=%q on %s: %d %s", p, short, path, r.status, r.body)
				}
				if !utf8.Valid(r.body) {
					t.Errorf("%s=%q on %s: the answer is not UTF-8", p, short, path)
				}
			}
		}
		// Hostile names of parameters, too.
		for _, v := range hostile[:12] {
			r := call(t, hc, base, path+"?"+url.QueryEscape(v)+"=1", tk["a"], nil)
			if r.status != http.StatusBadRequest && r.status != http.StatusOK {
				t.Errorf("parameter named %q on %s: %d %s", v, path, r.status, r.body)
			}
			n++
		}
	}
	t.Logf("%d hostile requests over %d endpoints", n, len(paths))

	// Over the header limit: refused by the HTTP server, not the reports.
	r := call(t, hc, base, "/api/v1/tools?tool="+strings.Repeat("A", 100<<10), tk["a"], nil)
	if r.status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 100 KiB query string: %d, want 431", r.status)
	}

	after := snapshot()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed after the hostile requests", k)
		}
	}
}

// TestTLSAndTimeouts serves the API with mutual TLS on loopback: a client
// with a certificate the CA signed is answered, one without or with a
// stranger's certificate is not; a client that does not finish its headers
// within ReadHeaderTimeout is disconnected.
func TestTLSAndTimeouts(t *testing.T) {
	pki := authtest.NewPKI(t)
	tokens, tk := newTokens(t)
	cfg := api.DefaultConfig()
	cfg.TLS = auth.TLSConfig{CertFile: pki.ServerCert, KeyFile: pki.ServerKey, ClientCAFile: pki.CAFile}
	cfg.ReadHeaderTimeout = 200 * time.Millisecond
	s, _ := liveServer(t, cfg, tokens)
	base := "https://" + s.Addr()
	client := func(cert *tls.Certificate) *http.Client {
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: pki.ClientTLS(cert)}}
	}
	r := call(t, client(&pki.Client), base, "/api/v1/tools", tk["a-read"], nil)
	if r.status != http.StatusOK {
		t.Fatalf("with the client certificate: %d %s", r.status, r.body)
	}
	for name, c := range map[string]*http.Client{"no certificate": client(nil), "a stranger's certificate": client(&pki.Stranger)} {
		if resp, err := c.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			t.Errorf("%s: answered %d", name, resp.StatusCode)
		}
	}

	// Slow headers: the server closes the connection.
	conn, err := tls.Dial("tcp", s.Addr(), pki.ClientTLS(&pki.Client))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	buf := make([]byte, 512)
	for {
		if _, err := conn.Read(buf); err != nil {
			break
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a client with unfinished headers was held %v", d)
	}
}
