package console_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/console"
)

// maxGzipped is the budget of the whole bundle, gzipped.
const maxGzipped = 300 << 10

// TestBundleSize: every embedded file, gzipped, within the budget.
func TestBundleSize(t *testing.T) {
	raw, gz, err := console.Size()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("console bundle: %d bytes, %d gzipped (budget %d)", raw, gz, maxGzipped)
	if gz > maxGzipped || gz == 0 {
		t.Errorf("the console's files gzip to %d bytes, over the budget of %d", gz, maxGzipped)
	}
}

// TestNoInlineCode: the policy forbids inline scripts and handlers, so
// the HTML must have none, nor style attributes; and nothing is fetched
// off the host.
func TestNoInlineCode(t *testing.T) {
	inline := regexp.MustCompile(`(?i)<script(\s[^>]*)?>[^<]|<script(?:\s(?:[^s>]|s[^r])*)?>|\son[a-z]+\s*=|\sstyle\s*=|javascript:`)
	offHost := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/|@import|url\(\s*['"]?https?:`)
	err := fs.WalkDir(os.DirFS("assets"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile("assets/" + p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".html") {
			if m := inline.Find(b); m != nil {
				t.Errorf("%s: inline code %q", p, m)
			}
		}
		if m := offHost.Find(b); m != nil && !strings.Contains(string(m), "www.w3.org/") {
			t.Errorf("%s: reference off the host %q", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRevalidation: assets carry an ETag, and a matching If-None-Match is
// answered 304.
func TestRevalidation(t *testing.T) {
	h, err := console.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/assets/app.js", "/assets/chart.js", "/", "/tools"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		etag := rec.Header().Get("ETag")
		if rec.Code != http.StatusOK || etag == "" || rec.Header().Get("Cache-Control") != "no-cache" {
			t.Fatalf("GET %s: %d, ETag %q, Cache-Control %q", target, rec.Code, etag, rec.Header().Get("Cache-Control"))
		}
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("If-None-Match", etag)
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotModified {
			t.Errorf("GET %s with If-None-Match %s: %d", target, etag, rec.Code)
		}
	}
}

func TestIsPage(t *testing.T) {
	for p, want := range map[string]bool{
		"/": true, "/adapters": true, "/adapters/x": true, "/adapters/a%2Fb": true, "/tools": true, "/tools/search": true,
		"/violations": true, "/audit": true, "/check": true,
		"/adapters/": true, "/adapters/a/b": false, "/violations/x": false, "/api": false, "/nope": false, "/assets/app.js": false, "": false,
	} {
		if got := console.IsPage(p); got != want {
			t.Errorf("IsPage(%q) = %v, want %v", p, got, want)
		}
	}
}
