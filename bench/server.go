package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
)

// ServerPhase is the measurement of the ingest role against a ClickHouse
// server: the ingester in this process, the server in its own.
type ServerPhase struct {
	Phase
	// IngestCPU and ServerCPU split CPU (their sum) between the two
	// processes, in seconds.
	IngestCPU float64 `json:"ingest_cpu_s"`
	ServerCPU float64 `json:"server_cpu_s"`
	// Inserts is the INSERTs into events_in the server ran (its
	// query_log); StoredEvents the events it holds afterwards.
	Inserts      int64 `json:"inserts"`
	StoredEvents int64 `json:"stored_events"`
	// InsertCPU is the CPU the server's INSERTs took, their views
	// included, in seconds (query_log); InsertPeakBytes the most memory
	// one of them held.
	InsertCPU       float64 `json:"insert_cpu_s,omitempty"`
	InsertPeakBytes int64   `json:"insert_peak_bytes,omitempty"`
	// Merges is the background merges the server launched and
	// MergedRows the rows they read (system.events).
	Merges     int64 `json:"merges,omitempty"`
	MergedRows int64 `json:"merged_rows,omitempty"`
	// Views is each materialised view's part of the server's work.
	Views []ViewCost `json:"views,omitempty"`
}

// RowsPerInsert is the mean rows of the server's INSERTs.
func (p *ServerPhase) RowsPerInsert() float64 {
	if p.Inserts == 0 {
		return 0
	}
	return float64(p.StoredEvents) / float64(p.Inserts)
}

// runServer is run (c) for the scale-out ingest role: a ClickHouse server
// run from libchdb (clickhousetest), migrated as `api` would, and the
// ingester assembled by app exactly as `ingest` runs it — its defaults
// (spool, acknowledgement, redaction) and the same overrides as (c) — on
// loopback, the sender child sending every request. CPU is that of both
// processes, from the first request until every event is stored and both
// are idle; the ingester's shutdown writes its last inserts.
func runServer(ctx context.Context, cfg Config, rs *requestSet, rep *Report) error {
	dir, err := os.MkdirTemp(cfg.TempDir, "mcpdrift-bench-server-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	node, err := clickhousetest.StartServer(ctx, filepath.Join(dir, "clickhouse"))
	if err != nil {
		return fmt.Errorf("cannot start a ClickHouse server: %w", err)
	}
	defer node.Stop()
	st, err := clickhouse.Open(clickhouse.DefaultConfig(node.DSN()))
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return fmt.Errorf("cannot migrate the server: %w", err)
	}
	if v, err := st.Version(ctx); err == nil {
		rep.Machine.ClickHouseServer = v
	}

	args := append(ingestArgs(cfg, rs), "-store.dsn="+node.DSN(), "-health.listen=127.0.0.1:0",
		"-ingest.spool.dir="+filepath.Join(dir, "spool"))
	args = append(args, cfg.ServerFlags...)
	c := app.DefaultConfig(app.RoleIngest, "ingest", app.NewServerStore())
	if err := c.Parse(args, os.Stderr); err != nil {
		return err
	}
	c.NoRedaction = !cfg.Redact
	p, err := app.Start(ctx, c, "bench", nopWriter{}, os.Stderr)
	if err != nil {
		return err
	}
	stopped := false
	shutdown := func() error {
		if stopped {
			return nil
		}
		stopped = true
		return p.Shutdown()
	}
	defer shutdown()
	cl, err := startClient(clientSpec{Addr: p.Ingester().GRPCAddr().String(), File: rs.path, Streams: cfg.Streams})
	if err != nil {
		return err
	}

	count := func() (int64, error) {
		var rows []struct {
			N uint64 `json:"n"`
		}
		q := store.Query{Name: "bench_server_count", SQL: "SELECT count() AS n FROM mcpdrift.events"}
		if err := st.Query(ctx, q, nil, &rows); err != nil || len(rows) != 1 {
			return 0, errors.Join(err, fmt.Errorf("count returned %d rows", len(rows)))
		}
		return int64(rows[0].N), nil
	}
	var (
		res    clientResult
		send   time.Duration
		stored time.Duration
		settle time.Duration
	)
	var prof *os.File
	if cfg.ServerCPUProfile != "" {
		if prof, err = os.Create(cfg.ServerCPUProfile); err != nil {
			return fmt.Errorf("cannot create CPU profile: %w", err)
		}
		defer prof.Close()
	}
	pid := node.Pid()
	server0 := processTicks(pid)
	u, err := measure(func() error {
		if prof != nil {
			if err := pprof.StartCPUProfile(prof); err != nil {
				return fmt.Errorf("cannot start CPU profile: %w", err)
			}
			defer pprof.StopCPUProfile()
		}
		t0 := time.Now()
		var err error
		if res, err = cl.run(); err != nil {
			return err
		}
		send = time.Since(t0)
		// The shutdown writes the inserts still waiting for more batches.
		if err := shutdown(); err != nil {
			return err
		}
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
		waitIdle(ctx)
		waitIdleProcess(ctx, pid)
		settle = time.Since(t0) - send
		return nil
	})
	serverCPU := time.Duration(processTicks(pid)-server0) * time.Second / clockTicks
	if err != nil {
		return err
	}
	ph := &ServerPhase{Phase: *phaseOf(usage{CPU: u.CPU + serverCPU, Wall: send}, rs.total, &res),
		IngestCPU: u.CPU.Seconds(), ServerCPU: serverCPU.Seconds()}
	ph.Settle, ph.Phase.Stored = settle.Seconds(), stored.Seconds()
	n, err := count()
	if err != nil {
		return err
	}
	ph.Phase.Requests = uint64(res.Requests)
	ph.StoredEvents = n
	if err := st.Exec(ctx, "SYSTEM FLUSH LOGS", nil); err != nil {
		return err
	}
	if err := serverWork(ctx, st, ph); err != nil {
		return err
	}
	if ph.Views, err = viewCosts(ctx, st); err != nil {
		return err
	}
	rep.Server = ph
	switch {
	case res.Requests != len(rs.reqs):
		return fmt.Errorf("ingest → server: %d of %d requests acknowledged", res.Requests, len(rs.reqs))
	case res.Rejected != 0:
		return fmt.Errorf("ingest → server: %d records rejected: %s", res.Rejected, res.Message)
	case n != int64(rs.total):
		return fmt.Errorf("ingest → server: the server holds %d events, %d were sent", n, rs.total)
	}
	return nil
}

//go:embed server.sql
var serverSQL string

// serverWork reads the server's INSERTs and merges (server.sql) into ph,
// from a server whose logs are flushed.
func serverWork(ctx context.Context, q store.Querier, ph *ServerPhase) error {
	var rows []struct {
		Inserts    uint64 `json:"inserts"`
		CPUus      uint64 `json:"insert_cpu_us"`
		PeakBytes  uint64 `json:"insert_peak_bytes"`
		Merges     uint64 `json:"merges"`
		MergedRows uint64 `json:"merged_rows"`
	}
	if err := q.Query(ctx, store.Query{Name: "bench_server_work", SQL: serverSQL}, nil, &rows); err != nil {
		return fmt.Errorf("cannot read the server's inserts and merges: %w", err)
	}
	if len(rows) != 1 {
		return fmt.Errorf("the server's inserts and merges: got %d rows, want 1", len(rows))
	}
	r := rows[0]
	ph.Inserts, ph.InsertCPU, ph.InsertPeakBytes = int64(r.Inserts), float64(r.CPUus)/1e6, int64(r.PeakBytes)
	ph.Merges, ph.MergedRows = int64(r.Merges), int64(r.MergedRows)
	return nil
}

// ingestDefaultMaxPending is the ingester's default MaxPendingEvents.
var ingestDefaultMaxPending = app.DefaultConfig(app.RoleIngest, "ingest", app.NewServerStore()).Ingest.MaxPendingEvents

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// processTicks returns the user + system clock ticks of process pid, its
// threads included, 0 when it cannot be read.
func processTicks(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'. utime and stime are fields 14 and 15.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}

// waitIdleProcess waits until process pid uses less than settleIdle of a
// core over a settleWindow, for at most settleMax.
func waitIdleProcess(ctx context.Context, pid int) {
	t0 := time.Now()
	for time.Since(t0) < settleMax && ctx.Err() == nil {
		c0 := processTicks(pid)
		time.Sleep(settleWindow)
		used := time.Duration(processTicks(pid)-c0) * time.Second / clockTicks
		if float64(used) < settleIdle*float64(settleWindow) {
			return
		}
	}
}

// nopWriter discards what is written to it.
type nopWriter struct{}

func (nopWriter) Write(b []byte) (int, error) { return len(b), nil }
