// Package console serves mcpdrift's web console: a page per report read
// from the API of the same origin, with the API's tokens. Its files are
// the repository's own (assets/), embedded in the binary: no build step,
// no request leaves the host. The API mounts it at / on its port (see
// internal/api): every GET outside /api/ that no endpoint answers.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed assets
var assets embed.FS

// CSP is the Content-Security-Policy of every console answer: scripts,
// styles and requests of the console's own origin only, no inline script,
// no frame, no plugin.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// AssetPrefix is where the console's scripts and styles are served.
const AssetPrefix = "/assets/"

// pages are the first path segments of the console's pages; each takes at
// most one more segment (an adapter id, a tool name).
var pages = map[string]bool{"adapters": true, "tools": true, "violations": false, "audit": false, "check": false}

// IsPage reports whether p (a URL path, escaped) is one of the console's pages, so
// that its answer is the console: "/", "/adapters", "/adapters/<id>",
// "/tools", "/tools/<name>", "/violations", "/audit", "/check".
func IsPage(p string) bool {
	if p == "/" {
		return true
	}
	first, rest, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	detail, ok := pages[first]
	if !ok {
		return false
	}
	return rest == "" || (detail && !strings.Contains(rest, "/"))
}

// file is one embedded asset, with its ETag.
type file struct {
	body        []byte
	etag        string
	contentType string
}

// Handler serves the console. The zero value is not usable: use New.
type Handler struct {
	files    map[string]file // by URL path under AssetPrefix
	index    file
	notFound []byte
}

// New reads the embedded assets.
func New() (*Handler, error) {
	h := &Handler{files: map[string]file{}}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := assets.ReadFile(p)
		if err != nil {
			return fmt.Errorf("cannot read the console's %s: %w", p, err)
		}
		sum := sha256.Sum256(body)
		f := file{body: body, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, contentType: contentType(p)}
		switch name := strings.TrimPrefix(p, "assets/"); name {
		case "index.html":
			h.index = f
		case "404.html":
			h.notFound = body
		default:
			h.files[AssetPrefix+name] = f
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if h.index.body == nil || h.notFound == nil {
		return nil, fmt.Errorf("the console's index.html or 404.html is not embedded")
	}
	return h, nil
}

// Size is the bytes of every embedded file, and of them gzipped, as the
// bundle's budget counts them.
func Size() (raw, gzipped int, err error) {
	err = fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		raw += len(body)
		n, err := gzipSize(body)
		gzipped += n
		return err
	})
	return raw, gzipped, err
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	default:
		return "text/plain; charset=utf-8"
	}
}

// ServeHTTP answers GET and HEAD: an asset, a page (the console's
// index.html, whose script reads the path), or the console's 404 page.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	f, ok := h.files[r.URL.Path]
	// The escaped path: a tool or adapter id with a slash is one segment.
	if !ok && IsPage(r.URL.EscapedPath()) {
		f, ok = h.index, true
	}
	if !ok {
		hd.Set("Content-Type", "text/html; charset=utf-8")
		hd.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNotFound)
		if r.Method == http.MethodGet {
			_, _ = w.Write(h.notFound)
		}
		return
	}
	// Revalidated on every load: a new binary's console is seen at once.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", f.etag)
	hd.Set("Content-Type", f.contentType)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}
