package receiver

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/internal/selftrace"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// WithTracer has the receiver trace each request with t (see package
// selftrace): the span of an export, the parent of the pipeline's batch.
// Without it, or with a nil t, no span is started.
func WithTracer(t trace.Tracer) Option {
	return func(s *Server) { s.tr = tracing{tracer: t} }
}

// tracing is the receiver's tracer; the zero value traces nothing, at the
// cost of one nil check per request.
type tracing struct {
	tracer trace.Tracer
}

// startRequest starts the span of one export of signal (logs, traces); nil
// without a tracer.
func (t tracing) startRequest(ctx context.Context, signal string) (context.Context, trace.Span) {
	if t.tracer == nil {
		return ctx, nil
	}
	return t.tracer.Start(ctx, "ingest request", trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(selftrace.KeySignal.String(signal)))
}

// endRequest ends a request's span with what became of its records,
// failed when err is not nil. The status names the error's class, not its
// text, which may quote the data.
func endRequest(span trace.Span, res otelschema.Result, err error) {
	if span == nil {
		return
	}
	span.SetAttributes(selftrace.KeyAccepted.Int(res.Accepted), selftrace.KeyRejected.Int(res.Rejected), selftrace.KeyIgnored.Int(res.Ignored))
	switch {
	case err == nil:
	case errors.Is(err, store.ErrPermanent), errors.Is(err, ErrInvalidData), errors.Is(err, errMalformed):
		span.SetStatus(codes.Error, "permanent")
	default:
		span.SetStatus(codes.Error, "retryable")
	}
	span.End()
}
