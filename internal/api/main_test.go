package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
)

var update = flag.Bool("update", false, "regenerate the golden files under testdata/golden")

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	reporttest.Close()
	clickhousetest.StopAll()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// newServer returns an API server over the fixture store for tenant, its
// clock pinned at the fixture's Now.
func newServer(t *testing.T, tenant string) (*api.Server, *reporttest.Fixture) {
	t.Helper()
	fx := reporttest.Open(t)
	cfg := api.DefaultConfig()
	cfg.Tenant = tenant
	s, err := api.New(cfg, fx.Store, fx.Runner, "test", nil, api.WithClock(func() time.Time { return fx.Now }))
	if err != nil {
		t.Fatal(err)
	}
	return s, fx
}

// response is an answer of the API.
type response struct {
	status int
	header http.Header
	body   []byte
}

// get requests target (a path with its query) from h with the Accept
// header accept ("" for none).
func get(t *testing.T, h http.Handler, target, accept string) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: rec.Code, header: rec.Header(), body: body}
}

// golden compares got with testdata/golden/name, or writes it under
// -update. JSON is compared indented, so that the files read well.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	if filepath.Ext(name) == ".json" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, got, "", "  "); err != nil {
			t.Fatalf("%s: not JSON: %v: %s", name, err, got)
		}
		got = buf.Bytes()
	}
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/api -update creates it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from its golden file (go test ./internal/api -update regenerates it):\n got: %s\nwant: %s", name, got, want)
	}
}
