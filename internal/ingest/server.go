// Package ingest is the ingester's pipeline: what package receiver decodes
// from OTLP it batches per tenant, appends to the spool (package spool),
// drops again when a client retries an export already made durable (the
// recent ids and their journal), replays from the spool in large inserts,
// and writes to a store.Writer; an export is acknowledged only once its
// events are durable. Server is the ingester: a receiver in front of this
// pipeline, with the counters of both (Stats).
package ingest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/mcpdrift/mcpdrift/internal/redact"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// Server is the OTLP ingester: a receiver (the OTLP/gRPC and OTLP/HTTP
// listeners) in front of one batcher per tenant writing to one
// store.Writer.
//
// New starts the batcher; Shutdown must be called once the server is no
// longer needed, whether or not it was started.
type Server struct {
	cfg    Config
	logger *slog.Logger
	recv   *receiver.Server

	tenants tenants // every tenant's batcher and spool
	stats   counters
	tr      tracing // zero without WithTracer
	// multiTenant is set by WithTokens: requests carry their tenant, and
	// the spools of other tenants are replayed at start.
	multiTenant bool
	// recvOpts are the options of the receiver, gathered by Option.
	recvOpts []receiver.Option
	// windowsFrom and windowsDB are where the adapters' windows are
	// restored from at start (WithAdapterWindows); nil: nowhere.
	windowsFrom store.Querier
	windowsDB   string

	mu      sync.Mutex
	started bool
	stopped bool
}

// Option configures a Server: the receiver's security (tokens, TLS,
// redaction), its request observer, the tracer, the adapters' windows.
type Option func(*Server)

// WithTokens makes the ingester accept only exports that carry a bearer
// token with the ingest scope (receiver.WithTokens) and store their events
// under the token's tenant. Each tenant gets its own batcher, and with a
// spool its own spool directory under Spool.Dir/tenants/, so that a batch
// holds one tenant's events; the pending-events and spool bounds apply per
// tenant.
func WithTokens(tokens *auth.Tokens) Option {
	return func(s *Server) {
		s.multiTenant = tokens != nil
		s.recvOpts = append(s.recvOpts, receiver.WithTokens(tokens))
	}
}

// WithTLS makes both listeners serve TLS with cfg (receiver.WithTLS).
func WithTLS(cfg *tls.Config) Option {
	return func(s *Server) { s.recvOpts = append(s.recvOpts, receiver.WithTLS(cfg)) }
}

// WithRedactor redacts every decoded event before it is batched, spooled,
// stored or logged (receiver.WithRedactor).
func WithRedactor(r *redact.Redactor) Option {
	return func(s *Server) { s.recvOpts = append(s.recvOpts, receiver.WithRedactor(r)) }
}

// RequestObserver records each OTLP/HTTP request answered.
type RequestObserver = receiver.RequestObserver

// WithRequestObserver has o record every OTLP/HTTP request
// (receiver.WithRequestObserver).
func WithRequestObserver(o RequestObserver) Option {
	return func(s *Server) { s.recvOpts = append(s.recvOpts, receiver.WithRequestObserver(o)) }
}

// New returns a server for cfg writing to w. It validates cfg and starts the
// batcher, but listens only once Start is called. A nil logger discards logs.
func New(cfg Config, w store.Writer, logger *slog.Logger, opts ...Option) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if w == nil {
		return nil, errors.New("cannot create ingester: nil store writer")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, logger: logger}
	s.tenants.w = w
	for _, o := range opts {
		o(s)
	}
	recv, err := receiver.New(cfg.receiver(), s, logger, s.recvOpts...)
	if err != nil {
		return nil, err
	}
	s.recv = recv
	s.tenants.mu.Lock()
	_, err = s.openTenantLocked(cfg.Tenant)
	s.tenants.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("cannot open the ingest spool: %w", err)
	}
	if err := s.openSpooledTenants(); err != nil {
		_ = s.Shutdown(context.Background())
		return nil, err
	}
	return s, nil
}

// HTTPHandler returns the OTLP/HTTP handler, the one served on HTTPListen.
func (s *Server) HTTPHandler() http.Handler { return s.recv.HTTPHandler() }

// Start binds both listeners and serves them in the background. It returns
// once both are listening, or with the first error, having bound nothing.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return ErrShuttingDown
	}
	if !s.started {
		s.restoreAdapterWindows(ctx)
	}
	// A second Start fails here, as the receiver is listening already.
	if err := s.recv.Start(ctx); err != nil {
		return err
	}
	s.started = true
	s.logger.Info("OTLP ingest listening",
		"grpc", s.recv.GRPCAddr().String(), "http", s.recv.HTTPAddr().String(),
		"tenant", s.cfg.Tenant, "batch_max_events", s.cfg.BatchMaxEvents,
		"batch_max_delay", s.cfg.BatchMaxDelay, "max_pending_events", s.cfg.MaxPendingEvents,
		"spool", s.cfg.Spool.Dir, "spool_max_bytes", s.cfg.Spool.MaxBytes, "spool_after", s.cfg.SpoolAfter)
	return nil
}

// GRPCAddr returns the address the OTLP/gRPC listener is bound to, nil
// before Start.
func (s *Server) GRPCAddr() net.Addr { return s.recv.GRPCAddr() }

// HTTPAddr returns the address the OTLP/HTTP listener is bound to, nil
// before Start.
func (s *Server) HTTPAddr() net.Addr { return s.recv.HTTPAddr() }

// AuthFailures returns how many exports were refused for their token.
func (s *Server) AuthFailures() uint64 { return s.recv.AuthFailures() }

// Redacted returns how many values redaction replaced.
func (s *Server) Redacted() uint64 { return s.recv.Redacted() }

// Stats returns the counters since New, the receiver's and the
// pipeline's; the spool's gauges are those of every tenant's spool
// together.
func (s *Server) Stats() Stats {
	st := s.stats.snapshot(s.recv.Stats())
	s.eachTenant(func(t *tenant) {
		if t.sp != nil {
			sp := t.sp.Stats()
			st.Spool.Bytes += sp.Bytes
			st.Spool.FullestBytes = max(st.Spool.FullestBytes, sp.Bytes)
			st.Spool.MaxBytes = s.cfg.Spool.MaxBytes
			st.Spool.Records += sp.Records
			st.Spool.Quarantined += sp.Quarantined
			st.Spool.ReplayedFromMemory += sp.CacheReads
		}
	})
	return st
}

// Shutdown stops the server gracefully: it stops accepting connections and
// requests, lets the requests in flight finish — their batches are written —
// then writes what is pending and stops the batcher. When ctx ends first,
// requests still in flight are cancelled and fail as retryable, and the
// error of ctx is returned. Calls after the first return nil.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	s.mu.Unlock()

	var errs []error
	s.drainTenants()
	if err := s.recv.Shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	// When ctx ended, give up on the requests in flight: cancelling the
	// batchers below fails their writes, Close then drops the connections.
	defer s.recv.Close()
	if err := s.shutdownTenants(ctx); err != nil {
		errs = append(errs, err)
	}
	st := s.Stats()
	s.logger.Info("OTLP ingest stopped",
		"requests", st.Requests, "records", st.Records, "accepted", st.Accepted,
		"rejected", st.Rejected, "ignored", st.Ignored, "spans", st.Spans,
		"spans_accepted", st.SpansAccepted, "spans_rejected", st.SpansRejected,
		"spans_ignored", st.SpansIgnored, "events_stored", st.EventsStored,
		"dedup_hits", st.DedupHits, "spool_records", st.Spool.Records, "spool_bytes", st.Spool.Bytes)
	return errors.Join(errs...)
}

// Store hands the events of one request of tenant to its batcher and waits
// until they are durable: the receiver.Sink of s.recv.
func (s *Server) Store(ctx context.Context, tenant string, events []otelschema.Event, copied func()) error {
	tn, err := s.tenantFor(tenant)
	if err != nil {
		copied()
		return err
	}
	t, err := tn.b.enqueue(ctx, events)
	// The batcher copied the events: the slice can serve another request.
	copied()
	if err == nil {
		err = t.wait(ctx)
	}
	return err
}

// ErrSpoolNearlyFull is returned by SpoolReady when the spool has less than
// one segment of room left: the next stretch of store trouble would refuse
// exports.
var ErrSpoolNearlyFull = errors.New("spool nearly full")

// SpoolReady reports whether every tenant's spool has room for at least
// one more segment; it is nil without a spool. Readiness checks use it to
// take an instance whose store cannot keep up out of rotation before it
// refuses exports.
func (s *Server) SpoolReady() error {
	var err error
	s.eachTenant(func(t *tenant) {
		if t.sp == nil || err != nil {
			return
		}
		st := t.sp.Stats()
		if room := s.cfg.Spool.MaxBytes - st.Bytes; room < s.cfg.Spool.SegmentBytes {
			err = fmt.Errorf("%w: tenant %s: %d of %d bytes used, %d records waiting for the store", ErrSpoolNearlyFull, t.name, st.Bytes, s.cfg.Spool.MaxBytes, st.Records)
		}
	})
	return err
}
