// Package scaleouttest runs the scale-out roles as users deploy them: two
// bin/ingest and one bin/api processes, built as the images build them,
// against a 2-shard ClickHouse cluster run from libchdb (clickhousetest),
// with tokens for two tenants. The simulator sends its events over OTLP
// with the real OpenTelemetry SDK, one tenant through each ingester; one
// shard is killed with SIGKILL mid-load and restarted. Every acknowledged
// event must be stored exactly once, the ingesters must turn unready while
// the shard is down and ready after, log the failures (rate-limited), and
// every report must match the simulator's ledger. TestUpgradeWhileIngesting
// upgrades a deployment on a server in the order docs/upgrade.md gives.
package scaleouttest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/testing/loopback"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/internal/testing/authtest"
	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/internal/testing/ledgercheck"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "scaleout-bin-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := func() int {
		defer os.RemoveAll(dir)
		for _, cmd := range []string{"ingest", "api"} {
			// As deploy/Dockerfile builds them: static, without the
			// embedded store.
			b := exec.Command("go", "build", "-o", filepath.Join(dir, cmd), "github.com/mcpdrift/mcpdrift/cmd/"+cmd)
			b.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := b.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "cannot build %s: %v\n%s", cmd, err, out)
				return 1
			}
		}
		code := m.Run()
		clickhousetest.StopAll()
		return code
	}()
	os.Exit(code)
}

// proc is one process of a role.
type proc struct {
	name   string
	cmd    *exec.Cmd
	logs   *lockedBuffer
	exited chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func start(t *testing.T, name, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(filepath.Join(binDir, bin), args...), logs: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	// Only the flags configure the process: no MCPDRIFT_* variable of
	// the test's environment.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCPDRIFT_") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(40 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("%s logs:\n%s", p.name, tail(p.logs.String(), 4000))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// ready returns the status of GET url.
func ready(url string) int {
	c := &http.Client{Timeout: 8 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitStatus polls url until it answers status, and returns how long it
// took.
func waitStatus(t *testing.T, p *proc, url string, status int, within time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	for ready(url) != status {
		select {
		case <-p.exited:
			t.Fatalf("%s exited: %s", p.name, tail(p.logs.String(), 3000))
		default:
		}
		if time.Since(began) > within {
			t.Fatalf("%s did not answer %d at %s within %s", p.name, status, url, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(began)
}

// ingester is a running bin/ingest.
type ingester struct {
	*proc
	grpc, health string
}

func TestScaleOutOnACluster(t *testing.T) {
	clickhousetest.Require(t)
	if testing.Short() {
		t.Skip("runs real processes and a cluster for a minute")
	}
	ctx := context.Background()
	cluster, err := clickhousetest.StartCluster(ctx, t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	sch := schema.DefaultOptions()
	sch.Database = "mcpdrift"
	if _, err := cluster.Migrate(ctx, sch); err != nil {
		t.Fatal(err)
	}

	tenants := []string{"acme", "globex"}
	tokenFile, tokens := authtest.TokenFile(t,
		authtest.Token{Name: "acme-ingest", Tenant: "acme", Scopes: []auth.Scope{auth.ScopeIngest}},
		authtest.Token{Name: "globex-ingest", Tenant: "globex", Scopes: []auth.Scope{auth.ScopeIngest}},
		authtest.Token{Name: "acme-read", Tenant: "acme", Scopes: []auth.Scope{auth.ScopeRead}},
		authtest.Token{Name: "globex-read", Tenant: "globex", Scopes: []auth.Scope{auth.ScopeRead}},
	)
	storeFlags := []string{"-store.dsn=" + cluster.DSN(), "-store.cluster=" + cluster.Name, "-auth.tokens-file=" + tokenFile}

	var ins []ingester
	for i := range 2 {
		in := ingester{grpc: loopback.Addr(t), health: loopback.Addr(t)}
		in.proc = start(t, fmt.Sprintf("ingest-%d", i+1), "ingest", append(storeFlags,
			"-otlp.grpc.listen="+in.grpc, "-otlp.http.listen="+loopback.Addr(t), "-health.listen="+in.health,
			"-ingest.spool.dir="+filepath.Join(t.TempDir(), "spool"), "-ingest.insert.max-delay=500ms")...)
		ins = append(ins, in)
	}
	apiAddr := loopback.Addr(t)
	apiProc := start(t, "api", "api", append(storeFlags, "-migrate=false", "-api.listen="+apiAddr)...)
	for _, in := range ins {
		waitStatus(t, in.proc, "http://"+in.health+"/readyz", http.StatusOK, time.Minute)
	}
	waitStatus(t, apiProc, "http://"+apiAddr+"/readyz", http.StatusOK, time.Minute)

	// The load: each tenant's simulated fleet through its own ingester,
	// paced so that the outage falls in the middle of it.
	const loadFor = 10 * time.Second
	ledgers := make([]simulate.Ledger, len(tenants))
	errs := make([]error, len(tenants))
	var load sync.WaitGroup
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for i, tenant := range tenants {
		cfg := simulate.DefaultConfig()
		cfg.Seed = uint64(11 + i)
		cfg.Duration, cfg.Rate = loadFor, 2500
		cfg.ViolationRate = 0.3
		cfg.Endpoint = ins[i].grpc
		cfg.Headers = map[string]string{"Authorization": "Bearer " + tokens[tenant+"-ingest"]}
		load.Go(func() { ledgers[i], errs[i] = simulate.Run(ctx, cfg, logger) })
	}

	// A shard dies mid-load and comes back.
	time.Sleep(3 * time.Second)
	shard := cluster.Nodes[1]
	if err := shard.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for _, in := range ins {
		d := waitStatus(t, in.proc, "http://"+in.health+"/readyz", http.StatusServiceUnavailable, 30*time.Second)
		t.Logf("%s unready %s after shard 2 was killed", in.name, d.Round(time.Millisecond))
	}
	time.Sleep(3 * time.Second)
	if err := shard.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("shard 2 down for %s, restarted", time.Since(killed).Round(time.Millisecond))
	for _, in := range ins {
		d := waitStatus(t, in.proc, "http://"+in.health+"/readyz", http.StatusOK, time.Minute)
		t.Logf("%s ready again %s after the restart", in.name, d.Round(time.Millisecond))
	}
	load.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("simulator of %s: %v", tenants[i], err)
		}
	}

	// Acknowledged = stored, once, in the raw table and the rollups.
	st, err := clickhouse.Open(func() clickhouse.Config {
		c := clickhouse.DefaultConfig(cluster.DSN())
		c.Schema.Cluster = cluster.Name
		return c
	}())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, tenant := range tenants {
		l := ledgers[i]
		x := l.Export
		if x.Exported != l.Events || x.Rejected != 0 || x.Failed != 0 {
			t.Fatalf("%s: export %+v of %d events: every event must be acknowledged", tenant, x, l.Events)
		}
		c := waitStored(t, st, tenant, l.Events)
		t.Logf("%s: %d events simulated, %d acknowledged, stored %d (distinct ids %d), calls %d in calls_1h, %d in calls_1d; on shard 1 %d, on shard 2 %d",
			tenant, l.Events, x.Exported, c.Events, c.Distinct, c.Calls1h, c.Calls1d, c.Shard1, c.Shard2)
		if c.Events != uint64(l.Events) || c.Distinct != c.Events {
			t.Errorf("%s: stored %d events, %d distinct, want %d once each", tenant, c.Events, c.Distinct, l.Events)
		}
		if c.Calls1h != c.Calls || c.Calls1d != c.Calls {
			t.Errorf("%s: %d calls in events, %d in calls_1h, %d in calls_1d", tenant, c.Calls, c.Calls1h, c.Calls1d)
		}
		if c.Shard1 == 0 || c.Shard2 == 0 {
			t.Errorf("%s: the sharding key put %d events on shard 1 and %d on shard 2, want both used", tenant, c.Shard1, c.Shard2)
		}
	}

	// Each ingester logged the failures, rate-limited, and the recovery.
	for _, in := range ins {
		logs := in.logs.String()
		failed, recovered := strings.Count(logs, `"msg":"store write failed"`), strings.Count(logs, `"msg":"store writes succeed again"`)
		t.Logf("%s logged %d store write failures and %d recoveries", in.name, failed, recovered)
		outage := time.Since(killed)
		if failed == 0 || recovered == 0 || failed > int(outage/(10*time.Second))+2 {
			t.Errorf("%s logged %d failures and %d recoveries over %s: want failures logged at most once per 10 s, and the recovery",
				in.name, failed, recovered, outage.Round(time.Second))
		}
	}

	// Every report through bin/api matches the ledger of its tenant.
	for i, tenant := range tenants {
		l := ledgers[i]
		client := &apiclient.Client{BaseURL: "http://" + apiAddr, HTTP: &http.Client{Timeout: time.Minute}, Token: tokens[tenant+"-read"]}
		fetch := func(dest any, name string, params map[string]string) error {
			q := url.Values{"from": {l.Start.Add(-time.Minute).Format(time.RFC3339)}, "to": {l.End.Add(time.Hour).Format(time.RFC3339)}}
			for k, v := range params {
				q.Set(k, v)
			}
			path, _ := api.ReportPath(name)
			return client.GetJSON(ctx, path, q, dest)
		}
		res, diffs, err := ledgercheck.Compare(l, fetch)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			t.Errorf("%s: %s", tenant, d)
		}
		t.Logf("%s: reports match the ledger: calls of %d tools by outcome, %d adapters' normalised calls, repairs %v, violations %v over %d pages",
			tenant, res.Tools, res.Adapters, l.Repairs, res.Violations, res.Pages)
	}
}

// counts are what the cluster holds of one tenant.
type counts struct {
	Events   uint64 `json:"events"`
	Distinct uint64 `json:"distinct_ids"`
	Calls    uint64 `json:"calls"`
	Calls1h  uint64 `json:"calls_1h"`
	Calls1d  uint64 `json:"calls_1d"`
	Shard1   uint64 `json:"shard1"`
	Shard2   uint64 `json:"shard2"`
}

// waitStored waits until the cluster holds want events of tenant, or no
// more arrive for 20 s, and returns what it holds.
func waitStored(t *testing.T, st *clickhouse.Store, tenant string, want int64) counts {
	t.Helper()
	q := store.Query{Name: "scaleout_counts", SQL: `SELECT
		(SELECT count() FROM mcpdrift.events WHERE tenant = {tenant:String}) AS events,
		(SELECT uniqExact(event_id) FROM mcpdrift.events WHERE tenant = {tenant:String}) AS distinct_ids,
		(SELECT count() FROM mcpdrift.events WHERE tenant = {tenant:String} AND event_name = 'mcp.drift.call') AS calls,
		(SELECT sum(calls) FROM mcpdrift.calls_1h WHERE tenant = {tenant:String}) AS calls_1h,
		(SELECT sum(calls) FROM mcpdrift.calls_1d WHERE tenant = {tenant:String}) AS calls_1d,
		(SELECT count() FROM mcpdrift.events WHERE tenant = {tenant:String} AND _shard_num = 1) AS shard1,
		(SELECT count() FROM mcpdrift.events WHERE tenant = {tenant:String} AND _shard_num = 2) AS shard2`}
	var last counts
	changed := time.Now()
	for {
		var rows []counts
		if err := st.Query(context.Background(), q, store.Params{}.String("tenant", tenant), &rows); err != nil {
			t.Logf("counting: %v", err)
		} else if len(rows) == 1 {
			if rows[0] != last {
				changed = time.Now()
			}
			last = rows[0]
			if last.Events >= uint64(want) && last.Calls1d == last.Calls {
				return last
			}
		}
		if time.Since(changed) > 20*time.Second {
			return last
		}
		time.Sleep(200 * time.Millisecond)
	}
}
