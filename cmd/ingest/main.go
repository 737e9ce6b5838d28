// Command ingest is the scale-out OTLP ingester: any number of them run
// against one ClickHouse server or cluster (-store.dsn), stateless, behind a
// load balancer. It never migrates the schema (the api does, see its
// -migrate flag) and is ready once the store answers and events_in exists.
// For a single machine, `mcpdrift serve` runs ingest and API together on the
// embedded store.
//
// Every flag can be set through the environment: -store.dsn ←
// MCPDRIFT_STORE_DSN; flags win.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/envflag"
	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/internal/logging"
	"github.com/mcpdrift/mcpdrift/internal/redact"
	"github.com/mcpdrift/mcpdrift/internal/selfmetrics"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is everything the command is configured with, one section per
// component.
type config struct {
	// Store is the ClickHouse server backend.
	Store clickhouse.Config
	// Ingest is the OTLP ingester.
	Ingest ingest.Config
	// Auth is the token file, and whether the ingester may listen beyond
	// loopback without one.
	Auth auth.Flags
	// TLS are the TLS settings of both OTLP listeners.
	TLS auth.TLSConfig
	// Redact are the redaction rules and key.
	Redact redact.Flags
	// HealthListen serves /healthz and /readyz.
	HealthListen string
	// ShutdownTimeout bounds the graceful shutdown: requests in flight
	// finish and pending events are written.
	ShutdownTimeout time.Duration
	// LogLevel and LogFormat shape the structured logs.
	LogLevel, LogFormat string
	// CheckOnly validates the configuration and exits.
	CheckOnly bool
}

// parseConfig parses args (with the MCPDRIFT_* environment overlaid) and
// validates the result, naming the first invalid field.
func parseConfig(args []string, stderr io.Writer) (config, error) {
	c := config{
		Store:           clickhouse.DefaultConfig(""),
		Ingest:          ingest.DefaultConfig(),
		HealthListen:    "0.0.0.0:8081",
		ShutdownTimeout: 30 * time.Second,
	}
	c.Ingest.GRPCListen, c.Ingest.HTTPListen = "0.0.0.0:4317", "0.0.0.0:4318"
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.Store.RegisterFlags(fs)
	fs.StringVar(&c.Ingest.GRPCListen, "otlp.grpc.listen", c.Ingest.GRPCListen, "OTLP/gRPC listen address")
	fs.StringVar(&c.Ingest.HTTPListen, "otlp.http.listen", c.Ingest.HTTPListen, "OTLP/HTTP listen address")
	fs.IntVar(&c.Ingest.MaxRequestBytes, "otlp.max-request-bytes", c.Ingest.MaxRequestBytes, "largest OTLP request accepted, compressed or not")
	fs.IntVar(&c.Ingest.BatchMaxEvents, "ingest.batch.max-events", c.Ingest.BatchMaxEvents, "events per store write")
	fs.DurationVar(&c.Ingest.BatchMaxDelay, "ingest.batch.max-delay", c.Ingest.BatchMaxDelay, "longest a batch waits before it is written")
	fs.IntVar(&c.Ingest.MaxPendingEvents, "ingest.max-pending-events", c.Ingest.MaxPendingEvents, "events awaiting their write beyond which exports are refused (503/UNAVAILABLE)")
	fs.DurationVar(&c.Ingest.WriteTimeout, "ingest.write-timeout", c.Ingest.WriteTimeout, "timeout of one store write")
	fs.StringVar(&c.Ingest.Tenant, "ingest.tenant", c.Ingest.Tenant, "tenant every event is stored under while ingest runs without tokens")
	c.Auth.Register(fs)
	c.TLS.RegisterFlags(fs, "otlp.tls", "the OTLP listeners")
	c.Redact.Register(fs)
	fs.StringVar(&c.HealthListen, "health.listen", c.HealthListen, "listen address of /healthz and /readyz")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown.timeout", c.ShutdownTimeout, "longest graceful shutdown")
	fs.StringVar(&c.LogLevel, "log.level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.LogFormat, "log.format", "json", "log format: text or json")
	fs.BoolVar(&c.CheckOnly, "config.check", false, "validate the configuration and exit")
	if err := envflag.Parse(fs, args, "MCPDRIFT"); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.Store.DSN == "" {
		return c, errors.New("store.dsn: required (MCPDRIFT_STORE_DSN): this role runs against a ClickHouse server; for one machine, run `mcpdrift serve`, which embeds the store")
	}
	if err := c.Store.Validate(); err != nil {
		return c, err
	}
	if err := c.Ingest.Validate(); err != nil {
		return c, err
	}
	if err := c.TLS.Validate("otlp.tls"); err != nil {
		return c, err
	}
	if err := c.Auth.Check([2]string{"otlp.grpc.listen", c.Ingest.GRPCListen}, [2]string{"otlp.http.listen", c.Ingest.HTTPListen}); err != nil {
		return c, err
	}
	if _, err := c.Auth.Load(); err != nil {
		return c, err
	}
	if _, err := c.Redact.Build(); err != nil {
		return c, err
	}
	if _, _, err := net.SplitHostPort(c.HealthListen); err != nil {
		return c, fmt.Errorf("health.listen: invalid address %q: %w", c.HealthListen, err)
	}
	if c.ShutdownTimeout <= 0 {
		return c, fmt.Errorf("shutdown.timeout: must be positive, not %v", c.ShutdownTimeout)
	}
	if _, err := logging.New(io.Discard, c.LogLevel, c.LogFormat); err != nil {
		return c, err
	}
	return c, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "ingest:", err)
		return 2
	}
	if cfg.CheckOnly {
		fmt.Fprintln(stdout, "ingest: configuration is valid")
		return 0
	}
	if err := serve(cfg, stderr); err != nil {
		fmt.Fprintln(stderr, "ingest:", err)
		return 1
	}
	return 0
}

func serve(cfg config, stderr io.Writer) error {
	log, _ := logging.New(stderr, cfg.LogLevel, cfg.LogFormat)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	st, err := clickhouse.Open(cfg.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	log.Info("ingest starting", "version", version, "store", cfg.Store.RedactedDSN(), "addrs", st.Addrs(),
		"database", cfg.Store.Schema.Database, "cluster", cfg.Store.Schema.Cluster)
	if err := schemaReady(ctx, st, cfg.Store.Schema.Database); err != nil {
		log.Warn("store not ready yet; exports are refused as retryable until it is", "error", err)
	}

	opts, err := securityOptions(cfg, log)
	if err != nil {
		return err
	}
	in, err := ingest.New(cfg.Ingest, st, log, opts...)
	if err != nil {
		return err
	}
	if err := in.Start(ctx); err != nil {
		_ = in.Shutdown(context.Background())
		return err
	}
	var draining atomic.Bool
	health, err := startHealth(cfg.HealthListen, st, cfg.Store.Schema, in, &draining, log)
	if err != nil {
		_ = in.Shutdown(context.Background())
		return err
	}

	<-ctx.Done()
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	draining.Store(true)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	errI := in.Shutdown(sctx)
	errH := health.Shutdown(sctx)
	log.Info("ingest stopped")
	return errors.Join(errI, errH)
}

// ready reports whether the store answers and holds the schema, every
// migration this binary embeds applied.
func ready(ctx context.Context, st *clickhouse.Store, opts schema.Options) error {
	if err := schemaReady(ctx, st, opts.Database); err != nil {
		return err
	}
	return selfmetrics.MigrationsApplied(st, opts)(ctx)
}

// schemaReady reports whether the store answers and holds the events table.
func schemaReady(ctx context.Context, st *clickhouse.Store, database string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := st.Ping(ctx); err != nil {
		return err
	}
	var rows []struct {
		N int `json:"n"`
	}
	q := store.Query{Name: "schema_ready", SQL: "SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = 'events_in'"}
	if err := st.Query(ctx, q, store.Params{}.String("db", database), &rows); err != nil {
		return err
	}
	if len(rows) != 1 || rows[0].N == 0 {
		return fmt.Errorf("table %s.events_in does not exist: the schema is not migrated yet (the api migrates it)", database)
	}
	return nil
}

// startHealth serves /healthz (the process runs), /readyz (the store is
// ready, the spool not full and the process not shutting down) and
// /metrics (the ingester's own metrics).
func startHealth(addr string, st *clickhouse.Store, opts schema.Options, in *ingest.Server, draining *atomic.Bool, log *slog.Logger) (*http.Server, error) {
	reg, err := selfmetrics.NewRegistry(selfmetrics.NewIngestCollector(in))
	if err != nil {
		return nil, fmt.Errorf("cannot register the metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", selfmetrics.Handler(reg))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"status\":\"ok\",\"version\":%q}\n", version)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if draining.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, `{"status":"shutting down"}`)
			return
		}
		err := ready(r.Context(), st, opts)
		if err == nil {
			err = in.SpoolReady()
		}
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "{\"status\":\"not ready\",\"detail\":%q}\n", err.Error())
			return
		}
		fmt.Fprintln(w, `{"status":"ready"}`)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("health server stopped", "error", err)
		}
	}()
	log.Info("health listening", "addr", ln.Addr().String())
	return srv, nil
}

// securityOptions returns the ingester's options for tokens, TLS and
// redaction.
func securityOptions(cfg config, log *slog.Logger) ([]ingest.Option, error) {
	tokens, err := cfg.Auth.Load()
	if err != nil {
		return nil, err
	}
	redactor, err := cfg.Redact.Build()
	if err != nil {
		return nil, err
	}
	tlsCfg, err := cfg.TLS.Server()
	if err != nil {
		return nil, fmt.Errorf("otlp.tls: %w", err)
	}
	opts := []ingest.Option{ingest.WithRedactor(redactor), ingest.WithTLS(tlsCfg)}
	if tokens != nil {
		opts = append(opts, ingest.WithTokens(tokens))
		log.Info("bearer tokens required", "file", cfg.Auth.TokensFile, "tokens", tokens.Len(), "tenants", tokens.Tenants())
	} else {
		log.Warn("running without tokens: every event is stored under the single tenant", "tenant", cfg.Ingest.Tenant)
	}
	if redactor.Ephemeral() {
		log.Warn("no -redact.key-file: redaction markers use a random key, so equal secrets correlate only within this process")
	}
	return opts, nil
}
