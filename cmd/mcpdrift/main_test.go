package main

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/testing/reporttest"
)

var update = flag.Bool("update", false, "regenerate the golden files under testdata")

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	reporttest.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// fixtureAPI serves the API over the report fixture for tenant acme on
// loopback, its clock at the fixture's Now, until the test ends.
func fixtureAPI(t *testing.T) (string, *reporttest.Fixture) {
	t.Helper()
	fx := reporttest.Open(t)
	cfg := api.DefaultConfig()
	cfg.Tenant = reporttest.TenantA
	srv, err := api.New(cfg, fx.Store, fx.Runner, "test", nil, api.WithClock(func() time.Time { return fx.Now }))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts.URL, fx
}

// closedAddr returns a loopback URL where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// mcpdrift runs the command in this process and returns its exit code and
// outputs.
func mcpdrift(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// goldenFile compares got with testdata/name, or writes it under -update.
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/mcpdrift -update creates it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from its golden file (go test ./cmd/mcpdrift -update regenerates it):\n got: %s\nwant: %s", name, got, want)
	}
}
