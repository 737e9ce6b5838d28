// Command ingestd is the process the fault tests kill, starve and restart:
// the OTLP ingester with a spool over the embedded store, as mcpdrift serve
// runs it, behind a store.Writer that fails or hangs on demand (the real
// store cannot), with a control endpoint for that and for the ingester's
// Stats. With -count it instead prints, for every stored call event, its
// request id and how many times it is stored, plus the rollups' call
// totals, and exits.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ingestd:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg := ingest.DefaultConfig()
	dataDir := flag.String("data.dir", "", "embedded store directory")
	count := flag.Bool("count", false, "print what the store holds and exit")
	control := flag.String("control.listen", "127.0.0.1:0", "control endpoint: /fault?mode=ok|fail|hang, /stats")
	flag.StringVar(&cfg.HTTPListen, "otlp.http.listen", "127.0.0.1:0", "")
	flag.StringVar(&cfg.GRPCListen, "otlp.grpc.listen", "127.0.0.1:0", "")
	flag.Int64Var(&cfg.MaxInflightBytes, "otlp.max-inflight-bytes", cfg.MaxInflightBytes, "")
	flag.StringVar(&cfg.Spool.Dir, "ingest.spool.dir", "", "")
	flag.Int64Var(&cfg.Spool.MaxBytes, "ingest.spool.max-bytes", cfg.Spool.MaxBytes, "")
	flag.Int64Var(&cfg.Spool.SegmentBytes, "ingest.spool.segment-bytes", 1<<20, "")
	flag.BoolVar(&cfg.Spool.Fsync, "ingest.spool.fsync", true, "")
	flag.DurationVar(&cfg.SpoolAfter, "ingest.spool.after", time.Second, "")
	flag.IntVar(&cfg.BatchMaxEvents, "ingest.batch.max-events", 5000, "")
	flag.DurationVar(&cfg.BatchMaxDelay, "ingest.batch.max-delay", 50*time.Millisecond, "")
	flag.DurationVar(&cfg.WriteTimeout, "ingest.write-timeout", 10*time.Second, "")
	ack := flag.String("ingest.ack", string(cfg.Ack), "")
	flag.IntVar(&cfg.InsertMaxEvents, "ingest.insert.max-events", 20000, "")
	flag.DurationVar(&cfg.InsertMaxDelay, "ingest.insert.max-delay", 300*time.Millisecond, "")
	flag.Parse()
	cfg.Ack = ingest.AckMode(*ack)

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := embedded.Open(ctx, embedded.DefaultConfig(*dataDir))
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	if *count {
		return printCounts(ctx, st)
	}

	fw := &faultWriter{Store: st, release: make(chan struct{})}
	srv, err := ingest.New(cfg, fw, log)
	if err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *control)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/fault", func(w http.ResponseWriter, r *http.Request) {
		if err := fw.set(r.URL.Query().Get("mode")); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(srv.Stats())
	})
	csrv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = csrv.Serve(ln) }()
	// The test reads the addresses from this line.
	_ = json.NewEncoder(os.Stdout).Encode(map[string]string{
		"http": srv.HTTPAddr().String(), "grpc": srv.GRPCAddr().String(), "control": ln.Addr().String(),
	})
	<-ctx.Done()
	_ = fw.set("ok")
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = csrv.Shutdown(sctx)
	return srv.Shutdown(sctx)
}

// faultWriter is the embedded store with writes that fail or hang on
// demand. It keeps the store's EventIDsSince, which the ingester uses.
type faultWriter struct {
	*embedded.Store
	mu      sync.Mutex
	mode    string
	release chan struct{} // closed when a hang ends
}

func (f *faultWriter) set(mode string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch mode {
	case "ok", "fail", "hang":
	default:
		return fmt.Errorf("unknown mode %q: want ok, fail or hang", mode)
	}
	if f.mode == "hang" && mode != "hang" {
		close(f.release)
		f.release = make(chan struct{})
	}
	f.mode = mode
	return nil
}

var errInjected = errors.New("injected store outage")

// Write implements store.Writer.
func (f *faultWriter) Write(ctx context.Context, b store.Batch) error {
	if err := f.fault(); err != nil {
		return err
	}
	return f.Store.Write(ctx, b)
}

// WriteNative is the store's, with the same faults as Write: the
// replayer writes its groups through it.
func (f *faultWriter) WriteNative(ctx context.Context, token string, blk *chwire.NativeBlock) error {
	if err := f.fault(); err != nil {
		return err
	}
	return f.Store.WriteNative(ctx, token, blk)
}

// fault applies the mode: an error to return, or a hang past the
// write's context, as a stuck engine would, until the hang ends: then
// the write goes ahead all the same.
func (f *faultWriter) fault() error {
	f.mu.Lock()
	mode, release := f.mode, f.release
	f.mu.Unlock()
	switch mode {
	case "fail":
		return errInjected
	case "hang":
		<-release
	}
	return nil
}

func printCounts(ctx context.Context, st *embedded.Store) error {
	var rows []struct {
		RequestID string `json:"request_id"`
		N         int    `json:"n"`
	}
	q := store.Query{Name: "fault_counts", SQL: "SELECT request_id, toInt64(count()) AS n FROM mcpdrift.events WHERE event_name = 'mcp.drift.call' GROUP BY request_id"}
	if err := st.Query(ctx, q, nil, &rows); err != nil {
		return err
	}
	var sums []struct {
		Events  int64 `json:"events"`
		Audit   int64 `json:"audit"`
		Recent  int64 `json:"recent_calls"`
		Calls1h int64 `json:"calls_1h"`
		Calls1d int64 `json:"calls_1d"`
		Usage1h int64 `json:"usage_1h"`
		Usage1d int64 `json:"usage_1d"`
	}
	q = store.Query{Name: "fault_sums", SQL: `SELECT
		(SELECT toInt64(count()) FROM mcpdrift.events WHERE event_name = 'mcp.drift.call') AS events,
		(SELECT toInt64(count()) FROM mcpdrift.events WHERE audited) AS audit,
		(SELECT toInt64(count()) FROM mcpdrift.recent_calls) AS recent_calls,
		(SELECT toInt64(sum(calls)) FROM mcpdrift.calls_1h) AS calls_1h,
		(SELECT toInt64(sum(calls)) FROM mcpdrift.calls_1d) AS calls_1d,
		(SELECT toInt64(sum(calls)) FROM mcpdrift.usage_1h) AS usage_1h,
		(SELECT toInt64(sum(calls)) FROM mcpdrift.usage_1d) AS usage_1d`}
	if err := st.Query(ctx, q, nil, &sums); err != nil {
		return err
	}
	counts := make(map[string]int, len(rows))
	for _, r := range rows {
		counts[r.RequestID] = r.N
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"counts": counts, "sums": sums[0]})
}
