package ingest

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/internal/selftrace"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// WithTracer has the server trace its requests, batches and store inserts
// with t (see package selftrace); store holds the attributes of every
// insert span (selftrace.StoreAttributes). Without it, or with a nil t,
// nothing is traced and no span is started.
func WithTracer(t trace.Tracer, store ...attribute.KeyValue) Option {
	return func(s *Server) { s.tr = tracing{tracer: t, store: store} }
}

// tracing is the server's tracer; the zero value traces nothing, at the
// cost of one nil check per request and per batch.
type tracing struct {
	tracer trace.Tracer
	store  []attribute.KeyValue
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

// endRequest ends a request's span with what became of its records.
func endRequest(span trace.Span, res otelschema.Result, err error) {
	if span == nil {
		return
	}
	span.SetAttributes(selftrace.KeyAccepted.Int(res.Accepted), selftrace.KeyRejected.Int(res.Rejected), selftrace.KeyIgnored.Int(res.Ignored))
	endSpan(span, err)
}

// startBatch starts the span of writing bt, the child of the request that
// gave its first part and linked to the others; the returned context only
// carries the span. Nil without a tracer.
func (t tracing) startBatch(bt *batch) (context.Context, trace.Span) {
	if t.tracer == nil {
		return context.Background(), nil
	}
	ctx := context.Background()
	var links []trace.Link
	for i, sc := range bt.requests {
		if i == 0 {
			ctx = trace.ContextWithSpanContext(ctx, sc)
			continue
		}
		links = append(links, trace.Link{SpanContext: sc})
	}
	return t.tracer.Start(ctx, "ingest batch", trace.WithLinks(links...), trace.WithAttributes(
		selftrace.KeyEvents.Int(len(*bt.events)), selftrace.KeyParts.Int(len(bt.ends))))
}

// startInsert starts the span of one store insert of rows events under
// ctx, the child of the span parent carries (none for the replayer's).
// Nil without a tracer.
func (t tracing) startInsert(ctx, parent context.Context, rows int, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if t.tracer == nil {
		return ctx, nil
	}
	ctx = trace.ContextWithSpanContext(ctx, trace.SpanContextFromContext(parent))
	return t.tracer.Start(ctx, "store insert", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(t.store...), trace.WithAttributes(semconv.DBOperationName("INSERT"), selftrace.KeyRows.Int(rows)),
		trace.WithAttributes(attrs...))
}

// endSpan ends span, failed when err is not nil. The status names the
// error's class, not its text, which may quote the data.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	switch {
	case err == nil:
	case errors.Is(err, store.ErrPermanent), errors.Is(err, ErrInvalidData), errors.Is(err, errMalformed):
		span.SetStatus(codes.Error, "permanent")
	default:
		span.SetStatus(codes.Error, "retryable")
	}
	span.End()
}
