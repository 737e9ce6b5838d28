package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/console"
)

// TestConsoleRoutes: with tokens, the console's pages and assets answer
// without one, under its Content-Security-Policy; an unknown path outside
// /api is the console's HTML 404, under /api the API's JSON problem.
func TestConsoleRoutes(t *testing.T) {
	tokens, set := newTokens(t)
	s, _ := liveServer(t, api.DefaultConfig(), tokens)
	base := "http://" + s.Addr()
	hc := &http.Client{}
	for _, tc := range []struct {
		method, target, token string
		status                int
		contentType, body     string
	}{
		{"GET", "/", "", 200, "text/html", `<script src="/assets/app.js" defer></script>`},
		{"GET", "/adapters", "", 200, "text/html", `<script src="/assets/app.js" defer></script>`},
		{"GET", "/adapters/search.v1%2Fv2?from=-7d", "", 200, "text/html", `<script src="/assets/app.js" defer></script>`},
		{"GET", "/tools/search_docs", "", 200, "text/html", `<script src="/assets/app.js" defer></script>`},
		{"GET", "/violations?cursor=x", "", 200, "text/html", `<main id="main"`},
		{"GET", "/audit", "", 200, "text/html", `<main id="main"`},
		{"GET", "/check", "", 200, "text/html", `<main id="main"`},
		{"GET", "/assets/app.js", "", 200, "text/javascript", `'use strict'`},
		{"GET", "/assets/app.css", "", 200, "text/css", `:root`},
		{"HEAD", "/", "", 200, "text/html", ""},
		{"GET", "/nowhere", "", 404, "text/html", "Page not found"},
		{"GET", "/adapters/a/b", "", 404, "text/html", "Page not found"},
		{"GET", "/assets/none.js", "", 404, "text/html", "Page not found"},
		{"GET", "/assets/", "", 404, "text/html", "Page not found"},
		{"POST", "/", "", 405, "text/plain", "method not allowed"},
		{"GET", "/api/nowhere", "", 401, "application/problem+json", "bearer token"},
		{"GET", "/api/nowhere", set["a-read"], 404, "application/problem+json", "no endpoint GET /api/nowhere"},
		{"GET", "/api", set["a-read"], 404, "application/problem+json", "no endpoint GET /api"},
		{"GET", "/api/v1/tools", "", 401, "application/problem+json", "bearer token"},
	} {
		req, err := http.NewRequest(tc.method, base+tc.target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := string(b)
		name := tc.method + " " + tc.target
		if resp.StatusCode != tc.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.contentType) || !strings.Contains(got, tc.body) {
			t.Errorf("%s: %d %s %.200q; want %d %s with %q", name, resp.StatusCode, resp.Header.Get("Content-Type"), got, tc.status, tc.contentType, tc.body)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if strings.HasPrefix(tc.target, "/api") {
			if csp != "" {
				t.Errorf("%s: the API answers with the console's policy", name)
			}
			continue
		}
		if csp != console.CSP || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: Content-Security-Policy %q, X-Content-Type-Options %q", name, csp, resp.Header.Get("X-Content-Type-Options"))
		}
	}
}
