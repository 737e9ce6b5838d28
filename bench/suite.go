package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// Bounds of Config.Batch.
const (
	minBatch = 100
	maxBatch = 1000
)

// Targets of the design's performance requirements.
const (
	targetIngestRatio  = 2.0  // ingest without store ≤ 2× a bare pdata decode
	targetStoreCPUUsEv = 10.0 // ingest into the embedded store ≤ 10 CPU-µs/event
)

// Config configures a run of the suite.
type Config struct {
	// Events is the number of events sent through each run.
	Events int
	// Batch is the number of log records per OTLP request, minBatch to
	// maxBatch.
	Batch int
	// Streams is the number of concurrent senders, each with one request in
	// flight, and the number of goroutines of the baseline decode.
	Streams int
	// IngestBatch is the ingester's BatchMaxEvents; 0 means Streams × Batch,
	// at most the ingester's default: the senders wait for their answers, so
	// a store batch is sealed as soon as every sender has a request in it.
	IngestBatch int
	// Seed is the simulator's seed.
	Seed uint64
	// Out is where the results are written as JSON; empty means nowhere.
	Out string
	// CPUProfile, when set, is where a CPU profile of the store run (c) is
	// written.
	CPUProfile string
	// SkipStore skips the store run (c).
	SkipStore bool
	// TempDir holds the requests file and the store's data directory; empty
	// means the system's temporary directory.
	TempDir string
	// Logger receives the ingester's and the store's logs; nil logs warnings
	// and errors to stderr.
	Logger *slog.Logger
}

// DefaultConfig returns the configuration of `make bench`.
func DefaultConfig() Config {
	return Config{
		Events:  1_000_000,
		Batch:   500,
		Streams: 4,
		Seed:    1,
		Out:     filepath.Join("bench", "results", "latest.json"),
	}
}

// Validate reports the first invalid field by name.
func (c Config) Validate() error {
	switch {
	case c.Events < 1:
		return fmt.Errorf("events must be positive, got %d", c.Events)
	case c.Batch < minBatch || c.Batch > maxBatch:
		return fmt.Errorf("batch must be between %d and %d, got %d", minBatch, maxBatch, c.Batch)
	case c.Streams < 1:
		return fmt.Errorf("streams must be positive, got %d", c.Streams)
	case c.IngestBatch < 0:
		return fmt.Errorf("ingest.batch-events must not be negative, got %d", c.IngestBatch)
	}
	return nil
}

// usage is the CPU and wall time of one measured phase.
type usage struct {
	CPU  time.Duration // the process's user + system time
	Wall time.Duration
}

// processCPU returns the user + system time of the whole process, every
// thread included (chDB's too).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic("getrusage: " + err.Error()) // cannot fail with RUSAGE_SELF
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs f and returns the process's CPU and wall time during it.
func measure(f func() error) (usage, error) {
	runtime.GC()
	cpu0, wall0 := processCPU(), time.Now()
	err := f()
	return usage{CPU: processCPU() - cpu0, Wall: time.Since(wall0)}, err
}

// Run builds the requests, runs the suite, prints the table to w and writes
// the JSON results to cfg.Out. It returns the report with an error when a
// run failed or the counts differ; the figures are never judged.
func Run(ctx context.Context, cfg Config, w io.Writer) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.IngestBatch == 0 {
		cfg.IngestBatch = min(cfg.Streams*cfg.Batch, ingest.DefaultConfig().BatchMaxEvents)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	tmp, err := os.MkdirTemp(cfg.TempDir, "mcpdrift-bench-")
	if err != nil {
		return nil, fmt.Errorf("cannot create temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	rep := newReport(cfg)
	fmt.Fprint(w, rep.header())
	fmt.Fprintf(w, "building %d events into requests of %d records…\n", cfg.Events, cfg.Batch)
	t0 := time.Now()
	rs, err := buildRequests(filepath.Join(tmp, "requests.bin"), cfg.Events, cfg.Batch, cfg.Seed)
	if err != nil {
		return nil, err
	}
	defer rs.close()
	rep.Requests, rep.RequestBytes = len(rs.reqs), rs.bytes()
	fmt.Fprintf(w, "built %d requests, %.1f MiB, %.0f B/event on the wire, in %s\n\n",
		len(rs.reqs), float64(rs.bytes())/(1<<20), float64(rs.bytes())/float64(rs.total), time.Since(t0).Round(time.Millisecond))

	runErr := runAll(ctx, cfg, rs, rep)
	rep.finish()
	fmt.Fprint(w, rep.table())
	if runErr != nil {
		rep.Error = runErr.Error()
	}
	if cfg.Out != "" {
		if err := rep.writeJSON(cfg.Out); err != nil {
			return rep, errors.Join(runErr, err)
		}
		fmt.Fprintf(w, "\nresults written to %s\n", cfg.Out)
	}
	return rep, runErr
}

func runAll(ctx context.Context, cfg Config, rs *requestSet, rep *Report) error {
	// (a) The baseline: a bare pdata decode of the same requests.
	u, err := measure(func() error { return decodeAll(ctx, rs, cfg.Streams) })
	if err != nil {
		return fmt.Errorf("baseline decode: %w", err)
	}
	rep.Baseline = phaseOf(u, rs.total, nil)

	// (b) The ingester without a store.
	var d discard
	ph, err := runIngest(ctx, cfg, rs, &d, "")
	if ph != nil {
		rep.NoStore = ph
	}
	if err != nil {
		return fmt.Errorf("ingest without store: %w", err)
	}
	if n := d.events.Load(); n != int64(rs.total) {
		return fmt.Errorf("ingest without store: the writer received %d events, %d were sent", n, rs.total)
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	// (c) The ingester into the embedded store.
	if cfg.SkipStore {
		return nil
	}
	return runStore(ctx, cfg, rs, rep)
}

// runStore opens and migrates an embedded store in a temporary data
// directory, runs the ingester into it and checks the stored count.
func runStore(ctx context.Context, cfg Config, rs *requestSet, rep *Report) error {
	dir, err := os.MkdirTemp(cfg.TempDir, "mcpdrift-bench-store-")
	if err != nil {
		return fmt.Errorf("cannot create store directory: %w", err)
	}
	defer os.RemoveAll(dir)
	scfg := embedded.DefaultConfig(dir)
	st, err := embedded.Open(ctx, scfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return fmt.Errorf("cannot migrate the store: %w", err)
	}
	rep.Machine.ClickHouse = st.Version()

	ph, err := runIngest(ctx, cfg, rs, st, cfg.CPUProfile)
	if ph != nil {
		rep.Store = ph
	}
	if err != nil {
		return fmt.Errorf("ingest into the embedded store: %w", err)
	}
	var rows []struct {
		N uint64 `json:"n"`
	}
	q := store.Query{Name: "bench_count", SQL: "SELECT count() AS n FROM " + scfg.Schema.Database + ".events WHERE tenant = {tenant:String}"}
	if err := st.Query(ctx, q, store.Params{}.String("tenant", store.DefaultTenant), &rows); err != nil {
		return fmt.Errorf("cannot count stored events: %w", err)
	}
	if len(rows) != 1 {
		return fmt.Errorf("count query returned %d rows", len(rows))
	}
	rep.Stored = int64(rows[0].N)
	if rep.Stored != int64(rs.total) {
		return fmt.Errorf("stored %d events, %d were sent", rep.Stored, rs.total)
	}
	return nil
}

// decodeAll unmarshals every request once with pdata, on streams
// goroutines.
func decodeAll(ctx context.Context, rs *requestSet, streams int) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for range streams {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(rs.reqs) || ctx.Err() != nil {
					return
				}
				req := plogotlp.NewExportRequest()
				if err := req.UnmarshalProto(rs.reqs[i]); err != nil {
					errOnce.Do(func() { first = fmt.Errorf("cannot unmarshal request %d of %d bytes: %w", i, len(rs.reqs[i]), err) })
					return
				}
				if n := req.Logs().LogRecordCount(); n != rs.events[i] {
					errOnce.Do(func() { first = fmt.Errorf("request %d holds %d records, want %d", i, n, rs.events[i]) })
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// discard is a store.Writer that counts the events and keeps nothing.
type discard struct{ events atomic.Int64 }

func (d *discard) Write(_ context.Context, b store.Batch) error {
	d.events.Add(int64(len(b.Events)))
	return nil
}

// Settling: after the last answer, the store run keeps measuring until the
// process is idle — the engine's background merges are part of what an
// insert costs — for at most settleMax.
const (
	settleWindow = 250 * time.Millisecond
	settleIdle   = 0.05 // of one core
	settleMax    = 30 * time.Second
)

// runIngest starts an ingester writing to w, has the sender child send
// every request through it over OTLP/gRPC, and measures the ingester's
// process from the start signal to the last answer — then, for the store,
// until the process is idle. It profiles that window to profilePath when
// set, and checks the ingester's counters.
func runIngest(ctx context.Context, cfg Config, rs *requestSet, w store.Writer, profilePath string) (*Phase, error) {
	icfg := ingest.DefaultConfig()
	icfg.GRPCListen, icfg.HTTPListen = "127.0.0.1:0", "127.0.0.1:0"
	icfg.BatchMaxEvents = cfg.IngestBatch
	icfg.MaxPendingEvents = max(icfg.MaxPendingEvents, 2*cfg.Streams*cfg.Batch, cfg.IngestBatch)
	srv, err := ingest.New(icfg, w, cfg.Logger)
	if err != nil {
		return nil, err
	}
	shutdown := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return srv.Shutdown(sctx)
	}
	if err := srv.Start(ctx); err != nil {
		return nil, errors.Join(err, shutdown())
	}
	var prof *os.File
	if profilePath != "" {
		if prof, err = os.Create(profilePath); err != nil {
			return nil, errors.Join(fmt.Errorf("cannot create CPU profile: %w", err), shutdown())
		}
		defer prof.Close()
	}
	cl, err := startClient(clientSpec{Addr: srv.GRPCAddr().String(), File: rs.path, Streams: cfg.Streams})
	if err != nil {
		return nil, errors.Join(err, shutdown())
	}

	_, isStore := w.(*embedded.Store)
	var (
		res    clientResult
		send   time.Duration
		settle time.Duration
	)
	u, err := measure(func() error {
		if prof != nil {
			if err := pprof.StartCPUProfile(prof); err != nil {
				return fmt.Errorf("cannot start CPU profile: %w", err)
			}
			defer pprof.StopCPUProfile()
		}
		t0 := time.Now()
		var err error
		res, err = cl.run()
		send = time.Since(t0)
		if err == nil && isStore {
			settle = waitIdle(ctx)
		}
		return err
	})
	stats := srv.Stats()
	err = errors.Join(err, shutdown())
	if err != nil {
		return nil, err
	}
	ph := phaseOf(usage{CPU: u.CPU, Wall: send}, rs.total, &res)
	ph.Settle = settle.Seconds()
	switch {
	case res.Requests != len(rs.reqs):
		err = fmt.Errorf("%d of %d requests acknowledged", res.Requests, len(rs.reqs))
	case res.Rejected != 0:
		err = fmt.Errorf("%d records rejected: %s", res.Rejected, res.Message)
	case stats.Accepted != uint64(rs.total) || stats.Rejected != 0 || stats.Ignored != 0:
		err = fmt.Errorf("ingester accepted %d, rejected %d, ignored %d of %d records", stats.Accepted, stats.Rejected, stats.Ignored, rs.total)
	case stats.EventsStored != uint64(rs.total):
		err = fmt.Errorf("ingester stored %d of %d events", stats.EventsStored, rs.total)
	}
	ph.Requests = stats.Requests
	return ph, err
}

// waitIdle waits until the process uses less than settleIdle of a core over
// a settleWindow, for at most settleMax, and returns how long it waited.
func waitIdle(ctx context.Context) time.Duration {
	t0 := time.Now()
	for time.Since(t0) < settleMax && ctx.Err() == nil {
		c0 := processCPU()
		time.Sleep(settleWindow)
		if float64(processCPU()-c0) < settleIdle*float64(settleWindow) {
			break
		}
	}
	return time.Since(t0)
}
