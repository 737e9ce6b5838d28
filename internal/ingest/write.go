package ingest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/internal/selftrace"
	"github.com/mcpdrift/mcpdrift/internal/spool"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// run is the writer goroutine: it writes sealed batches in order until the
// batcher is closed and drained.
func (b *batcher) run() {
	defer close(b.done)
	for {
		b.mu.Lock()
		for len(b.queue) == 0 && !b.closed {
			if b.ackSpooled && b.cur != nil {
				// Group commit: what arrived during the last append
				// goes in the next one, without waiting for maxDelay.
				b.sealLocked()
				break
			}
			b.cond.Wait()
		}
		if len(b.queue) == 0 {
			b.mu.Unlock()
			return
		}
		bt := b.queue[0]
		b.queue[0] = nil
		b.queue = b.queue[1:]
		b.mu.Unlock()

		detached := b.write(bt)
		n := len(*bt.events)
		b.mu.Lock()
		b.pending -= n
		b.settleLocked(bt)
		if !detached {
			// Not cleared, as in Server.putEvents: reuse overwrites. A
			// batch whose write still runs keeps its slice.
			*bt.events = (*bt.events)[:0]
			b.pool.Put(bt.events)
		}
		b.mu.Unlock()
		close(bt.done)
	}
}

// write stores bt and sets the outcome of each of its parts; the caller
// closes bt.done. A permanent error on a batch of several parts is not
// blamed on all of them: each part is written again on its own, so that one
// request's bad events do not fail the others. A part refused on its own is
// the data's fault (ErrInvalidData), unless every part was refused: then
// the store refuses everything (ErrStoreRefused). A single-part batch
// cannot tell the two apart and is blamed on the data.
//
// With a spool, every batch is first appended to it (write-ahead), so that
// an insert cut short by a crash — some of the tables fed by the
// materialised views written, others not — is replayed whole under the same
// token after a restart. Then, unless spooling, the batch is written to the
// store and its record committed; when the write fails retryably or
// outlasts spoolAfter, the batch stays in the spool for the replayer, its
// requests acknowledged all the same. detached reports a write left
// running: it still reads the batch's events.
func (b *batcher) write(bt *batch) (detached bool) {
	events := *bt.events
	bt.errs = make([]error, len(bt.ends))
	b.stats.observeBatch(len(events))
	tctx, span := b.tr.startBatch(bt)
	defer func() {
		err := errors.Join(bt.errs...)
		if err == nil {
			b.stats.retired.observe(b.tenant, events, b.logger)
		}
		endSpan(span, err)
	}()
	var (
		next spool.Position
		err  error
	)
	if b.sp != nil {
		var spooling bool
		next, spooling = b.spoolBatch(bt, trace.SpanContextFromContext(tctx))
		if span != nil {
			span.SetAttributes(selftrace.KeySpooled.Bool(bt.errs[0] == nil))
		}
		if spooling || bt.errs[0] != nil {
			return false
		}
		err, detached = b.writeWithBudget(tctx, events)
		switch {
		case err == nil:
			b.tr.spooled.drop(next)
			if cerr := b.sp.Commit(next); cerr != nil {
				b.logger.Warn("cannot record the spool position", "error", cerr)
			}
		case !errors.Is(err, store.ErrPermanent):
			// Acknowledged: spooled. The replayer takes over.
			b.stats.writeErrors.Add(1)
			b.remember(events)
			if b.spooling.CompareAndSwap(false, true) {
				b.logger.Warn("store slow or failing: acknowledging batches once spooled", "error", err)
			}
			return detached
		default:
			// Refused for good: the record goes, the parts are tried below.
			if qerr := b.sp.Quarantine(next, err.Error()); qerr != nil {
				b.logger.Error("cannot quarantine a refused batch", "error", qerr)
			}
		}
	} else {
		err = b.writeEvents(tctx, events)
	}
	switch {
	case err == nil:
		b.stats.eventsStored.Add(uint64(len(events)))
		b.remember(events)
		return false
	case !errors.Is(err, store.ErrPermanent):
		b.stats.writeErrors.Add(1)
		err = fmt.Errorf("cannot write batch of %d events: %w", len(events), err)
		for i := range bt.errs {
			bt.errs[i] = err
		}
		return
	case len(bt.ends) == 1:
		b.stats.writeErrors.Add(1)
		bt.errs[0] = fmt.Errorf("%w: cannot write batch of %d events: %w", ErrInvalidData, len(events), err)
		return
	}
	b.stats.writeErrors.Add(1)
	written := 0
	start := 0
	for i, end := range bt.ends {
		part := events[start:end]
		start = end
		if perr := b.writeEvents(tctx, part); perr != nil {
			b.stats.writeErrors.Add(1)
			bt.errs[i] = fmt.Errorf("cannot write %d events: %w", len(part), perr)
			continue
		}
		b.stats.eventsStored.Add(uint64(len(part)))
		b.remember(part)
		written++
	}
	for i, perr := range bt.errs {
		switch {
		case perr == nil:
		case !errors.Is(perr, store.ErrPermanent):
			// Retryable on its own: leave it so.
		case written == 0:
			bt.errs[i] = fmt.Errorf("%w: %w", ErrStoreRefused, perr)
		default:
			bt.errs[i] = fmt.Errorf("%w: %w", ErrInvalidData, perr)
		}
	}
	return false
}

// errSlowWrite is the outcome of a write that outlasted spoolAfter.
var errSlowWrite = errors.New("store write over its latency budget")

// writeWithBudget makes one store write; with a spool it waits at most
// spoolAfter, leaving a slower write running (detached) and returning
// errSlowWrite. The span of tctx, if any, is the write's parent.
func (b *batcher) writeWithBudget(tctx context.Context, events []otelschema.Event) (err error, detached bool) {
	if b.sp == nil {
		return b.writeEvents(tctx, events), false
	}
	res := make(chan error, 1)
	fin := make(chan struct{})
	go func() {
		defer close(fin)
		res <- b.writeEvents(tctx, events)
	}()
	t := time.NewTimer(b.spoolAfter)
	defer t.Stop()
	select {
	case err := <-res:
		return err, false
	case <-t.C:
		b.abandoned.Store(&fin)
		return fmt.Errorf("%w: %d events not written after %s", errSlowWrite, len(events), b.spoolAfter), true
	}
}

// spoolBatch appends bt to the spool. On failure it settles bt's parts
// as refused, retryable (ErrSpoolFull when out of room). It returns the
// position past the record and whether batches go to the spool only; then
// the replayer writes this one, its insert the child of sc, bt's span.
func (b *batcher) spoolBatch(bt *batch, sc trace.SpanContext) (next spool.Position, spooling bool) {
	events := *bt.events
	b.modeMu.Lock()
	spooling = b.spooling.Load()
	if !spooling && b.sp.Stats().Records > 0 {
		// Records not replayed yet: this one goes behind them.
		spooling = true
		b.spooling.Store(true)
	}
	token := batchToken(b.tenant, events)
	if b.ackSpooled {
		token = groupablePrefix + token
	}
	next, err := b.sp.Append(spool.Record{Tenant: b.tenant, Token: token, Events: events})
	if err == nil {
		// Under modeMu, where the replayer looks the spans up.
		b.tr.spooled.add(next, sc)
	}
	b.modeMu.Unlock()
	if err != nil {
		b.stats.spoolErrors.Add(1)
		if errors.Is(err, spool.ErrFull) || errors.Is(err, spool.ErrNoSpace) {
			err = fmt.Errorf("%w: cannot spool %d events: %w", ErrSpoolFull, len(events), err)
		} else {
			err = fmt.Errorf("cannot spool %d events: %w", len(events), err)
		}
		for i := range bt.errs {
			bt.errs[i] = err
		}
		return next, spooling
	}
	b.stats.spooled.Add(1)
	b.stats.spooledEvents.Add(uint64(len(events)))
	if spooling {
		b.remember(events)
	}
	return next, spooling
}

// writeEvents makes one store write, bounded by the write timeout; the
// span of tctx, if any, is its parent.
func (b *batcher) writeEvents(tctx context.Context, events []otelschema.Event) (err error) {
	if err := b.ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrShuttingDown, err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.timeout)
	defer cancel()
	var parent []trace.SpanContext
	if b.tr.tracer != nil {
		parent = []trace.SpanContext{trace.SpanContextFromContext(tctx)}
	}
	ctx, span := b.tr.startInsert(ctx, parent, len(events))
	defer func() { endSpan(span, err) }()
	start := time.Now()
	defer b.stats.observeWrite(start)
	b.stats.observeInsert(len(events))
	return b.w.Write(ctx, store.Batch{Tenant: b.tenant, Token: batchToken(b.tenant, events), Events: events})
}

// batchToken identifies a batch by its tenant and its events' identities, so
// that writing the same batch again yields the same token.
func batchToken(tenant string, events []otelschema.Event) string {
	var h tokenHash
	h.reset(tenant)
	for i := range events {
		h.add(events[i].ID)
	}
	return h.token(len(events))
}

// tokenHash hashes a tenant and event ids, in order, into batchToken's
// token, for a caller that sees the ids one by one (the replayer's
// transcoder).
type tokenHash struct {
	d   xxhash.Digest
	buf [8]byte
}

func (h *tokenHash) reset(tenant string) {
	h.d.Reset()
	_, _ = h.d.WriteString(tenant)
}

func (h *tokenHash) add(id uint64) {
	binary.LittleEndian.PutUint64(h.buf[:], id)
	_, _ = h.d.Write(h.buf[:])
}

// token is the token of the ids added, n of them.
func (h *tokenHash) token(n int) string {
	return fmt.Sprintf("%016x-%d", h.d.Sum64(), n)
}
