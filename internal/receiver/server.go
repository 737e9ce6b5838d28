// Package receiver is the OTLP wire of the ingester: the OTLP/gRPC and
// OTLP/HTTP servers, protobuf and JSON, the content codings the OTLP
// exporters send, the request and in-flight byte bounds, authentication,
// TLS and redaction at the boundary, the decoding of log records and MCP
// spans into drift events (otelschema), and the answer: partial success
// for records that fail validation, 400 / 413 / 415 / 500 and 503 with
// Retry-After (gRPC codes with RetryInfo) for refused requests.
//
// What it decodes it hands to a Sink — the pipeline of package ingest —
// and answers once the Sink says the events are durable.
package receiver

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

	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// Sink takes the events the receiver decoded: package ingest's pipeline.
type Sink interface {
	// Store hands the events of one request, authenticated for tenant, to
	// the pipeline and waits until they are durable or ctx ends. It calls
	// copied exactly once, as soon as it no longer reads events (having
	// copied them, or refused them), so that the receiver may reuse the
	// slice while the request waits. The span of ctx, if any, is the
	// request's. Its errors are answered as refuse.go classifies them.
	Store(ctx context.Context, tenant string, events []otelschema.Event, copied func()) error
}

// Config is what the receiver needs of the ingester's configuration; the
// fields are those of ingest.Config, which validates them.
type Config struct {
	// GRPCListen and HTTPListen are the host:port of the listeners; port
	// 0 picks a free port.
	GRPCListen, HTTPListen string
	// MaxRequestBytes bounds one export request, as received and once
	// decompressed.
	MaxRequestBytes int
	// MaxInflightBytes bounds the bytes of request bodies held at once;
	// zero means unbounded.
	MaxInflightBytes int64
	// RetryAfter is the delay suggested to clients refused with a
	// retryable error.
	RetryAfter time.Duration
	// Limits bound what one record may carry.
	Limits otelschema.Limits
	// Tenant is the tenant of requests without a token.
	Tenant string
}

// Server is the OTLP receiver: an OTLP/gRPC and an OTLP/HTTP listener in
// front of one Sink.
type Server struct {
	cfg     Config
	logger  *slog.Logger
	decoder otelschema.Decoder
	sink    Sink

	inflight *budget // request bytes held at once; nil: unbounded
	stats    counters
	sec      security        // tokens, TLS, redaction (security.go)
	observer RequestObserver // nil without WithRequestObserver
	tr       tracing         // zero without WithTracer

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
	// abandon is closed when gRPC stops; set by a Shutdown whose context
	// ended, for Close.
	abandon chan struct{}
}

// New returns a receiver for cfg handing events to sink; it listens only
// once Start is called. A nil logger discards logs.
func New(cfg Config, sink Sink, logger *slog.Logger, opts ...Option) (*Server, error) {
	if sink == nil {
		return nil, errors.New("cannot create receiver: nil sink")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg:      cfg,
		logger:   logger,
		decoder:  otelschema.Decoder{Limits: cfg.Limits},
		sink:     sink,
		inflight: newBudget(cfg.MaxInflightBytes),
	}
	s.stats.legacy = make([]atomic.Uint64, len(otelschema.LegacyNames()))
	s.initSecurity(opts)
	s.handler = s.observeHTTP(s.authHTTP(s.newMux()))
	s.grpcSrv = grpc.NewServer(append([]grpc.ServerOption{grpc.MaxRecvMsgSize(cfg.MaxRequestBytes), grpc.ForceServerCodecV2(newGRPCCodec())}, s.grpcOptions()...)...)
	s.grpcSrv.RegisterService(&logsServiceDesc, &grpcLogs{s: s})
	s.grpcSrv.RegisterService(&tracesServiceDesc, &grpcTraces{s: s})
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

// Stats returns the receiver's counters since New.
func (s *Server) Stats() Stats { return s.stats.snapshot() }

// InflightBytes returns the bytes of request bodies held now, the gauge
// that MaxInflightBytes bounds.
func (s *Server) InflightBytes() int64 {
	if s.inflight == nil {
		return 0
	}
	return s.inflight.used.Load()
}

// Shutdown stops accepting connections and requests and waits for the
// requests in flight to be answered. When ctx ends first it returns its
// error at once, leaving the requests in flight to Close; the caller then
// fails their Sink's writes before it calls Close. Calls after the first
// return nil.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	started := s.started
	s.mu.Unlock()
	if !started {
		return nil
	}
	var errs []error
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
	if ctx.Err() == nil {
		s.serving.Wait()
	} else {
		s.mu.Lock()
		s.abandon = grpcDone
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Close drops the connections a Shutdown whose context ended left open,
// and waits for the servers to stop; it does nothing otherwise.
func (s *Server) Close() {
	s.mu.Lock()
	grpcDone := s.abandon
	s.abandon = nil
	s.mu.Unlock()
	if grpcDone == nil {
		return
	}
	_ = s.httpSrv.Close()
	s.grpcSrv.Stop()
	<-grpcDone
	s.serving.Wait()
}

// ingestLogs decodes ld, hands its events to the sink and waits until they
// are durable. It returns what became of the records, and an error when
// the events were not stored.
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

// ingestTraces decodes the MCP spans of td into events, hands them to the
// sink and waits until they are durable, as ingestLogs does for log
// records.
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

// store redacts the events decoded into the pooled slice dst, hands them
// to the sink under the request's tenant — Config.Tenant without a token —
// and waits until they are durable.
func (s *Server) store(ctx context.Context, dst *[]otelschema.Event, events []otelschema.Event) error {
	s.redact(events)
	tenant := s.cfg.Tenant
	if p, ok := ctx.Value(principalKey{}).(auth.Principal); ok {
		tenant = p.Tenant
	}
	return s.sink.Store(ctx, tenant, events, func() { s.putEvents(dst, events) })
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
