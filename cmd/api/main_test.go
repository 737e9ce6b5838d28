package main

import (
	"io"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	f := func(args []string, wantErr string) {
		t.Helper()
		t.Setenv("MCPDRIFT_STORE_DSN", "")
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
	f([]string{"-store.dsn=clickhouse://ch:9000/other"}, `database "other" differs`)
}
