// Command api is the scale-out report API: any number of them run against
// one ClickHouse server or cluster (-store.dsn), stateless, behind a load
// balancer. It applies pending schema migrations at start-up unless
// -migrate=false; -migrate.only applies them and exits, for a Kubernetes Job
// or a one-off step. Concurrent migrators are safe: every statement is
// idempotent (IF NOT EXISTS), so several api replicas starting at once may
// all migrate. For a single machine, `mcpdrift serve` runs ingest and API
// together on the embedded store.
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
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/envflag"
	"github.com/mcpdrift/mcpdrift/internal/logging"
	"github.com/mcpdrift/mcpdrift/internal/selfmetrics"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
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
	// API is the HTTP API.
	API api.Config
	// Auth is the token file, and whether the API may listen beyond
	// loopback without one.
	Auth auth.Flags
	// Migrate applies pending migrations at start-up.
	Migrate bool
	// MigrateOnly applies pending migrations and exits.
	MigrateOnly bool
	// MigrateWait is how long start-up waits for the store to answer
	// before migrating.
	MigrateWait time.Duration
	// ShutdownTimeout bounds the graceful shutdown.
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
		API:             api.DefaultConfig(),
		Migrate:         true,
		MigrateWait:     2 * time.Minute,
		ShutdownTimeout: 30 * time.Second,
	}
	c.API.Listen = "0.0.0.0:8080"
	fs := flag.NewFlagSet("api", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.Store.RegisterFlags(fs)
	fs.StringVar(&c.API.Listen, "api.listen", c.API.Listen, "API listen address")
	fs.DurationVar(&c.API.QueryTimeout, "api.query-timeout", c.API.QueryTimeout, "timeout of one report query")
	fs.StringVar(&c.API.Tenant, "api.tenant", c.API.Tenant, "tenant every request is bound to while the API runs without tokens")
	fs.DurationVar(&c.API.ReadHeaderTimeout, "api.read-header-timeout", c.API.ReadHeaderTimeout, "longest a client may take to send its request headers")
	fs.DurationVar(&c.API.ReadTimeout, "api.read-timeout", c.API.ReadTimeout, "longest a client may take to send its whole request")
	fs.DurationVar(&c.API.WriteTimeout, "api.write-timeout", c.API.WriteTimeout, "longest from the end of the request headers to the end of the answer (more than api.query-timeout)")
	fs.DurationVar(&c.API.IdleTimeout, "api.idle-timeout", c.API.IdleTimeout, "keep-alive connections idle this long are closed")
	fs.IntVar(&c.API.MaxHeaderBytes, "api.max-header-bytes", c.API.MaxHeaderBytes, "largest request line and headers accepted (431 beyond)")
	c.API.TLS.RegisterFlags(fs, "api.tls", "the API")
	c.Auth.Register(fs)
	fs.BoolVar(&c.Migrate, "migrate", c.Migrate, "apply pending schema migrations at start-up")
	fs.BoolVar(&c.MigrateOnly, "migrate.only", false, "apply pending schema migrations and exit")
	fs.DurationVar(&c.MigrateWait, "migrate.wait", c.MigrateWait, "how long start-up waits for ClickHouse to answer before migrating")
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
	if err := c.API.Validate(); err != nil {
		return c, err
	}
	if err := c.Auth.Check([2]string{"api.listen", c.API.Listen}); err != nil {
		return c, err
	}
	if _, err := c.Auth.Load(); err != nil {
		return c, err
	}
	switch {
	case c.MigrateOnly && !c.Migrate:
		return c, errors.New("migrate.only: contradicts migrate=false")
	case c.MigrateWait <= 0:
		return c, fmt.Errorf("migrate.wait: must be positive, not %v", c.MigrateWait)
	case c.ShutdownTimeout <= 0:
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
		fmt.Fprintln(stderr, "api:", err)
		return 2
	}
	if cfg.CheckOnly {
		fmt.Fprintln(stdout, "api: configuration is valid")
		return 0
	}
	if err := serve(cfg, stderr); err != nil {
		fmt.Fprintln(stderr, "api:", err)
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
	log.Info("api starting", "version", version, "store", cfg.Store.RedactedDSN(), "addrs", st.Addrs(),
		"database", cfg.Store.Schema.Database, "cluster", cfg.Store.Schema.Cluster)

	if cfg.Migrate || cfg.MigrateOnly {
		if err := waitForStore(ctx, st, cfg.MigrateWait, log); err != nil {
			return err
		}
		applied, err := st.Migrate(ctx)
		if err != nil {
			return fmt.Errorf("cannot migrate: %w", err)
		}
		log.Info("schema up to date", "migrations_applied", applied, "retention_days", cfg.Store.Schema.RetentionDays,
			"audit_retention_days", cfg.Store.Schema.AuditRetentionDays)
		if cfg.MigrateOnly {
			return nil
		}
	}

	reports, err := queries.New(st, cfg.Store.Schema.Database, queries.WithRetentionDays(cfg.Store.Schema.RetentionDays))
	if err != nil {
		return err
	}
	tokens, err := cfg.Auth.Load()
	if err != nil {
		return err
	}
	var opts []api.Option
	if tokens != nil {
		opts = append(opts, api.WithTokens(tokens))
		log.Info("bearer tokens required", "file", cfg.Auth.TokensFile, "tokens", tokens.Len(), "tenants", tokens.Tenants())
	} else {
		log.Warn("running without tokens: every request is served as the single tenant", "tenant", cfg.API.Tenant)
	}
	reg, err := selfmetrics.NewRegistry()
	if err != nil {
		return err
	}
	opts = append(opts, api.WithMetrics(selfmetrics.Handler(reg)),
		api.WithReadyCheck("migrations", selfmetrics.MigrationsApplied(st, cfg.Store.Schema)))
	srv, err := api.New(cfg.API, st, reports, version, log, opts...)
	if err != nil {
		return err
	}
	reg.MustRegister(selfmetrics.NewAPICollector(srv))
	if err := srv.Start(); err != nil {
		return err
	}

	<-ctx.Done()
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	log.Info("api stopped")
	return err
}

// waitForStore pings the store until it answers, for at most wait.
func waitForStore(ctx context.Context, st *clickhouse.Store, wait time.Duration, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	delay := 500 * time.Millisecond
	for {
		err := st.Ping(ctx)
		if err == nil {
			return nil
		}
		log.Warn("waiting for ClickHouse", "error", err, "retry_in", delay)
		select {
		case <-ctx.Done():
			return fmt.Errorf("ClickHouse did not answer within migrate.wait (%v): %w", wait, err)
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}
