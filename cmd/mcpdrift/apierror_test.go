package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// TestAPIErrors points report and gate at a real `mcpdrift serve` with
// tokens on: a missing or refused token points at -token and
// MCPDRIFT_TOKEN, and -api at one of its OTLP ports says so, in printable
// text.
func TestAPIErrors(t *testing.T) {
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.jsonl")
	token, rec, err := auth.Generate("default", []auth.Scope{auth.ScopeRead}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.Append(tokens, rec); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "mcpdrift")
	build(t, bin, ".")
	srv := startServe(t, bin, filepath.Join(dir, "data"), "-auth.tokens-file", tokens)
	t.Setenv("MCPDRIFT_TOKEN", "")

	f := func(env string, wantCode int, want string, args ...string) {
		t.Helper()
		t.Setenv("MCPDRIFT_TOKEN", env)
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		msg := errOut.String()
		if code != wantCode || !strings.Contains(msg, want) {
			t.Errorf("%v (MCPDRIFT_TOKEN=%q): exit %d, stderr %q; want exit %d and %q", args, env, code, msg, wantCode, want)
		}
		for _, r := range msg {
			if !unicode.IsPrint(r) && r != '\n' {
				t.Errorf("%v: stderr holds the unprintable %U: %q", args, r, msg)
				break
			}
		}
		if strings.Contains(msg, "Authorization") {
			t.Errorf("%v: stderr speaks of the HTTP header, not the flag: %q", args, msg)
		}
	}
	api := "http://" + srv.api
	noToken := "pass a bearer token with -token or MCPDRIFT_TOKEN"
	f("", 1, noToken, "report", "tools", "-api", api)
	f("", 2, noToken, "gate", "adapter", "a-1", "-api", api)
	f("", 1, "the API refused the token of -token or MCPDRIFT_TOKEN: the bearer token is not valid",
		"report", "tools", "-api", api, "-token", "mcpd_not-a-token")
	f("", 1, "is not an mcpdrift API (answered with HTTP/2 or gRPC?)", "report", "tools", "-api", "http://"+srv.grpc)
	f("", 2, "is not an mcpdrift API (answered with HTTP/2 or gRPC?)", "gate", "adapter", "a-1", "-api", "http://"+srv.grpc)
	f("", 1, "answered with application/x-protobuf, not as an mcpdrift API does", "report", "tools", "-api", "http://"+srv.http)

	// The token, from the environment, reads the report.
	t.Setenv("MCPDRIFT_TOKEN", token)
	var out, errOut bytes.Buffer
	if code := run([]string{"report", "tools", "-api", api}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "Tools") {
		t.Errorf("with MCPDRIFT_TOKEN: exit %d, %q, %q", code, out.String(), errOut.String())
	}
}
