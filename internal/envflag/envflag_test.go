package envflag

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	f := func(args []string, env map[string]string, wantDSN string, wantPort int, wantErr bool) {
		t.Helper()
		t.Setenv("MCPDRIFT_STORE_DSN", "")
		t.Setenv("MCPDRIFT_API_PORT", "1")
		for k, v := range env {
			t.Setenv(k, v)
		}
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		dsn := fs.String("store.dsn", "", "")
		port := fs.Int("api-port", 1, "")
		err := Parse(fs, args, "MCPDRIFT")
		if (err != nil) != wantErr {
			t.Fatalf("Parse(%v) error = %v, want error %v", args, err, wantErr)
		}
		if err == nil && (*dsn != wantDSN || *port != wantPort) {
			t.Fatalf("Parse(%v) = %q, %d; want %q, %d", args, *dsn, *port, wantDSN, wantPort)
		}
	}
	f(nil, nil, "", 1, false)
	f(nil, map[string]string{"MCPDRIFT_STORE_DSN": "clickhouse://a"}, "clickhouse://a", 1, false)
	f([]string{"-store.dsn=clickhouse://flag"}, map[string]string{"MCPDRIFT_STORE_DSN": "clickhouse://env"}, "clickhouse://flag", 1, false)
	f(nil, map[string]string{"MCPDRIFT_API_PORT": "8"}, "", 8, false)
	f(nil, map[string]string{"MCPDRIFT_API_PORT": "eight"}, "", 0, true)
}

func TestParseOnly(t *testing.T) {
	t.Setenv("MCPDRIFT_API", "http://env")
	t.Setenv("MCPDRIFT_TOOL", "from-env")
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var usage strings.Builder
	fs.SetOutput(&usage)
	api := fs.String("api", "", "URL of the API")
	tool := fs.String("tool", "", "only this tool")
	if err := ParseOnly(fs, nil, "MCPDRIFT", "api"); err != nil {
		t.Fatal(err)
	}
	if *api != "http://env" || *tool != "" {
		t.Fatalf("api %q, tool %q: want the environment for -api only", *api, *tool)
	}
	// A second parse of the same set does not repeat the note.
	if err := ParseOnly(fs, []string{"-h"}, "MCPDRIFT", "api"); err != flag.ErrHelp {
		t.Fatalf("-h: %v", err)
	}
	if got := usage.String(); strings.Count(got, "(env MCPDRIFT_API)") != 1 || strings.Contains(got, "MCPDRIFT_TOOL") {
		t.Errorf("usage names the wrong variables:\n%s", got)
	}
}
