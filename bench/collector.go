package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
)

// The collector suite (k): the OpenTelemetry Collector built from
// collectorManifest — the OTLP receiver, the batch processor and the
// contrib ClickHouse exporter — writing into a ClickHouse server run from
// libchdb, sent the same requests as run (c), beside run (c) measured in
// the same invocation. It runs only when -suite names it: building that
// Collector takes minutes, so neither `make bench`'s default nor `make
// test` builds it.

// collectorManifest is the Collector Builder manifest of the Collector the
// suite measures, relative to the repository's root; collectorBuild is the
// script that builds it from there and prints the binary's path.
const (
	collectorManifest = "deploy/otelcol/bench-builder.yaml"
	collectorBuild    = "scripts/otelcol-build.sh"
)

// collectorModules are the modules the manifest must hold, by the
// component type the suite's configuration (collectorConfig) uses.
var collectorModules = map[string]string{
	"otlp":       "go.opentelemetry.io/collector/receiver/otlpreceiver",
	"batch":      "go.opentelemetry.io/collector/processor/batchprocessor",
	"clickhouse": "github.com/open-telemetry/opentelemetry-collector-contrib/exporter/clickhouseexporter",
}

// The exporter's default schema: it creates the database's logs table at
// start (create_schema defaults to true), one row per log record.
const (
	collectorDatabase  = "default"
	collectorLogsTable = "otel_logs"
)

// CollectorPhase is the measurement of the Collector path: the Collector
// and the ClickHouse server, each in its own process.
type CollectorPhase struct {
	Phase
	// CollectorCPU and ServerCPU split CPU (their sum) between the two
	// processes, in seconds.
	CollectorCPU float64 `json:"collector_cpu_s"`
	ServerCPU    float64 `json:"server_cpu_s"`
	// StoredEvents is the rows of the exporter's logs table afterwards.
	StoredEvents int64 `json:"stored_events"`
	// Serve is run (c), `mcpdrift serve` as shipped, on the same requests
	// in the same invocation; the suite's ratio is against it.
	Serve *Phase `json:"serve"`
	// Version is the Collector's, from its --version; ServerVersion the
	// ClickHouse server's.
	Version       string `json:"collector_version,omitempty"`
	ServerVersion string `json:"server_version,omitempty"`
	// BatchEvents is the batch processor's batch size: run (c)'s events
	// per INSERT.
	BatchEvents int `json:"batch_events"`
}

// builderManifest is the part of a Collector Builder manifest the suite
// reads.
type builderManifest struct {
	Dist struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Version     string `yaml:"version"`
	} `yaml:"dist"`
	Receivers  []struct{ GoMod string } `yaml:"receivers"`
	Processors []struct{ GoMod string } `yaml:"processors"`
	Exporters  []struct{ GoMod string } `yaml:"exporters"`
	Providers  []struct{ GoMod string } `yaml:"providers"`
}

// parseManifest parses a Collector Builder manifest and checks that it
// builds what collectorConfig runs: every module of collectorModules, of
// the manifest's dist.version.
func parseManifest(data []byte) (*builderManifest, error) {
	var m builderManifest
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("cannot parse the manifest: %w", err)
	}
	if m.Dist.Name == "" || m.Dist.Version == "" {
		return nil, fmt.Errorf("the manifest has no dist.name or dist.version (%q, %q)", m.Dist.Name, m.Dist.Version)
	}
	have := map[string]string{}
	for _, list := range [][]struct{ GoMod string }{m.Receivers, m.Processors, m.Exporters} {
		for _, c := range list {
			mod, version, ok := strings.Cut(c.GoMod, " ")
			if !ok {
				return nil, fmt.Errorf("gomod %q has no version", c.GoMod)
			}
			have[mod] = version
		}
	}
	var errs []error
	for typ, mod := range collectorModules {
		switch v, ok := have[mod]; {
		case !ok:
			errs = append(errs, fmt.Errorf("component %s: %s is not in the manifest", typ, mod))
		case v != "v"+m.Dist.Version:
			errs = append(errs, fmt.Errorf("component %s: %s at %s, not the dist version %s", typ, mod, v, m.Dist.Version))
		}
	}
	if len(have) != len(collectorModules) {
		errs = append(errs, fmt.Errorf("the manifest holds %d components, the suite runs %d", len(have), len(collectorModules)))
	}
	// The file provider reads --config=file:…; the env provider serves
	// the default URI scheme, without which the Collector refuses to start.
	for _, want := range []string{"go.opentelemetry.io/collector/confmap/provider/fileprovider", "go.opentelemetry.io/collector/confmap/provider/envprovider"} {
		if !slices.ContainsFunc(m.Providers, func(p struct{ GoMod string }) bool { return strings.HasPrefix(p.GoMod, want+" ") }) {
			errs = append(errs, fmt.Errorf("the manifest has no %s: the Collector could not start on a --config file", want))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &m, nil
}

// collectorConfig returns the Collector's configuration: OTLP/gRPC on
// grpcAddr, the batch processor sealing batches of insertEvents records
// (the events per INSERT of run (c)), and the ClickHouse exporter into
// endpoint with its defaults otherwise (its own schema, created at start;
// asynchronous inserts; its sending queue and retries) but for the
// timeout of an insert: its default 5 s is shorter than an insert of
// that many rows takes on two busy cores, and an insert retried after it
// was in fact stored is stored twice (measured: 286,000 rows for 200,000
// events sent). The Collector's own telemetry is off, and its logs are
// warnings and errors only.
func collectorConfig(grpcAddr, endpoint string, insertEvents int) string {
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
processors:
  batch:
    send_batch_size: %d
    send_batch_max_size: %d
    timeout: 1s
exporters:
  clickhouse:
    endpoint: %s
    timeout: 120s
service:
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      processors: [batch]
      exporters: [clickhouse]
`, grpcAddr, insertEvents, insertEvents, endpoint)
}

// checkStored is the suite's correctness check: every request answered,
// no record rejected, and the logs table holding exactly the events sent.
// A mismatch fails the run; it is never a figure.
func checkStored(requests, wantRequests int, rejected int64, message string, stored, sent int64) error {
	switch {
	case requests != wantRequests:
		return fmt.Errorf("%d of %d requests acknowledged", requests, wantRequests)
	case rejected != 0:
		return fmt.Errorf("%d records rejected: %s", rejected, message)
	case stored != sent:
		return fmt.Errorf("the exporter's %s table holds %d rows, %d events were sent", collectorLogsTable, stored, sent)
	}
	return nil
}

// repoRoot returns the repository's root, the first directory up from the
// working directory that holds collectorBuild: `go run ./bench` runs from
// the root, `go test ./bench` from bench/.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, collectorBuild)); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no %s in the working directory or above it", collectorBuild)
		}
		dir = parent
	}
}

// collectorBinary returns cfg.CollectorBin, or the Collector that
// collectorBuild builds from collectorManifest (cached by the manifest's
// content: the first run builds it, in minutes).
func collectorBinary(ctx context.Context, cfg Config) (string, error) {
	if cfg.CollectorBin != "" {
		return cfg.CollectorBin, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(root, collectorManifest))
	if err != nil {
		return "", err
	}
	if _, err := parseManifest(data); err != nil {
		return "", fmt.Errorf("%s: %w", collectorManifest, err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, collectorBuild), collectorManifest)
	cmd.Dir, cmd.Stderr = root, os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", collectorBuild, collectorManifest, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// runCollectorSuite builds the requests as the ingest suite does (the same
// count, batch and seed), then measures the Collector path (k) and run
// (c) on them, in that order.
func runCollectorSuite(ctx context.Context, cfg Config, tmp string, rep *Report, w io.Writer) error {
	bin, err := collectorBinary(ctx, cfg)
	if err != nil {
		return fmt.Errorf("collector: %w", err)
	}
	fmt.Fprintf(w, "collector: %s; building %d events into requests of %d records…\n", bin, cfg.Events, cfg.Batch)
	rs, err := buildRequests(filepath.Join(tmp, "collector-requests.bin"), cfg.Events, cfg.Batch, cfg.Seed)
	if err != nil {
		return err
	}
	defer rs.close()
	rep.Requests, rep.RequestBytes = len(rs.reqs), rs.bytes()
	ph, err := runCollector(ctx, cfg, bin, rs)
	if ph != nil {
		rep.Collector = ph
	}
	if err != nil {
		return fmt.Errorf("collector → ClickHouse server: %w", err)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	serve, _, _, err := runServe(ctx, cfg, rs)
	if err != nil {
		return fmt.Errorf("collector suite, run (c): %w", err)
	}
	ph.Serve = serve
	return nil
}

// runCollector starts a ClickHouse server from libchdb and the Collector
// bin in front of it, has the sender child send every request to the
// Collector's OTLP/gRPC receiver, and measures the CPU of both processes
// from the first request until the logs table holds every event and both
// are idle.
func runCollector(ctx context.Context, cfg Config, bin string, rs *requestSet) (*CollectorPhase, error) {
	dir, err := os.MkdirTemp(cfg.TempDir, "mcpdrift-bench-collector-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	node, err := clickhousetest.StartServer(ctx, filepath.Join(dir, "clickhouse"))
	if err != nil {
		return nil, fmt.Errorf("cannot start a ClickHouse server: %w", err)
	}
	defer node.Stop()
	st, err := clickhouse.Open(clickhouse.DefaultConfig(node.DSN()))
	if err != nil {
		return nil, err
	}
	defer st.Close()

	version, _ := exec.CommandContext(ctx, bin, "--version").Output()
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	confPath := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(confPath, []byte(collectorConfig(addr, "tcp://"+node.Addr(), cfg.InsertEvents)), 0o644); err != nil {
		return nil, err
	}
	col, err := startCollector(ctx, bin, confPath, filepath.Join(dir, "collector.log"), addr)
	if err != nil {
		return nil, err
	}
	defer col.stop()

	count := func() (int64, error) {
		var rows []struct {
			N uint64 `json:"n"`
		}
		q := store.Query{Name: "bench_collector_count", SQL: "SELECT count() AS n FROM " + collectorDatabase + "." + collectorLogsTable}
		if err := st.Query(ctx, q, nil, &rows); err != nil || len(rows) != 1 {
			return 0, errors.Join(err, fmt.Errorf("count returned %d rows", len(rows)))
		}
		return int64(rows[0].N), nil
	}
	if n, err := count(); err != nil || n != 0 {
		return nil, fmt.Errorf("the exporter's table before the run: %d rows (%v), want an empty table it created", n, err)
	}
	cl, err := startClient(clientSpec{Addr: addr, File: rs.path, Streams: cfg.Streams})
	if err != nil {
		return nil, err
	}
	var (
		res                  clientResult
		send, stored, settle time.Duration
	)
	serverPid, colPid := node.Pid(), col.cmd.Process.Pid
	server0, col0 := processTicks(serverPid), processTicks(colPid)
	t0 := time.Now()
	err = func() error {
		var err error
		if res, err = cl.run(); err != nil {
			return err
		}
		send = time.Since(t0)
		for {
			n, err := count()
			if err == nil && n >= int64(rs.total) {
				break
			}
			if time.Since(t0) > send+settleMax || ctx.Err() != nil {
				return fmt.Errorf("the server holds %d of %d events %s after the last answer (%v)", n, rs.total, settleMax, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		stored = time.Since(t0)
		waitIdleProcess(ctx, colPid)
		waitIdleProcess(ctx, serverPid)
		settle = time.Since(t0) - send
		return nil
	}()
	tick := func(pid int, t0 int64) time.Duration {
		return time.Duration(processTicks(pid)-t0) * time.Second / clockTicks
	}
	colCPU, serverCPU := tick(colPid, col0), tick(serverPid, server0)
	if err != nil {
		return nil, errors.Join(err, col.failure())
	}
	ph := &CollectorPhase{Phase: *phaseOf(usage{CPU: colCPU + serverCPU, Wall: send}, rs.total, &res),
		CollectorCPU: colCPU.Seconds(), ServerCPU: serverCPU.Seconds(), Version: strings.TrimSpace(string(version)),
		BatchEvents: cfg.InsertEvents}
	if v, err := st.Version(ctx); err == nil {
		ph.ServerVersion = v
	}
	ph.Settle, ph.Phase.Stored = settle.Seconds(), stored.Seconds()
	ph.Phase.Requests = uint64(res.Requests)
	if ph.StoredEvents, err = count(); err != nil {
		return nil, err
	}
	// A run that stored other than it was sent measured something else:
	// it fails, and gives no figure.
	if err := checkStored(res.Requests, len(rs.reqs), res.Rejected, res.Message, ph.StoredEvents, int64(rs.total)); err != nil {
		return nil, errors.Join(err, col.failure())
	}
	return ph, nil
}

// freeAddr returns a loopback address with a port free now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// collectorProcess is a running Collector.
type collectorProcess struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error
}

// startCollector starts bin with the configuration confPath, its output
// in logPath, and waits until its OTLP/gRPC receiver accepts connections on
// addr: the Collector starts its exporters before its receivers, so the
// exporter has created its table by then.
func startCollector(ctx context.Context, bin, confPath, logPath, addr string) (*collectorProcess, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "--config=file:"+confPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the Collector %s: %w", bin, err)
	}
	c := &collectorProcess{cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() { c.err = cmd.Wait(); close(c.exited) }()
	const startTimeout = time.Minute
	t0 := time.Now()
	for {
		select {
		case <-c.exited:
			return nil, fmt.Errorf("the Collector exited before listening on %s: %v%s", addr, c.err, c.logTail())
		default:
		}
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return c, nil
		}
		if time.Since(t0) > startTimeout || ctx.Err() != nil {
			return nil, errors.Join(fmt.Errorf("the Collector is not listening on %s after %s%s", addr, startTimeout, c.logTail()), c.stop())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the Collector with SIGTERM and waits for it, SIGKILL after
// 30 s.
func (c *collectorProcess) stop() error {
	select {
	case <-c.exited:
		return nil
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	return nil
}

// failure describes the Collector's state for an error: whether it exited,
// and its log's end.
func (c *collectorProcess) failure() error {
	select {
	case <-c.exited:
		return fmt.Errorf("the Collector exited: %v%s", c.err, c.logTail())
	default:
		return fmt.Errorf("the Collector is running%s", c.logTail())
	}
}

// logTail returns the end of the Collector's log, prefixed for an error
// message, or "".
func (c *collectorProcess) logTail() string {
	b, _ := os.ReadFile(c.logPath)
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "; its log ends:\n" + string(b)
}

// collectorFigures derives the collector suite's figures (k).
func (r *Report) collectorFigures(add func(Figure), ratio func(Figure, string, float64) Figure, met func(bool) *bool) {
	p := r.Collector
	if p == nil || p.Events == 0 {
		return
	}
	perEvent := func(s float64) float64 { return s * 1e6 / float64(p.Events) }
	const serveCPU = "collector.serve_cpu_us_per_event"
	if s := p.Serve; s != nil {
		add(Figure{ID: serveCPU, Label: "(k) beside it: (c) `serve` as shipped, the same requests, CPU", Value: s.CPUPerEvent(), Unit: "µs/event"})
	}
	f := Figure{ID: "collector.cpu_us_per_event", Label: "(k) Collector → ClickHouse server, CPU (both processes)", Value: p.CPUPerEvent(), Unit: "µs/event"}
	if s := p.Serve; s != nil {
		f = ratio(f, serveCPU, s.CPUPerEvent())
		f.Target, f.Met = fmt.Sprintf("≥ %.0f× (c)", targetCollectorRatio), met(f.Ratio >= targetCollectorRatio)
	}
	add(f)
	add(Figure{ID: "collector.collector_cpu_us_per_event", Label: "(k) Collector → server: the Collector process", Value: perEvent(p.CollectorCPU), Unit: "µs/event"})
	add(Figure{ID: "collector.server_cpu_us_per_event", Label: "(k) Collector → server: the server process", Value: perEvent(p.ServerCPU), Unit: "µs/event"})
	if p.Phase.Stored > 0 {
		add(Figure{ID: "collector.stored_events_per_s", Label: "(k) Collector → server, rate stored", Value: float64(p.Events) / p.Phase.Stored, Unit: "events/s"})
	}
}

// targetCollectorRatio is issue 46's target for the Collector path: at
// least 3× the CPU per event of run (c).
const targetCollectorRatio = 3.0
