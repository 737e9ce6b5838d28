package ingest

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/mcpdrift/mcpdrift/internal/selftrace"
	"github.com/mcpdrift/mcpdrift/internal/spool"
	"github.com/mcpdrift/mcpdrift/store"
)

// WithTracer has the server trace its requests (receiver.WithTracer),
// batches and store inserts with t (see package selftrace); store holds
// the attributes of every insert span (selftrace.StoreAttributes). Without
// it, or with a nil t, nothing is traced and no span is started.
func WithTracer(t trace.Tracer, store ...attribute.KeyValue) Option {
	return func(s *Server) {
		s.tr = tracing{tracer: t, store: store}
		s.recvOpts = append(s.recvOpts, receiver.WithTracer(t))
	}
}

// tracing is the server's tracer; the zero value traces nothing, at the
// cost of one nil check per request and per batch.
type tracing struct {
	tracer trace.Tracer
	store  []attribute.KeyValue
	// spooled is a batcher's spooled batches' spans, nil unless it traces
	// and has a spool.
	spooled *spooledSpans
}

// forBatcher is t for a batcher with a spool or not: each has its own
// spooled spans.
func (t tracing) forBatcher(spooling bool) tracing {
	if t.tracer != nil && spooling {
		t.spooled = &spooledSpans{}
	}
	return t
}

// spooledSpans holds the span of each batch appended to the spool, by the
// position past its record, in order, until the record is written to the
// store: the replayer's insert is the child of the first batch it writes
// and links to the others. At most maxSpooledSpans are kept, the oldest
// dropped first: their inserts then lack the link.
type spooledSpans struct {
	mu sync.Mutex
	q  []spooledSpan
}

type spooledSpan struct {
	end spool.Position
	sc  trace.SpanContext
}

const maxSpooledSpans = 4096

// before reports whether a is at or before b.
func before(a, b spool.Position) bool { return a.Seg < b.Seg || a.Seg == b.Seg && a.Off <= b.Off }

// add records the span of the record ending at end; nil-safe.
func (s *spooledSpans) add(end spool.Position, sc trace.SpanContext) {
	if s == nil || !sc.IsValid() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.q) >= maxSpooledSpans {
		s.q = s.q[1:]
	}
	s.q = append(s.q, spooledSpan{end, sc})
}

// upTo returns the spans of the records ending at or before end.
func (s *spooledSpans) upTo(end spool.Position) []trace.SpanContext {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []trace.SpanContext
	for _, e := range s.q {
		if !before(e.end, end) {
			break
		}
		out = append(out, e.sc)
	}
	return out
}

// drop forgets the spans of the records ending at or before end: they are
// in the store.
func (s *spooledSpans) drop(end spool.Position) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for i < len(s.q) && before(s.q[i].end, end) {
		i++
	}
	s.q = s.q[i:]
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
// ctx, the child of batches[0] and linked to the other batches, if any.
// Nil without a tracer.
func (t tracing) startInsert(ctx context.Context, batches []trace.SpanContext, rows int, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if t.tracer == nil {
		return ctx, nil
	}
	var links []trace.Link
	for i, sc := range batches {
		if i == 0 {
			ctx = trace.ContextWithSpanContext(ctx, sc)
			continue
		}
		links = append(links, trace.Link{SpanContext: sc})
	}
	return t.tracer.Start(ctx, "store insert", trace.WithSpanKind(trace.SpanKindClient), trace.WithLinks(links...),
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
	case errors.Is(err, store.ErrPermanent), errors.Is(err, ErrInvalidData):
		span.SetStatus(codes.Error, "permanent")
	default:
		span.SetStatus(codes.Error, "retryable")
	}
	span.End()
}
