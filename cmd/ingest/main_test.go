package main

import (
	"io"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	f := func(args []string, env map[string]string, wantErr string) {
		t.Helper()
		t.Setenv("MCPDRIFT_STORE_DSN", "")
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
	f([]string{dsn, "-otlp.http.listen=4318"}, nil, "HTTPListen")
	f([]string{dsn, "-health.listen=x"}, nil, "health.listen")
	f([]string{dsn, "-shutdown.timeout=0s"}, nil, "shutdown.timeout")
	f([]string{dsn, "-log.format=xml"}, nil, "log.format")
	f([]string{dsn, "-store.insert.max-rows=0"}, nil, "store.insert.max-rows")
	f([]string{dsn, "extra"}, nil, "unexpected argument")
}

func TestConfigCheck(t *testing.T) {
	var out strings.Builder
	if code := run([]string{"-store.dsn=clickhouse://ch:9000", "-config.check"}, &out, io.Discard); code != 0 || !strings.Contains(out.String(), "valid") {
		t.Errorf("exit %d, output %q", code, out.String())
	}
	if code := run([]string{"-config.check"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("missing DSN: exit %d, want 2", code)
	}
}
