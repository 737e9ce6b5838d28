// Package ingest receives drift events over OTLP — gRPC and HTTP, protobuf
// and JSON, compressed as the OTLP exporters send them; log events, and spans that follow the OpenTelemetry MCP
// semantic conventions — decodes them with otelschema, batches them and
// writes them to a store.Writer. An export is acknowledged only once its
// events are durable; records that fail validation are reported through
// OTLP partial success; overload and retryable store errors are answered
// with HTTP 503 and Retry-After, or gRPC UNAVAILABLE with RetryInfo.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/grpc"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// Server is the OTLP ingester: an OTLP/gRPC and an OTLP/HTTP listener in
// front of one batcher writing to one store.Writer.
//
// New starts the batcher; Shutdown must be called once the server is no
// longer needed, whether or not it was started.
type Server struct {
	cfg     Config
	logger  *slog.Logger
	decoder otelschema.Decoder

	tenants  tenants // every tenant's batcher and spool
	inflight *budget // request bytes held at once; nil: unbounded
	stats    counters
	sec      security        // tokens, TLS, redaction (security.go)
	observer RequestObserver // nil without WithRequestObserver
	tr       tracing         // zero without WithTracer
	// windowsFrom and windowsDB are where the adapters' windows are
	// restored from at start (WithAdapterWindows); nil: nowhere.
	windowsFrom store.Querier
	windowsDB   string

	events   sync.Pool // *[]otelschema.Event decoded from one request
	bodies   sync.Pool // *bytes.Buffer holding one request body
	decoders decoders  // decompressors of OTLP/HTTP bodies

	handler http.Handler
	grpcSrv *grpc.Server

	mu       sync.Mutex
	httpSrv  *http.Server
	httpAddr net.Addr
	grpcAddr net.Addr
	started  bool
	stopped  bool
	serving  sync.WaitGroup
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
	s := &Server{
		cfg:      cfg,
		logger:   logger,
		decoder:  otelschema.Decoder{Limits: cfg.Limits},
		inflight: newBudget(cfg.MaxInflightBytes),
	}
	s.stats.legacy = make([]atomic.Uint64, len(otelschema.LegacyNames()))
	s.tenants.w = w
	s.initSecurity(opts)
	s.handler = s.observeHTTP(s.authHTTP(s.newMux()))
	s.grpcSrv = grpc.NewServer(append([]grpc.ServerOption{grpc.MaxRecvMsgSize(cfg.MaxRequestBytes), grpc.ForceServerCodecV2(newGRPCCodec())}, s.grpcOptions()...)...)
	s.grpcSrv.RegisterService(&logsServiceDesc, &grpcLogs{s: s})
	s.grpcSrv.RegisterService(&tracesServiceDesc, &grpcTraces{s: s})
	s.tenants.mu.Lock()
	_, err := s.openTenantLocked(cfg.Tenant)
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
func (s *Server) HTTPHandler() http.Handler { return s.handler }

// Start binds both listeners and serves them in the background. It returns
// once both are listening, or with the first error, having bound nothing.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped:
		return ErrShuttingDown
	case s.started:
		return errors.New("cannot start ingester: already started")
	}
	s.restoreAdapterWindows(ctx)
	var lc net.ListenConfig
	grpcLn, err := lc.Listen(ctx, "tcp", s.cfg.GRPCListen)
	if err != nil {
		return fmt.Errorf("cannot listen for OTLP/gRPC on %s: %w", s.cfg.GRPCListen, err)
	}
	httpLn, err := lc.Listen(ctx, "tcp", s.cfg.HTTPListen)
	if err != nil {
		_ = grpcLn.Close()
		return fmt.Errorf("cannot listen for OTLP/HTTP on %s: %w", s.cfg.HTTPListen, err)
	}
	httpLn = s.wrapTLS(httpLn)
	s.httpSrv = &http.Server{
		Handler:           s.handler,
		MaxHeaderBytes:    maxHeaderBytes,
		ReadHeaderTimeout: 10 * time.Second,
		// Bounds how long a slow client may hold a connection while sending
		// its body; the answer may then wait for the batch, unbounded here.
		ReadTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute,
		ErrorLog:    slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	s.grpcAddr, s.httpAddr = grpcLn.Addr(), httpLn.Addr()
	s.started = true
	s.serving.Add(2)
	go func() {
		defer s.serving.Done()
		if err := s.grpcSrv.Serve(grpcLn); err != nil {
			s.logger.Error("OTLP/gRPC server stopped", "addr", s.grpcAddr.String(), "error", err)
		}
	}()
	go func() {
		defer s.serving.Done()
		if err := s.httpSrv.Serve(httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("OTLP/HTTP server stopped", "addr", s.httpAddr.String(), "error", err)
		}
	}()
	s.logger.Info("OTLP ingest listening",
		"grpc", s.grpcAddr.String(), "http", s.httpAddr.String(),
		"tenant", s.cfg.Tenant, "batch_max_events", s.cfg.BatchMaxEvents,
		"batch_max_delay", s.cfg.BatchMaxDelay, "max_pending_events", s.cfg.MaxPendingEvents,
		"spool", s.cfg.Spool.Dir, "spool_max_bytes", s.cfg.Spool.MaxBytes, "spool_after", s.cfg.SpoolAfter)
	return nil
}

// GRPCAddr returns the address the OTLP/gRPC listener is bound to, nil
// before Start.
func (s *Server) GRPCAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grpcAddr
}

// HTTPAddr returns the address the OTLP/HTTP listener is bound to, nil
// before Start.
func (s *Server) HTTPAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.httpAddr
}

// Stats returns the counters since New; the spool's gauges are those of
// every tenant's spool together.
func (s *Server) Stats() Stats {
	st := s.stats.snapshot()
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
	started := s.started
	s.mu.Unlock()

	var errs []error
	s.drainTenants()
	if started {
		grpcDone := make(chan struct{})
		go func() {
			defer close(grpcDone)
			s.grpcSrv.GracefulStop()
		}()
		if err := s.httpSrv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("cannot shut down OTLP/HTTP gracefully: %w", err))
		}
		select {
		case <-grpcDone:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("cannot shut down OTLP/gRPC gracefully: %w", ctx.Err()))
		}
		if ctx.Err() != nil {
			// Give up on the requests in flight: cancelling the batcher
			// below fails their writes, Close and Stop drop the connections.
			defer func() {
				_ = s.httpSrv.Close()
				s.grpcSrv.Stop()
				<-grpcDone
				s.serving.Wait()
			}()
		} else {
			s.serving.Wait()
		}
	}
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

// ingestLogs decodes ld, batches its events and waits until they are
// durable. It returns what became of the records, and an error when the
// events were not stored.
func (s *Server) ingestLogs(ctx context.Context, ld plog.Logs) (res otelschema.Result, err error) {
	ctx, span := s.tr.startRequest(ctx, "logs")
	defer func() { endRequest(span, res, err) }()
	dst := s.getEvents()
	events, res := s.decoder.DecodeLogs(ld, (*dst)[:0])
	s.countLogs(res)
	return res, s.store(ctx, dst, events)
}

// ingestLogsProto is ingestLogs for the protobuf bytes of a request, which
// it decodes without pdata; release is called once b is decoded, before
// the wait. When b is not a request, it counts it malformed and returns an
// error that wraps errMalformed.
func (s *Server) ingestLogsProto(ctx context.Context, b []byte, release func()) (res otelschema.Result, err error) {
	ctx, span := s.tr.startRequest(ctx, "logs")
	defer func() { endRequest(span, res, err) }()
	dst := s.getEvents()
	events, res, err := s.decoder.DecodeLogsProto(b, (*dst)[:0])
	n := len(b)
	// The events hold copies: b can serve another request.
	release()
	if err != nil {
		s.putEvents(dst, events)
		s.stats.refusedMalformed.Add(1)
		return res, fmt.Errorf("%w: cannot decode request of %d bytes: %w", errMalformed, n, err)
	}
	s.countLogs(res)
	return res, s.store(ctx, dst, events)
}

// countLogs counts the log records of a decoded request and what became of
// them.
func (s *Server) countLogs(res otelschema.Result) {
	s.stats.records.Add(uint64(res.Accepted + res.Rejected + res.Ignored))
	s.stats.accepted.Add(uint64(res.Accepted))
	s.stats.rejected.Add(uint64(res.Rejected))
	s.stats.ignored.Add(uint64(res.Ignored))
	s.stats.countRejections(res)
	s.stats.countLegacy(res)
}

// ingestTraces decodes the MCP spans of td into events, batches them and
// waits until they are durable, as ingestLogs does for log records.
func (s *Server) ingestTraces(ctx context.Context, td ptrace.Traces) (res otelschema.Result, err error) {
	ctx, span := s.tr.startRequest(ctx, "traces")
	defer func() { endRequest(span, res, err) }()
	s.stats.spans.Add(uint64(td.SpanCount()))
	dst := s.getEvents()
	events, res := s.decoder.DecodeTraces(td, (*dst)[:0])
	s.stats.spansAccepted.Add(uint64(res.Accepted))
	s.stats.spansRejected.Add(uint64(res.Rejected))
	s.stats.spansIgnored.Add(uint64(res.Ignored))
	s.stats.countRejections(res)
	s.stats.countLegacy(res)
	return res, s.store(ctx, dst, events)
}

// store batches the events decoded into the pooled slice dst and waits
// until they are durable.
func (s *Server) store(ctx context.Context, dst *[]otelschema.Event, events []otelschema.Event) error {
	s.redact(events)
	tn, err := s.tenantFor(ctx)
	if err != nil {
		s.putEvents(dst, events)
		return err
	}
	t, err := tn.b.enqueue(ctx, events)
	// The batcher copied the events: the slice can serve another request.
	s.putEvents(dst, events)
	if err == nil {
		err = t.wait(ctx)
	}
	return err
}

// maxPooledEvents bounds the capacity of the event slices kept for reuse.
const maxPooledEvents = 1 << 16

func (s *Server) getEvents() *[]otelschema.Event {
	if p, ok := s.events.Get().(*[]otelschema.Event); ok {
		return p
	}
	return new([]otelschema.Event)
}

func (s *Server) putEvents(p *[]otelschema.Event, events []otelschema.Event) {
	if cap(events) > maxPooledEvents {
		return
	}
	// Not cleared: the next decode overwrites the events it appends, and
	// the pool drops its slices within two garbage collections, so stale
	// strings are kept only briefly — cheaper than clearing every time.
	*p = events[:0]
	s.events.Put(p)
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
