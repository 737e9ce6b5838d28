package app_test

import (
	"flag"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/app/embeddedstore"
)

// roles are the configurations the binaries start from.
func roles() map[string]app.Config {
	return map[string]app.Config{
		"mcpdrift serve": app.DefaultConfig(app.RoleServe, "mcpdrift serve", embeddedstore.New()),
		"ingest":         app.DefaultConfig(app.RoleIngest, "ingest", app.NewServerStore()),
		"api":            app.DefaultConfig(app.RoleAPI, "api", app.NewServerStore()),
	}
}

// roleDefaults are the flags whose default differs by role on purpose: the
// all-in-one binary listens on loopback and logs text (a desk), the
// scale-out roles on every interface in JSON (a cluster).
var roleDefaults = map[string]bool{
	"otlp.grpc.listen": true, "otlp.http.listen": true, "api.listen": true, "log.format": true,
}

// TestFlagsAgreeAcrossBinaries registers every binary's flags and checks
// that a flag two binaries share means the same in both: the same usage
// and the same default (but for roleDefaults).
func TestFlagsAgreeAcrossBinaries(t *testing.T) {
	type seen struct {
		binary, usage, def string
	}
	all := map[string]seen{}
	perBinary := map[string]map[string]bool{}
	for name, c := range roles() {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		c.RegisterFlags(fs)
		perBinary[name] = map[string]bool{}
		fs.VisitAll(func(f *flag.Flag) {
			perBinary[name][f.Name] = true
			prev, ok := all[f.Name]
			if !ok {
				all[f.Name] = seen{name, f.Usage, f.DefValue}
				return
			}
			if prev.usage != f.Usage {
				t.Errorf("-%s: usage %q in %s, %q in %s", f.Name, prev.usage, prev.binary, f.Usage, name)
			}
			if prev.def != f.DefValue && !roleDefaults[f.Name] {
				t.Errorf("-%s: default %q in %s, %q in %s", f.Name, prev.def, prev.binary, f.DefValue, name)
			}
		})
	}
	// Each role has the flags of what it runs.
	for _, c := range []struct {
		binary string
		want   []string
	}{
		{"mcpdrift serve", []string{"data.dir", "otlp.grpc.listen", "ingest.spool.dir", "ingest.ack", "ingest.write-timeout", "api.listen", "api.query-timeout", "shutdown.timeout", "redact.rules-file", "auth.tokens-file"}},
		{"ingest", []string{"store.dsn", "otlp.grpc.listen", "ingest.spool.dir", "ingest.ack", "ingest.insert.max-events", "ingest.dedup.window", "health.listen", "shutdown.timeout", "redact.rules-file"}},
		{"api", []string{"store.dsn", "api.listen", "api.query-timeout", "migrate", "migrate.only", "shutdown.timeout"}},
	} {
		for _, f := range c.want {
			if !perBinary[c.binary][f] {
				t.Errorf("%s has no -%s", c.binary, f)
			}
		}
	}
	for _, c := range []struct{ binary, flag string }{{"api", "ingest.spool.dir"}, {"api", "otlp.grpc.listen"}, {"ingest", "api.listen"}, {"ingest", "migrate"}, {"mcpdrift serve", "store.dsn"}} {
		if perBinary[c.binary][c.flag] {
			t.Errorf("%s has -%s, which its role does not use", c.binary, c.flag)
		}
	}
}

// TestParse covers what the roles' configurations resolve to and refuse.
func TestParse(t *testing.T) {
	t.Setenv("MCPDRIFT_AUTH_INSECURE_ALLOW_NO_TOKENS", "true")
	dsn := "-store.dsn=clickhouse://ch:9000/mcpdrift"
	parse := func(binary string, args ...string) (app.Config, error) {
		c := roles()[binary]
		err := c.Parse(args, io.Discard)
		return c, err
	}
	c, err := parse("ingest", dsn)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(c.Ingest.Spool.Dir, "mcpdrift/spool") || c.Ingest.Ack != "spooled" {
		t.Errorf("ingest by default: spool %q, ack %q; want the default spool, spooled", c.Ingest.Spool.Dir, c.Ingest.Ack)
	}
	if c, err = parse("ingest", dsn, "-ingest.spool.dir=off"); err != nil || c.Ingest.Spool.Dir != "" || c.Ingest.Ack != "stored" {
		t.Errorf("ingest without a spool: %v, spool %q, ack %q; want none, stored", err, c.Ingest.Spool.Dir, c.Ingest.Ack)
	}
	// The drift test endpoint is off by default; its hosts come from the
	// flag or the environment.
	if c, err = parse("api", dsn); err != nil || len(c.API.DriftTest.AllowHosts) != 0 {
		t.Errorf("api by default: %v, drift test hosts %q; want none", err, c.API.DriftTest.AllowHosts)
	}
	t.Setenv("MCPDRIFT_API_DRIFTTEST_ALLOW_HOST", "staging.internal, 127.0.0.1:3000")
	if c, err = parse("api", dsn); err != nil || strings.Join(c.API.DriftTest.AllowHosts, " ") != "staging.internal 127.0.0.1:3000" {
		t.Errorf("api with MCPDRIFT_API_DRIFTTEST_ALLOW_HOST: %v, hosts %q", err, c.API.DriftTest.AllowHosts)
	}
	if c, err = parse("api", dsn, "-api.drifttest.allow-host="); err != nil || len(c.API.DriftTest.AllowHosts) != 0 {
		t.Errorf("api with an empty -api.drifttest.allow-host over the environment: %v, hosts %q; want none (flags win)", err, c.API.DriftTest.AllowHosts)
	}
	os.Unsetenv("MCPDRIFT_API_DRIFTTEST_ALLOW_HOST")
	if c, err = parse("mcpdrift serve", "-data.dir=/tmp/x"); err != nil || c.Ingest.Spool.Dir != "/tmp/x/spool" {
		t.Errorf("serve: %v, spool %q; want it under -data.dir", err, c.Ingest.Spool.Dir)
	}
	for _, tc := range []struct {
		binary string
		args   []string
		want   string
	}{
		{"ingest", nil, "store.dsn: required"},
		{"ingest", []string{dsn, "-ingest.spool.dir=off", "-ingest.ack=spooled"}, "ingest.ack"},
		{"ingest", []string{dsn, "-ingest.spool.segment-bytes=5"}, "ingest.spool.segment-bytes"},
		{"ingest", []string{dsn, "-ingest.batch.max-events=0"}, "ingest.batch.max-events"},
		{"mcpdrift serve", []string{"-ingest.tenant=a", "-api.tenant=b"}, "must agree"},
		{"mcpdrift serve", []string{"-data.dir="}, "data.dir"},
		{"api", []string{dsn, "-shutdown.timeout=0s"}, "shutdown.timeout"},
		{"api", []string{dsn, "extra"}, "unexpected argument"},
		{"api", []string{dsn, "-api.drifttest.timeout=3m"}, "api.write-timeout: must exceed api.drifttest.timeout (3m0s)"},
		{"api", []string{dsn, "-api.drifttest.max-calls=0"}, "api.drifttest.max-calls: must be at least 1"},
		{"mcpdrift serve", []string{"-api.drifttest.allow-host=http://staging/mcp"}, `api.drifttest.allow-host: "http://staging/mcp" is not a host`},
	} {
		if _, err := parse(tc.binary, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want an error naming %q", tc.binary, tc.args, err, tc.want)
		}
	}
}

// TestIngestDefaultGroupsFitOneInsert: the ingest role's replayer
// gathers groups of up to -ingest.insert.max-events events and sends each
// as one block, which the server store bounds at -store.insert.max-rows
// (the replayer then gathers no more). With the bound under the groups'
// size by default, every group was cut down to it: more INSERTs, each
// running every materialised view and leaving a part in every table for
// the server to merge.
func TestIngestDefaultGroupsFitOneInsert(t *testing.T) {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	c := roles()["ingest"]
	c.RegisterFlags(fs)
	def := func(name string) int {
		f := fs.Lookup(name)
		if f == nil {
			t.Fatalf("ingest has no -%s", name)
		}
		n, err := strconv.Atoi(f.DefValue)
		if err != nil {
			t.Fatalf("-%s: default %q: %v", name, f.DefValue, err)
		}
		return n
	}
	if rows, group := def("store.insert.max-rows"), def("ingest.insert.max-events"); rows < group {
		t.Errorf("-store.insert.max-rows defaults to %d, under -ingest.insert.max-events's %d: the default groups are cut into smaller INSERTs", rows, group)
	}
}

// TestEveryFlagHasAUsage keeps -h useful.
func TestEveryFlagHasAUsage(t *testing.T) {
	var missing []string
	for name, c := range roles() {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		c.RegisterFlags(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if strings.TrimSpace(f.Usage) == "" {
				missing = append(missing, name+" -"+f.Name)
			}
		})
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("flags without a usage: %v", missing)
	}
}
