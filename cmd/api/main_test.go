package main

import (
	"io"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/testing/authtest"
)

// parseConfig parses args as the binary does.
func parseConfig(args []string, stderr io.Writer) (app.Config, error) {
	c := config()
	err := c.Parse(args, stderr)
	return c, err
}

func TestParseConfig(t *testing.T) {
	f := func(args []string, wantErr string) {
		t.Helper()
		t.Setenv("MCPDRIFT_STORE_DSN", "")
		t.Setenv("MCPDRIFT_AUTH_INSECURE_ALLOW_NO_TOKENS", "true")
		_, err := parseConfig(args, io.Discard)
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%v: %v", args, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%v: error %v, want one containing %q", args, err, wantErr)
		}
	}
	dsn := "-store.dsn=clickhouse://u:p@ch1:9000/mcpdrift"
	f([]string{dsn}, "")
	f([]string{dsn, "-store.cluster=mcpdrift", "-migrate.only"}, "")
	f(nil, "store.dsn: required")
	f([]string{dsn, "-api.listen=8080"}, "api.listen")
	f([]string{dsn, "-api.query-timeout=0s"}, "api.query-timeout")
	f([]string{dsn, "-migrate=false", "-migrate.only"}, "migrate.only")
	f([]string{dsn, "-migrate.wait=0s"}, "migrate.wait")
	f([]string{dsn, "-retention.days=0"}, "invalid retention")
	f([]string{dsn, "-retention.daily.days=365"}, "")
	f([]string{dsn, "-retention.days=40", "-retention.daily.days=35"}, "invalid daily retention of 35 days")
	f([]string{"-store.dsn=clickhouse://ch:9000/other"}, `database "other" differs`)
}

// TestExposureNeedsTokens checks that the API refuses to listen beyond
// loopback without a token file unless told explicitly.
func TestExposureNeedsTokens(t *testing.T) {
	t.Setenv("MCPDRIFT_STORE_DSN", "")
	t.Setenv("MCPDRIFT_AUTH_INSECURE_ALLOW_NO_TOKENS", "false")
	path, _ := authtest.TokenFile(t, authtest.Token{Name: "r", Tenant: "acme", Scopes: []auth.Scope{auth.ScopeRead}})
	dsn := "-store.dsn=clickhouse://ch:9000/mcpdrift"
	for _, c := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{dsn}, "auth.insecure-allow-no-tokens"},
		{[]string{dsn, "-api.listen=[::]:8080"}, "auth.insecure-allow-no-tokens"},
		{[]string{dsn, "-api.listen=127.0.0.1:8080"}, ""},
		{[]string{dsn, "-auth.insecure-allow-no-tokens"}, ""},
		// -migrate.only never listens.
		{[]string{dsn, "-migrate.only"}, ""},
		{[]string{dsn, "-auth.tokens-file=" + path}, ""},
		{[]string{dsn, "-auth.tokens-file=/nonexistent/tokens"}, "auth.tokens-file"},
		{[]string{dsn, "-auth.tokens-file=" + path, "-api.tls.cert-file=x.pem"}, "api.tls.key-file"},
		{[]string{dsn, "-auth.tokens-file=" + path, "-api.write-timeout=10s"}, "api.write-timeout"},
	} {
		_, err := parseConfig(c.args, io.Discard)
		if (err != nil) != (c.wantErr != "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.wantErr)
		}
	}
}
