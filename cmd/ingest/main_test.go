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
	f := func(args []string, env map[string]string, wantErr string) {
		t.Helper()
		t.Setenv("MCPDRIFT_STORE_DSN", "")
		t.Setenv("MCPDRIFT_AUTH_INSECURE_ALLOW_NO_TOKENS", "true")
		for k, v := range env {
			t.Setenv(k, v)
		}
		_, err := parseConfig(args, io.Discard)
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%v: %v", args, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%v: error %v, want one containing %q", args, err, wantErr)
		}
	}
	dsn := "-store.dsn=clickhouse://u:p@ch1:9000,ch2:9000/mcpdrift"
	f([]string{dsn}, nil, "")
	f(nil, map[string]string{"MCPDRIFT_STORE_DSN": "clickhouse://ch:9000", "MCPDRIFT_STORE_CLUSTER": "c"}, "")
	f(nil, nil, "store.dsn: required")
	f([]string{dsn, "-store.cluster=a b"}, nil, "invalid cluster")
	f([]string{dsn, "-otlp.http.listen=4318"}, nil, "otlp.http.listen")
	f([]string{dsn, "-health.listen=x"}, nil, "health.listen")
	f([]string{dsn, "-shutdown.timeout=0s"}, nil, "shutdown.timeout")
	f([]string{dsn, "-log.format=xml"}, nil, "log.format")
	f([]string{dsn, "-store.insert.max-rows=0"}, nil, "store.insert.max-rows")
	f([]string{dsn, "extra"}, nil, "unexpected argument")
}

func TestConfigCheck(t *testing.T) {
	t.Setenv("MCPDRIFT_AUTH_INSECURE_ALLOW_NO_TOKENS", "true")
	var out strings.Builder
	if code := run([]string{"-store.dsn=clickhouse://ch:9000", "-config.check"}, &out, io.Discard); code != 0 || !strings.Contains(out.String(), "valid") {
		t.Errorf("exit %d, output %q", code, out.String())
	}
	if code := run([]string{"-config.check"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("missing DSN: exit %d, want 2", code)
	}
}

// TestExposureNeedsTokens checks that the ingester refuses to listen
// beyond loopback without a token file unless told explicitly.
func TestExposureNeedsTokens(t *testing.T) {
	t.Setenv("MCPDRIFT_STORE_DSN", "")
	t.Setenv("MCPDRIFT_AUTH_INSECURE_ALLOW_NO_TOKENS", "false")
	path, _ := authtest.TokenFile(t, authtest.Token{Name: "i", Tenant: "acme", Scopes: []auth.Scope{auth.ScopeIngest}})
	dsn := "-store.dsn=clickhouse://ch:9000/mcpdrift"
	loop := []string{dsn, "-otlp.grpc.listen=127.0.0.1:4317", "-otlp.http.listen=localhost:4318"}
	for _, c := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{dsn}, "otlp.grpc.listen"},
		{[]string{dsn, "-otlp.grpc.listen=127.0.0.1:4317"}, "otlp.http.listen"},
		{loop, ""},
		{[]string{dsn, "-auth.insecure-allow-no-tokens=true"}, ""},
		{[]string{dsn, "-auth.tokens-file=" + path}, ""},
		{append(loop, "-otlp.tls.client-ca-file=ca.pem"), "otlp.tls.client-ca-file"},
		{append(loop, "-redact.rules-file=/nonexistent.yaml"), "redact.rules-file"},
	} {
		_, err := parseConfig(c.args, io.Discard)
		if (err != nil) != (c.wantErr != "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.wantErr)
		}
	}
}
