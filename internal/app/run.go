package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/clientview"
	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/internal/logging"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/selfmetrics"
	"github.com/mcpdrift/mcpdrift/internal/selftrace"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
)

// Run runs the process c describes until ctx ends, then shuts it down
// within c.ShutdownTimeout. The all-in-one role prints where it listens to
// stdout; logs go to stderr. With c.MigrateOnly it migrates and returns.
func Run(ctx context.Context, c Config, version string, stdout, stderr io.Writer) error {
	p, err := Start(ctx, c, version, stdout, stderr)
	if err != nil || c.MigrateOnly {
		return err
	}
	<-ctx.Done()
	return p.Shutdown()
}

// Start starts the process c describes and returns once it serves; the
// caller shuts it down. With c.MigrateOnly it migrates, closes the store
// and returns a process that runs nothing.
func Start(ctx context.Context, c Config, version string, stdout, stderr io.Writer) (_ *Process, err error) {
	log, err := logging.New(stderr, c.LogLevel, c.LogFormat)
	if err != nil {
		return nil, err
	}
	st, err := c.Store.Open(ctx)
	if err != nil {
		return nil, err
	}
	p := &Process{cfg: c, log: log, store: st}
	defer func() {
		if err != nil {
			p.stop()
		}
	}()
	sch := c.Store.Schema()
	log.Info(c.Program+" starting", append([]any{"version", version, "role", string(c.Role)}, c.Store.Describe()...)...)

	switch c.Role {
	case RoleServe:
		if err := migrate(ctx, st, log); err != nil {
			return nil, err
		}
	case RoleAPI:
		if c.Migrate || c.MigrateOnly {
			if err := waitForStore(ctx, st, c.MigrateWait, log); err != nil {
				return nil, err
			}
			if err := migrate(ctx, st, log); err != nil {
				return nil, err
			}
			if c.MigrateOnly {
				p.stop()
				return p, nil
			}
		}
	case RoleIngest:
		if err := schemaReady(ctx, st, sch.Database); err != nil {
			log.Warn("store not ready yet; exports are refused as retryable until it is", "error", err)
		}
	}

	sec, err := newSecurity(c, log)
	if err != nil {
		return nil, err
	}
	if p.traces, err = TracesFromEnv(ctx, c.Role.service(), version); err != nil {
		return nil, err
	}
	if p.traces != nil {
		log.Info("exporting self-traces over OTLP, as the OTEL_ environment variables say")
	}
	storeAttrs := selftrace.StoreAttributes(c.Store.Backend())
	requests := selfmetrics.NewHTTPRequests()
	reg, err := selfmetrics.NewRegistry(selfmetrics.NewBuildInfo(version), requests)
	if err != nil {
		return nil, err
	}

	if c.Role.Ingests() {
		in, err := newIngester(c, st, log, sec, ingest.WithRequestObserver(requests.Listener("otlp_http")),
			ingest.WithTracer(p.traces.Tracer("github.com/mcpdrift/mcpdrift/internal/ingest"), storeAttrs...),
			ingest.WithAdapterWindows(st, sch.Database))
		if err != nil {
			return nil, err
		}
		p.in = in
		if err := in.Start(ctx); err != nil {
			return nil, err
		}
		reg.MustRegister(selfmetrics.NewIngestCollector(in))
	}
	if c.Role.Serves() {
		reports, err := queries.New(st, sch.Database, queries.WithRetentionDays(sch.RetentionDays),
			queries.WithChanges(registry.ChangeOf), queries.WithSameContract(registry.SameContract),
			queries.WithTracer(p.traces.Tracer("github.com/mcpdrift/mcpdrift/queries"), storeAttrs...))
		if err != nil {
			return nil, err
		}
		opts := append(sec.api, api.WithMetrics(selfmetrics.Handler(reg)), api.WithRequestObserver(requests.Listener("api")),
			api.WithTracer(p.traces.Tracer("github.com/mcpdrift/mcpdrift/internal/api")),
			api.WithReadyCheck("migrations", selfmetrics.MigrationsApplied(st, sch)))
		if p.in != nil {
			opts = append(opts, api.WithReadyCheck("spool", func(context.Context) error { return p.in.SpoolReady() }))
		}
		srv, err := api.New(c.API, st, reports, version, log, opts...)
		if err != nil {
			return nil, err
		}
		reg.MustRegister(selfmetrics.NewAPICollector(srv))
		if err := srv.Start(); err != nil {
			return nil, err
		}
		p.api = srv
		rel := clientview.New(st, sch.Database, c.ClientViews, log)
		rctx, cancel := context.WithCancel(context.Background())
		p.releaser, p.stopReleaser = make(chan struct{}), cancel
		go func() {
			defer close(p.releaser)
			rel.Run(rctx)
		}()
		reg.MustRegister(selfmetrics.NewClientViewCollector(rel))
	}
	if c.Role == RoleIngest {
		h, addr, err := startHealth(c.HealthListen, st, sch, p, reg, version, log)
		if err != nil {
			return nil, err
		}
		p.health, p.healthAddr = h, addr
	}
	if c.Role == RoleServe {
		label, where := c.Store.Location()
		fmt.Fprintf(stdout, `mcpdrift %s is running
  OTLP/gRPC  %s
  OTLP/HTTP  %s://%s/v1/logs
  API        %s://%s/api/v1/tools
  console    %s://%s/
  %-10s %s
  spool      %s
Press Ctrl-C to stop.
`, version, p.in.GRPCAddr(), scheme(c.OTLPTLS.Enabled()), p.in.HTTPAddr(), scheme(c.API.TLS.Enabled()), p.api.Addr(),
			scheme(c.API.TLS.Enabled()), p.api.Addr(), label, where, orOff(c.Ingest.Spool.Dir))
	}
	return p, nil
}

// NewIngester returns the ingester of c's role, not started, assembled as
// Start assembles it — c's ingest configuration, redaction, TLS and tokens —
// but writing to w, its logs to stderr, with neither self-traces nor the
// adapter windows Start restores from its store: the bench measures it
// without a store.
func NewIngester(c Config, w store.Writer, stderr io.Writer, opts ...ingest.Option) (*ingest.Server, error) {
	if !c.Role.Ingests() {
		return nil, fmt.Errorf("the %s role runs no ingester", c.Role)
	}
	log, err := logging.New(stderr, c.LogLevel, c.LogFormat)
	if err != nil {
		return nil, err
	}
	sec, err := newSecurity(c, log)
	if err != nil {
		return nil, err
	}
	return newIngester(c, w, log, sec, opts...)
}

func newIngester(c Config, w store.Writer, log *slog.Logger, sec security, opts ...ingest.Option) (*ingest.Server, error) {
	return ingest.New(c.Ingest, w, log, append(slices.Clip(sec.ingest), opts...)...)
}

// Process is the components a Start started.
type Process struct {
	cfg        Config
	log        *slog.Logger
	store      Store
	in         *ingest.Server
	api        *api.Server
	health     *http.Server
	healthAddr string
	traces     *Traces // nil unless the environment asks for self-traces
	// releaser is closed once the client views' releaser has stopped,
	// which stopReleaser asks; nil for a role without one.
	releaser     chan struct{}
	stopReleaser context.CancelFunc
	draining     atomic.Bool // readiness fails from the start of the shutdown
	done         bool
}

// Traced reports whether the process exports self-traces (see
// TracesFromEnv).
func (p *Process) Traced() bool { return p.traces != nil }

// Store is the process's store.
func (p *Process) Store() Store { return p.store }

// Ingester is the OTLP ingester, nil for a role without one.
func (p *Process) Ingester() *ingest.Server { return p.in }

// API is the report API, nil for a role without one.
func (p *Process) API() *api.Server { return p.api }

// HealthAddr is the address the ingest role's health listener is bound
// to, empty for the other roles.
func (p *Process) HealthAddr() string { return p.healthAddr }

// Shutdown stops the components gracefully, within the configured
// shutdown timeout: readiness fails first, the API stops, the ingester
// finishes the requests in flight and writes what is pending; then the
// store is closed.
func (p *Process) Shutdown() error {
	if p.done {
		return nil
	}
	p.done = true
	p.draining.Store(true)
	p.log.Info("shutting down", "timeout", p.cfg.ShutdownTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.ShutdownTimeout)
	defer cancel()
	var errs []error
	if p.api != nil {
		errs = append(errs, p.api.Shutdown(ctx))
	}
	p.stopRelease()
	if p.in != nil {
		errs = append(errs, p.in.Shutdown(ctx))
	}
	if p.health != nil {
		errs = append(errs, p.health.Shutdown(ctx))
	}
	// After the components: the spans of the last batches are exported.
	errs = append(errs, p.traces.Shutdown(ctx))
	errs = append(errs, p.store.Close())
	p.log.Info(p.cfg.Program + " stopped")
	return errors.Join(errs...)
}

// stop releases what a failed or migrate-only start left running.
func (p *Process) stop() {
	if p.done {
		return
	}
	p.done = true
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.ShutdownTimeout)
	defer cancel()
	if p.api != nil {
		_ = p.api.Shutdown(ctx)
	}
	p.stopRelease()
	if p.in != nil {
		_ = p.in.Shutdown(ctx)
	}
	if p.health != nil {
		_ = p.health.Shutdown(ctx)
	}
	_ = p.traces.Shutdown(ctx)
	_ = p.store.Close()
}

// stopRelease stops the client views' releaser and waits for it: a
// release in flight ends with its context.
func (p *Process) stopRelease() {
	if p.releaser == nil {
		return
	}
	p.stopReleaser()
	<-p.releaser
}

// migrate applies the pending migrations.
func migrate(ctx context.Context, st Store, log *slog.Logger) error {
	applied, err := st.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("cannot migrate: %w", err)
	}
	log.Info("schema up to date", "migrations_applied", applied)
	return nil
}

// waitForStore pings the store until it answers, for at most wait.
func waitForStore(ctx context.Context, st Store, wait time.Duration, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	delay := 500 * time.Millisecond
	for {
		err := st.Ping(ctx)
		if err == nil {
			return nil
		}
		log.Warn("waiting for the store", "error", err, "retry_in", delay)
		select {
		case <-ctx.Done():
			return fmt.Errorf("the store did not answer within migrate.wait (%v): %w", wait, err)
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// scheme returns https with TLS, http without.
func scheme(tls bool) string {
	if tls {
		return "https"
	}
	return "http"
}

func orOff(dir string) string {
	if dir == "" {
		return "off (exports are acknowledged once stored)"
	}
	return dir
}
