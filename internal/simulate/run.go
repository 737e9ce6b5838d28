package simulate

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// ScopeName is the instrumentation scope of the simulator's log records.
const ScopeName = "github.com/mcpdrift/mcpdrift/internal/simulate"

// shutdownTimeout bounds the final flush of every LoggerProvider.
const shutdownTimeout = time.Minute

// exportTimeout bounds one export with its retries, as the HTTP client's
// timeout does: the SDK's default of 10 s lets a batch fail while an
// ingester on busy cores is still spooling the one before, and the
// simulator's ledger then counts it failed although nothing was refused.
const exportTimeout = 30 * time.Second

// Run generates the simulation for cfg and emits every event through the
// OpenTelemetry Logs SDK — one LoggerProvider per simulated service
// resource, each with a BatchProcessor and an OTLP exporter (gRPC or HTTP,
// per cfg.Protocol) — then flushes and shuts the providers down.
//
// The run ends when cfg.Events events were emitted, cfg.Duration of real
// time passed, the simulated span is over, or ctx ends; emission is paced
// at cfg.Rate. Records are never dropped: emission waits while a
// provider's queue is full. The returned Ledger counts exactly the events
// emitted, with the exporters' report in Ledger.Export; the error is
// non-nil when ctx ended (the ledger is still valid) or when the receiver
// did not accept every record.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) (Ledger, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	gen, err := NewGenerator(cfg)
	if err != nil {
		return Ledger{}, err
	}
	cfg = gen.Config()
	if maxPast := otelschema.DefaultLimits().MaxPast; cfg.Span > maxPast {
		logger.Warn("simulated span exceeds the ingester's default MaxPast: its oldest events will be rejected",
			"span", cfg.Span, "max_past", maxPast)
	}
	out, err := newSink(cfg, logger)
	if err != nil {
		return Ledger{}, err
	}
	logger.Info("simulation started",
		"endpoint", cfg.Endpoint, "protocol", cfg.Protocol, "seed", cfg.Seed,
		"start", cfg.Start.UTC(), "span", cfg.Span, "events", cfg.Events,
		"duration", cfg.Duration, "rate", cfg.Rate, "servers", cfg.Servers,
		"tools", cfg.Tools, "clients", cfg.Clients, "sessions", cfg.sessions())

	began := time.Now()
	var deadline time.Time
	if cfg.Duration > 0 {
		deadline = began.Add(cfg.Duration)
	}
	var (
		rec    Record
		runErr error
		n      int64
		timer  *time.Timer
	)
	for {
		if err := ctx.Err(); err != nil {
			runErr = err
			break
		}
		if !deadline.IsZero() || cfg.Rate > 0 {
			now := time.Now()
			if !deadline.IsZero() && !now.Before(deadline) {
				break
			}
			if cfg.Rate > 0 {
				due := began.Add(time.Duration(float64(n) / cfg.Rate * float64(time.Second)))
				if !deadline.IsZero() && due.After(deadline) {
					break
				}
				if wait := due.Sub(now); wait > 0 {
					if timer == nil {
						timer = time.NewTimer(wait)
					} else {
						timer.Reset(wait)
					}
					select {
					case <-timer.C:
					case <-ctx.Done():
						runErr = ctx.Err()
					}
					if runErr != nil {
						break
					}
				}
			}
		}
		if !gen.Next(&rec) {
			break
		}
		if err := out.emit(ctx, &rec); err != nil {
			gen.ledger.add(&rec, -1) // never handed to the SDK
			runErr = err
			break
		}
		n++
	}
	if timer != nil {
		timer.Stop()
	}

	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	flushBegan := time.Now()
	shutErr := out.shutdown(flushCtx)
	elapsed := time.Since(began)

	ledger := gen.Ledger()
	stats := out.stats()
	stats.Seconds = elapsed.Seconds()
	stats.FlushSeconds = time.Since(flushBegan).Seconds()
	if elapsed > 0 {
		stats.EventsPerSecond = float64(ledger.Events) / elapsed.Seconds()
	}
	ledger.Export = &stats
	logger.Info("simulation finished",
		"events", ledger.Events, "exported", stats.Exported, "rejected", stats.Rejected,
		"failed", stats.Failed, "providers", stats.Providers, "seconds", stats.Seconds,
		"events_per_second", int64(stats.EventsPerSecond))

	var errs []error
	if runErr != nil {
		errs = append(errs, fmt.Errorf("simulation stopped after %d events: %w", ledger.Events, runErr))
	}
	if shutErr != nil {
		errs = append(errs, fmt.Errorf("cannot flush the log providers: %w", shutErr))
	}
	if undelivered := stats.Rejected + stats.Failed; undelivered > 0 {
		errs = append(errs, fmt.Errorf("%w: %d of %d events (%d rejected, %d failed); first error: %w",
			ErrUndelivered, undelivered, ledger.Events, stats.Rejected, stats.Failed, out.firstErr()))
	}
	return ledger, errors.Join(errs...)
}

// ErrUndelivered is returned by Run when the receiver did not accept every
// record.
var ErrUndelivered = errors.New("events not delivered")

// resourceKey identifies one simulated service resource.
type resourceKey struct {
	service, version, instance, namespace, environment string
}

// sink routes records to one LoggerProvider per resource.
type sink struct {
	cfg        Config
	logger     *slog.Logger
	conn       *grpc.ClientConn // shared by the gRPC exporters
	httpClient *http.Client     // shared by the HTTP exporters

	providers map[resourceKey]*provider
	order     []*provider
	kvs       []attribute.KeyValue

	errMu sync.Mutex
	err   error
}

// provider is one simulated service's LoggerProvider.
type provider struct {
	key    resourceKey
	lp     *sdklog.LoggerProvider
	logger otellog.Logger
	exp    *countingExporter
}

func newSink(cfg Config, logger *slog.Logger) (*sink, error) {
	s := &sink{cfg: cfg, logger: logger, providers: map[resourceKey]*provider{}}
	switch cfg.Protocol {
	case ProtocolGRPC:
		creds := insecure.NewCredentials()
		if !cfg.Insecure {
			creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
		}
		conn, err := grpc.NewClient(cfg.Endpoint, grpc.WithTransportCredentials(creds))
		if err != nil {
			return nil, fmt.Errorf("cannot create OTLP/gRPC client for %s: %w", cfg.Endpoint, err)
		}
		s.conn = conn
	case ProtocolHTTP:
		s.httpClient = &http.Client{
			Timeout:   30 * time.Second,
			Transport: &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second, TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}},
		}
	}
	return s, nil
}

func (s *sink) provider(ctx context.Context, e *otelschema.Event) (*provider, error) {
	key := resourceKey{e.Service, e.ServiceVersion, e.ServiceInstance, e.ServiceNamespace, e.Environment}
	if p := s.providers[key]; p != nil {
		return p, nil
	}
	var (
		exp sdklog.Exporter
		err error
	)
	switch s.cfg.Protocol {
	case ProtocolGRPC:
		opts := []otlploggrpc.Option{otlploggrpc.WithGRPCConn(s.conn), otlploggrpc.WithCompressor("gzip"), otlploggrpc.WithTimeout(exportTimeout)}
		if len(s.cfg.Headers) > 0 {
			opts = append(opts, otlploggrpc.WithHeaders(s.cfg.Headers))
		}
		exp, err = otlploggrpc.New(ctx, opts...)
	case ProtocolHTTP:
		opts := []otlploghttp.Option{
			otlploghttp.WithEndpoint(s.cfg.Endpoint), otlploghttp.WithHTTPClient(s.httpClient),
			otlploghttp.WithCompression(otlploghttp.GzipCompression), otlploghttp.WithTimeout(exportTimeout),
		}
		if s.cfg.Insecure {
			opts = append(opts, otlploghttp.WithInsecure())
		}
		if len(s.cfg.Headers) > 0 {
			opts = append(opts, otlploghttp.WithHeaders(s.cfg.Headers))
		}
		exp, err = otlploghttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot create OTLP/%s exporter for %s: %w", s.cfg.Protocol, key.service, err)
	}
	ce := &countingExporter{next: exp, sem: make(chan struct{}, s.cfg.QueueSize), sink: s, service: key.service}
	res := resource.NewSchemaless(
		attribute.String(otelschema.AttrServiceName, key.service),
		attribute.String(otelschema.AttrServiceVersion, key.version),
		attribute.String(otelschema.AttrServiceInstanceID, key.instance),
		attribute.String(otelschema.AttrServiceNamespace, key.namespace),
		attribute.String(otelschema.AttrEnvironment, key.environment),
	)
	lp := sdklog.NewLoggerProvider(
		sdklog.WithResource(res),
		sdklog.WithAllowKeyDuplication(), // records never repeat a key
		sdklog.WithProcessor(sdklog.NewBatchProcessor(ce,
			sdklog.WithMaxQueueSize(s.cfg.QueueSize),
			sdklog.WithExportMaxBatchSize(s.cfg.BatchSize),
			sdklog.WithExportInterval(s.cfg.ExportInterval),
		)),
	)
	p := &provider{key: key, lp: lp, exp: ce, logger: lp.Logger(ScopeName)}
	s.providers[key] = p
	s.order = append(s.order, p)
	return p, nil
}

// emit hands one record to its provider's SDK logger, once the provider's
// queue has room for it.
func (s *sink) emit(ctx context.Context, r *Record) error {
	p, err := s.provider(ctx, &r.Event)
	if err != nil {
		return err
	}
	select {
	case p.exp.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	var lr otellog.Record
	s.kvs = logRecord(&lr, &r.Event, s.kvs[:0])
	p.logger.Emit(ctx, lr)
	return nil
}

func (s *sink) shutdown(ctx context.Context) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, p := range s.order {
		wg.Go(func() {
			if err := p.lp.Shutdown(ctx); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s %s: %w", p.key.service, p.key.version, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if s.conn != nil {
		if err := s.conn.Close(); err != nil {
			errs = append(errs, fmt.Errorf("cannot close the OTLP/gRPC connection: %w", err))
		}
	}
	if s.httpClient != nil {
		s.httpClient.CloseIdleConnections()
	}
	return errors.Join(errs...)
}

func (s *sink) stats() ExportStats {
	st := ExportStats{Protocol: s.cfg.Protocol, Endpoint: s.cfg.Endpoint, Providers: len(s.order)}
	for _, p := range s.order {
		st.Exported += p.exp.exported.Load()
		st.Rejected += p.exp.rejected.Load()
		st.Failed += p.exp.failed.Load()
	}
	return st
}

func (s *sink) recordErr(service string, n int, err error) {
	s.errMu.Lock()
	first := s.err == nil
	if first {
		s.err = err
	}
	s.errMu.Unlock()
	if first {
		s.logger.Warn("OTLP export failed; further failures are only counted", "service", service, "records", n, "error", err)
	}
}

func (s *sink) firstErr() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// countingExporter counts what the OTLP exporter it wraps delivered, and
// frees queue room in its provider once each export is done. Export
// failures are counted and logged here, not passed on to the SDK's global
// error handler.
type countingExporter struct {
	next    sdklog.Exporter
	sem     chan struct{}
	sink    *sink
	service string

	exported, rejected, failed atomic.Int64
}

var partialRejected = regexp.MustCompile(`\((\d+) logs rejected\)`)

func (c *countingExporter) Export(ctx context.Context, records []sdklog.Record) error {
	err := c.next.Export(ctx, records)
	n := int64(len(records))
	if err == nil {
		c.exported.Add(n)
	} else {
		// A partial success says how many records it rejected; any other
		// error lost the whole export.
		if m := partialRejected.FindStringSubmatch(err.Error()); m != nil {
			k, _ := strconv.ParseInt(m[1], 10, 64)
			k = min(k, n)
			c.exported.Add(n - k)
			c.rejected.Add(k)
		} else {
			c.failed.Add(n)
		}
		c.sink.recordErr(c.service, len(records), err)
	}
	for range records {
		<-c.sem
	}
	return nil
}

func (c *countingExporter) Shutdown(ctx context.Context) error   { return c.next.Shutdown(ctx) }
func (c *countingExporter) ForceFlush(ctx context.Context) error { return c.next.ForceFlush(ctx) }

// logRecord fills lr from e — the event name, its time, and every set
// attribute under its otelschema name — using kvs as scratch space, and
// returns kvs for reuse. Resource fields are left to the provider's
// resource.
func logRecord(lr *otellog.Record, e *otelschema.Event, kvs []attribute.KeyValue) []attribute.KeyValue {
	lr.SetEventName(e.Name.String())
	lr.SetTimestamp(time.Unix(0, e.Time))
	lr.SetSeverity(otellog.SeverityInfo)
	lr.SetSeverityText("INFO")
	switch e.Outcome {
	case otelschema.OutcomeRejectedStale, otelschema.OutcomeRejectedIncompatible,
		otelschema.OutcomeRejectedInvalid, otelschema.OutcomeRemoved, otelschema.OutcomeFailed:
		lr.SetSeverity(otellog.SeverityWarn)
		lr.SetSeverityText("WARN")
	}
	if e.Name == otelschema.EventContractError {
		lr.SetSeverity(otellog.SeverityWarn)
		lr.SetSeverityText("WARN")
	}
	str := func(k, v string) {
		if v != "" {
			kvs = append(kvs, attribute.String(k, v))
		}
	}
	i64 := func(k string, v int64) {
		if v != 0 {
			kvs = append(kvs, attribute.Int64(k, v))
		}
	}
	enum := func(k string, v fmt.Stringer, set bool) {
		if set {
			kvs = append(kvs, attribute.String(k, v.String()))
		}
	}
	str(otelschema.AttrToolName, e.Tool)
	str(otelschema.AttrMethodName, e.Method)
	str(otelschema.AttrRequestID, e.RequestID)
	str(otelschema.AttrSessionID, e.SessionID)
	str(otelschema.AttrProtocolVersion, e.ProtocolVersion)
	str(otelschema.AttrClientName, e.ClientName)
	str(otelschema.AttrClientVersion, e.ClientVersion)
	str(otelschema.AttrRevisionClient, e.RevisionClient)
	enum(otelschema.AttrRevisionClientSource, e.RevisionClientSource, e.RevisionClientSource != otelschema.RevisionSourceUnspecified)
	str(otelschema.AttrRevisionServer, e.RevisionServer)
	str(otelschema.AttrRevisionValidated, e.RevisionValidated)
	str(otelschema.AttrRevisionBefore, e.RevisionBefore)
	str(otelschema.AttrRevisionAfter, e.RevisionAfter)
	enum(otelschema.AttrOutcome, e.Outcome, e.Outcome != otelschema.OutcomeUnspecified)
	str(otelschema.AttrAdapterID, e.AdapterID)
	enum(otelschema.AttrChangeClass, e.ChangeClass, e.ChangeClass != otelschema.ChangeClassUnspecified)
	if e.Name == otelschema.EventCall {
		// Always said, false included: the seed's error names it.
		kvs = append(kvs, attribute.Bool(otelschema.AttrSideEffectStarted, e.SideEffectStarted))
		kvs = append(kvs, attribute.Int64(otelschema.AttrExternalRequests, e.ExternalRequests))
	}
	str(otelschema.AttrExternalTarget, e.ExternalTarget)
	str(otelschema.AttrErrorCode, e.ErrorCode)
	str(otelschema.AttrRequiredAction, e.RequiredAction)
	str(otelschema.AttrRetryOf, e.RetryOf)
	i64(otelschema.AttrRetryAttempt, e.RetryAttempt)
	enum(otelschema.AttrRetryAfter, e.RetryAfter, e.RetryAfter != otelschema.OutcomeUnspecified)
	str(otelschema.AttrIdempotencyKey, e.IdempotencyKey)
	if e.Name == otelschema.EventRepair {
		enum(otelschema.AttrRepairAction, e.RepairAction, e.RepairAction != otelschema.RepairActionUnspecified)
		kvs = append(kvs, attribute.Bool(otelschema.AttrRepairAutomatic, e.RepairAutomatic))
		enum(otelschema.AttrRepairResult, e.RepairResult, e.RepairResult != otelschema.RepairResultUnspecified)
		kvs = append(kvs, attribute.Int64(otelschema.AttrRepairDurationMs, e.RepairDurationMs))
	}
	enum(otelschema.AttrApproval, e.Approval, e.Approval != otelschema.ApprovalUnspecified)
	enum(otelschema.AttrPrivilege, e.Privilege, e.Privilege != otelschema.PrivilegeUnspecified)
	str(otelschema.AttrRunID, e.RunID)
	if e.Name == otelschema.EventCall || e.Name == otelschema.EventRefresh || e.Name == otelschema.EventRepair {
		kvs = append(kvs, attribute.Int64(otelschema.AttrSessionAgeS, e.SessionAgeS))
	}
	enum(otelschema.AttrRefreshResult, e.RefreshResult, e.RefreshResult != otelschema.RefreshResultUnspecified)
	i64(otelschema.AttrNotificationLagMs, e.NotificationLagMs)
	str(otelschema.AttrAdapterRevisionFrom, e.AdapterRevisionFrom)
	str(otelschema.AttrAdapterRevisionTo, e.AdapterRevisionTo)
	i64(otelschema.AttrAdapterWindowEnd, e.AdapterWindowEnd)
	str(otelschema.AttrContractField, e.ContractField)
	str(otelschema.AttrArgsRaw, e.ArgsRaw)
	str(otelschema.AttrArgsNormalized, e.ArgsNormalized)
	lr.AddAttributes(kvs...)
	return kvs
}
