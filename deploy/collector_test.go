package deploy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/testing/loopback"
)

// otelcol returns the Collector that scripts/otelcol-build.sh builds from
// otelcol/builder.yaml. Without it the test is skipped, or fails when
// MCPDRIFT_REQUIRE_OTELCOL is set.
func otelcol(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("../scripts/otelcol-build.sh", "--path").Output()
	if err != nil {
		t.Fatalf("scripts/otelcol-build.sh --path: %v", err)
	}
	path := strings.TrimSpace(string(out))
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_OTELCOL") != "" {
			t.Fatalf("MCPDRIFT_REQUIRE_OTELCOL is set and the Collector is not built: %v; run scripts/otelcol-build.sh", err)
		}
		t.Skipf("the Collector is not built (%v): run scripts/otelcol-build.sh (make otelcol), or set OTELCOL_BIN", err)
	}
	return path
}

// process is a child process whose output the test keeps.
type process struct {
	cmd  *exec.Cmd
	out  chan string // its output lines, until it exits
	logs strings.Builder
}

// start starts bin with args and env; it is killed at the end of the test.
func start(t *testing.T, bin string, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	// A test binary killed by its -timeout runs no cleanup: the child must
	// not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, out: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case p.out <- sc.Text():
			default: // nobody reads: drop
			}
		}
		close(p.out)
	}()
	go func() { _ = cmd.Wait(); _ = w.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		time.Sleep(200 * time.Millisecond)
		_ = cmd.Process.Kill()
	})
	return p
}

// waitLine returns the first output line matching re, within d.
func (p *process) waitLine(t *testing.T, re *regexp.Regexp, d time.Duration) []string {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case l, ok := <-p.out:
			if !ok {
				t.Fatalf("%s exited before printing %s:\n%s", p.cmd.Path, re, p.logs.String())
			}
			p.logs.WriteString(l + "\n")
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-deadline:
			t.Fatalf("%s printed no %s within %s:\n%s", p.cmd.Path, re, d, p.logs.String())
		}
	}
}

// waitListening waits until addr accepts TCP connections.
func waitListening(t *testing.T, addr string, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not accept connections after %s: %v", addr, d, err)
		}
	}
}

// metric returns the value of the sample name (with its labels) in the
// Prometheus text of body, "" when absent.
func metric(body, name string) string {
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// emitThrough sends drift calls of tool, one advertisement of its
// definition (dev.mcpdrift.advertised, revision 1) and plain logs with
// the OTel SDK's exporter exp, then flushes.
func emitThrough(t *testing.T, exp sdklog.Exporter, tool string, calls, plain int) {
	t.Helper()
	ctx := context.Background()
	lp := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithExportInterval(time.Hour))),
		sdklog.WithResource(resource.NewSchemaless(attribute.String("service.name", "gateway-test-mcp"))),
	)
	logger := lp.Logger("github.com/mcpdrift/mcpdrift/deploy")
	now := time.Now()
	for i := range calls {
		var r log.Record
		r.SetEventName("mcp.drift.call")
		r.SetTimestamp(now.Add(time.Duration(i) * time.Millisecond))
		r.AddAttributes(attribute.String("gen_ai.tool.name", tool), attribute.String("mcp.drift.outcome", "current"),
			attribute.String("jsonrpc.request.id", fmt.Sprint(i)), attribute.String("mcp.session.id", "gw-1"))
		logger.Emit(ctx, r)
	}
	var ad log.Record
	ad.SetEventName("dev.mcpdrift.advertised")
	ad.SetTimestamp(now)
	ad.AddAttributes(attribute.String("gen_ai.tool.name", tool), attribute.String("dev.mcpdrift.revision.server", "1"),
		attribute.String("dev.mcpdrift.tool.definition", `{"name":"`+tool+`","inputSchema":{"type":"object"}}`))
	logger.Emit(ctx, ad)
	for range plain {
		var r log.Record
		r.SetBody(attribute.StringValue("GET /healthz 200"))
		r.SetTimestamp(now)
		logger.Emit(ctx, r)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := lp.Shutdown(fctx); err != nil {
		t.Fatalf("exporting to the Collector: %v", err)
	}
}

// TestGatewayCollector runs the shipped otelcol/gateway.yaml, unchanged but
// for its listen addresses and the Collector's own metrics (off), on the Collector built from
// otelcol/builder.yaml, in front of mcpdrift serve with tokens on. The OTel
// SDK exports drift events and plain logs to the Collector over gRPC and
// HTTP; every drift event is stored, under the ingest token's tenant, no
// plain log reaches mcpdrift, and the Collector's exports (zstd) pass
// authentication. A Collector with a wrong token is refused, its events
// not stored.
func TestGatewayCollector(t *testing.T) {
	col := otelcol(t)
	bins, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tokensFile := filepath.Join(dir, "tokens.jsonl")
	token := func(scope auth.Scope) string {
		tk, rec, err := auth.Generate("gateway-tenant", []auth.Scope{scope}, "gateway test")
		if err != nil {
			t.Fatal(err)
		}
		if err := auth.Append(tokensFile, rec); err != nil {
			t.Fatal(err)
		}
		return tk
	}
	ingestToken, readToken := token(auth.ScopeIngest), token(auth.ScopeRead)

	srv := start(t, filepath.Join(bins, "mcpdrift"), nil, "serve", "-data.dir", filepath.Join(dir, "data"),
		"-auth.tokens-file", tokensFile,
		"-otlp.grpc.listen", "127.0.0.1:0", "-otlp.http.listen", "127.0.0.1:0", "-api.listen", "127.0.0.1:0")
	addr := `(\d+\.\d+\.\d+\.\d+:\d+)`
	grpcAddr := srv.waitLine(t, regexp.MustCompile(`OTLP/gRPC\s+`+addr), 60*time.Second)[1]
	apiAddr := srv.waitLine(t, regexp.MustCompile(`API\s+https?://`+addr), 60*time.Second)[1]
	go func() {
		for range srv.out {
		}
	}()

	gateway, err := os.ReadFile("otelcol/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// runCollector runs the gateway with its receivers on loopback ports,
	// forwarding to serve with token; it returns the receivers' addresses.
	runCollector := func(name, token string) (grpcIn, httpIn string) {
		grpcIn, httpIn = loopback.Addr(t), loopback.Addr(t)
		// The Collector's own metrics would listen on localhost:8888,
		// which two Collectors (or another process) cannot share.
		cfg := strings.NewReplacer("0.0.0.0:4317", grpcIn, "0.0.0.0:4318", httpIn,
			"\nservice:\n", "\nservice:\n  telemetry:\n    metrics:\n      level: none\n").Replace(string(gateway))
		if strings.Count(cfg, "127.0.0.1:") != 2 || !strings.Contains(cfg, "level: none") {
			t.Fatal("gateway.yaml no longer listens on 0.0.0.0:4317 and 4318 or has no service section: update the test")
		}
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		p := start(t, col, []string{"MCPDRIFT_ENDPOINT=" + grpcAddr, "MCPDRIFT_INGEST_TOKEN=" + token}, "--config="+path)
		p.waitLine(t, regexp.MustCompile(`Everything is ready`), 60*time.Second)
		go func() {
			for l := range p.out {
				if strings.Contains(l, "deprecated") {
					t.Errorf("Collector: %s", l)
				}
			}
		}()
		waitListening(t, grpcIn, 10*time.Second)
		waitListening(t, httpIn, 10*time.Second)
		return grpcIn, httpIn
	}
	scrape := func() string {
		resp, err := http.Get("http://" + apiAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	ctx := context.Background()

	grpcIn, httpIn := runCollector("gateway", ingestToken)
	ge, err := otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(grpcIn), otlploggrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	emitThrough(t, ge, "gateway_grpc", 300, 40)
	he, err := otlploghttp.New(ctx, otlploghttp.WithEndpoint(httpIn), otlploghttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	emitThrough(t, he, "gateway_http", 200, 25)

	const sent = 502 // 500 calls and 2 advertisements
	var body string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		body = scrape()
		if metric(body, "mcpdrift_ingest_events_stored_total") == fmt.Sprint(sent) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s of %d events stored after 60 s; metrics:\n%s", metric(body, "mcpdrift_ingest_events_stored_total"), sent, body)
		}
	}
	for name, want := range map[string]string{
		`mcpdrift_ingest_records_total{result="accepted",signal="logs"}`: fmt.Sprint(sent),
		// The Collector filtered the plain logs out.
		`mcpdrift_ingest_records_total{result="ignored",signal="logs"}`: "0",
		`mcpdrift_auth_failures_total{listener="ingest"}`:               "0",
	} {
		if got := metric(body, name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}

	// The events belong to the ingest token's tenant: the read token of
	// that tenant sees them all.
	calls := func() map[string]int {
		req, _ := http.NewRequest(http.MethodGet, "http://"+apiAddr+"/api/v1/tools?from=-1h", nil)
		req.Header.Set("Authorization", "Bearer "+readToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct {
			Rows []struct {
				Tool  string `json:"tool"`
				Calls int    `json:"calls"`
			} `json:"rows"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("tools report: %d %v", resp.StatusCode, err)
		}
		out := map[string]int{}
		for _, tl := range got.Rows {
			out[tl.Tool] = tl.Calls
		}
		return out
	}
	var got map[string]int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if got = calls(); got["gateway_grpc"] == 300 && got["gateway_http"] == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools report %v, want gateway_grpc 300 and gateway_http 200", got)
		}
	}

	// The advertisements went through the gateway's filter like any drift
	// event: the registry holds revision 1 of each tool.
	for _, tool := range []string{"gateway_grpc", "gateway_http"} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+apiAddr+"/api/v1/tools/"+tool+"/revisions", nil)
		req.Header.Set("Authorization", "Bearer "+readToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Histories []struct {
				Revisions []struct {
					Revision string `json:"revision"`
				} `json:"revisions"`
			} `json:"histories"`
		}
		err = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if err != nil || len(h.Histories) != 1 || len(h.Histories[0].Revisions) != 1 || h.Histories[0].Revisions[0].Revision != "1" {
			t.Errorf("%s's revisions through the gateway: %+v (%v)", tool, h, err)
		}
	}

	// A gateway with a wrong token is refused; nothing it sends is stored.
	wrongIn, _ := runCollector("wrong-token", "not-a-token")
	we, err := otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(wrongIn), otlploggrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	emitThrough(t, we, "gateway_wrong_token", 10, 0)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		body = scrape()
		if v := metric(body, `mcpdrift_auth_failures_total{listener="ingest"}`); v != "0" && v != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no ingest auth failure counted for the gateway with a wrong token")
		}
	}
	if got := metric(body, "mcpdrift_ingest_events_stored_total"); got != fmt.Sprint(sent) {
		t.Errorf("%s events stored after the wrong token, want %d", got, sent)
	}
	if got := calls(); got["gateway_wrong_token"] != 0 {
		t.Errorf("%d calls of the wrong token's gateway stored", got["gateway_wrong_token"])
	}
}
