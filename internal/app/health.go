package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpdrift/mcpdrift/internal/selfmetrics"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// readyTimeout bounds one readiness check.
const readyTimeout = 5 * time.Second

// ingestReady reports whether the ingest role can take exports: the
// store answers (on a cluster, every shard: Store.Ping), holds the
// schema, every migration this binary embeds applied and the schema lock,
// and the spool has room.
func ingestReady(ctx context.Context, st Store, sch schema.Options, p *Process) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := schemaReady(ctx, st, sch.Database); err != nil {
		return err
	}
	if err := selfmetrics.MigrationsApplied(st, sch)(ctx); err != nil {
		return err
	}
	// The schema lock, which a migrator of this release creates: without
	// it inserts are refused (schema.WriteGuard), so that none meets a
	// migration of an api that does not take the lock.
	if _, err := schema.Epoch(ctx, st, sch.Database); err != nil {
		return fmt.Errorf("%w: %w (an api of this release migrates it)", selfmetrics.ErrMigrationsPending, err)
	}
	return p.in.SpoolReady()
}

// startHealth serves, for the ingest role, /healthz (the process runs),
// /readyz (ingestReady, and the process not shutting down) and /metrics.
func startHealth(addr string, st Store, sch schema.Options, p *Process, reg *prometheus.Registry, version string, log *slog.Logger) (*http.Server, string, error) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", selfmetrics.Handler(reg))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"status\":\"ok\",\"version\":%q}\n", version)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if p.draining.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, `{"status":"shutting down"}`)
			return
		}
		if err := ingestReady(r.Context(), st, sch, p); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "{\"status\":\"not ready\",\"detail\":%q}\n", err.Error())
			return
		}
		fmt.Fprintln(w, `{"status":"ready"}`)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("health server stopped", "error", err)
		}
	}()
	log.Info("health listening", "addr", ln.Addr().String())
	return srv, ln.Addr().String(), nil
}
