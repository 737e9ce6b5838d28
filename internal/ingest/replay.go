package ingest

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/internal/selftrace"
	"github.com/mcpdrift/mcpdrift/internal/spool"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// Replay backoff bounds.
const (
	replayMinBackoff = 50 * time.Millisecond
	replayMaxBackoff = 5 * time.Second
	replayIdlePoll   = 100 * time.Millisecond
)

// replay is the replayer goroutine: it writes the spool's records to the
// store in order, retrying with backoff while the store fails, until the
// batcher is cancelled. A record is written under its own token, or with
// the records after it as a group under the group's token (see
// nextGroup).
func (b *batcher) replay() {
	defer close(b.replayDone)
	backoff := replayMinBackoff
	sleep := func() bool {
		t := time.NewTimer(backoff)
		defer t.Stop()
		backoff = min(2*backoff, replayMaxBackoff)
		select {
		case <-t.C:
			return true
		case <-b.ctx.Done():
			return false
		}
	}
	idle := func() {
		t := time.NewTimer(replayIdlePoll)
		defer t.Stop()
		select {
		case <-b.sp.Notify():
		case <-t.C:
		case <-b.ctx.Done():
		}
	}
	// alone counts the records still to be written one by one: those of
	// a group the store refused for good, so that only the guilty ones
	// are quarantined.
	alone := 0
	var g *group // the group being written, kept across retries
	// The group an earlier process was writing when it stopped, read
	// once: this replayer forgets its own groups as it commits them.
	var resume *spool.Inflight
	if in, ok := b.sp.Inflight(); ok {
		resume = &in
	}
	for b.ctx.Err() == nil {
		if !b.spooling.Load() {
			// The writer owns the spool: it commits what it writes.
			idle()
			continue
		}
		if g == nil {
			var err error
			g, err = b.nextGroup(alone > 0, resume)
			if g != nil {
				resume = nil
			}
			if err != nil {
				b.stats.spoolErrors.Add(1)
				b.logger.Error("cannot read the spool", "error", err)
				if !sleep() {
					return
				}
				continue
			}
		}
		if g == nil {
			// Under modeMu no record is appended meanwhile: the spool is
			// empty for sure when Peek finds nothing.
			b.modeMu.Lock()
			if _, _, more, _ := b.sp.Peek(); !more && b.abandonedDone() && !b.ackSpooled {
				b.spooling.Store(false)
				st := b.sp.Stats()
				b.logger.Info("spool replayed: writing to the store directly", "replayed", st.Replayed, "quarantined", st.Quarantined)
			}
			b.modeMu.Unlock()
			idle()
			continue
		}
		ctx, cancel := context.WithTimeout(b.ctx, b.timeout)
		var batches []trace.SpanContext
		if b.tr.spooled != nil {
			// A record's span is added under modeMu, after its append.
			b.modeMu.Lock()
			batches = b.tr.spooled.upTo(g.next)
			b.modeMu.Unlock()
		}
		ctx, span := b.tr.startInsert(ctx, batches, len(g.events), selftrace.KeyReplay.Bool(true))
		start := time.Now()
		err := b.w.Write(ctx, store.Batch{Tenant: g.tenant, Token: g.token, Events: g.events})
		b.stats.observeWrite(start)
		endSpan(span, err)
		cancel()
		n := len(g.events)
		switch {
		case err == nil:
			backoff = replayMinBackoff
			b.stats.replayed.Add(uint64(g.records))
			b.stats.replayedEvents.Add(uint64(n))
			b.stats.eventsStored.Add(uint64(n))
			b.stats.observeInsert(n)
			b.tr.spooled.drop(g.next)
			if cerr := b.sp.CommitGroup(g.next, g.records); cerr != nil {
				b.logger.Warn("cannot record the spool position", "error", cerr)
			}
			alone = max(alone-1, 0)
			g = nil
		case errors.Is(err, store.ErrPermanent) && g.records > 1:
			// One of the records is at fault: write them one by one.
			b.stats.writeErrors.Add(1)
			b.logger.Warn("store refuses a group of spooled batches: writing them one by one", "records", g.records, "events", n, "error", err)
			if cerr := b.sp.ClearInflight(); cerr != nil {
				b.logger.Warn("cannot clear the spool's inflight group", "error", cerr)
			}
			alone = g.records
			g = nil
		case errors.Is(err, store.ErrPermanent):
			b.stats.writeErrors.Add(1)
			b.logger.Error("store refuses a spooled batch for good: quarantined", "events", n, "token", g.token, "error", err)
			if qerr := b.sp.Quarantine(g.next, err.Error()); qerr != nil {
				b.logger.Error("cannot quarantine a spooled batch", "error", qerr)
				if !sleep() {
					return
				}
				continue
			}
			alone = max(alone-1, 0)
			g = nil
		default:
			b.stats.writeErrors.Add(1)
			if b.ctx.Err() != nil {
				return
			}
			b.logger.Debug("cannot replay spooled batches yet", "records", g.records, "events", n, "retry_in", backoff, "error", err)
			if !sleep() {
				return
			}
		}
	}
}

// groupablePrefix marks the token of a record spooled with AckSpooled:
// nothing wrote it to the store on its own, so the replayer may write it in
// a group under another token. A record without it may have been written
// already under its own token (a write that failed or outlasted
// spoolAfter) and is replayed alone, under that token, so that the store
// deduplicates it.
const groupablePrefix = "g:"

// group is what one replayer insert writes: records spooled one after the
// other, from the spool's cursor up to next.
type group struct {
	tenant  string
	token   string
	events  []otelschema.Event
	records int
	next    spool.Position
	// buffered says that events lie in the replayer's buffer (group.buffer).
	buffered bool
}

// nextGroup returns the records to write next, nil when the spool is
// empty. resume, the group the last process was writing (spool.Inflight),
// is rebuilt as it was. Otherwise the record at the cursor is taken, and, when it is
// groupable and alone is false, the groupable records after it, until the
// group holds insertMax events or insertDelay has passed since the
// record at the cursor was seen; a group of several records is made
// durable as the inflight one before it is written.
func (b *batcher) nextGroup(alone bool, resume *spool.Inflight) (*group, error) {
	rec, next, ok, err := b.sp.Peek()
	if err != nil || !ok {
		return nil, err
	}
	g := &group{tenant: rec.Tenant, token: rec.Token, events: rec.Events, records: 1, next: next}
	if in := resume; in != nil {
		// Exactly the records of the group cut short, under its token.
		for g.next != in.End {
			r, n, ok, err := b.sp.PeekAt(g.next, g.buffer(&b.groupBuf))
			if err != nil && !errors.Is(err, spool.ErrGroupBoundary) {
				return nil, err
			}
			if !ok {
				b.logger.Warn("the spool's inflight group cannot be read whole: replaying its records anew",
					"records", g.records, "end_segment", in.End.Seg, "end_offset", in.End.Off)
				_ = b.sp.ClearInflight()
				return &group{tenant: rec.Tenant, token: rec.Token, events: rec.Events, records: 1, next: next}, nil
			}
			g.add(r, n, &b.groupBuf)
		}
		g.token = in.Token
		return g, nil
	}
	if alone || !b.ackSpooled || !strings.HasPrefix(rec.Token, groupablePrefix) {
		return g, nil
	}
	deadline := time.Now().Add(b.insertDelay)
	for len(g.events) < b.insertMax {
		b.growGroup(g, len(rec.Events))
		r, n, ok, err := b.sp.PeekAt(g.next, g.buffer(&b.groupBuf))
		if errors.Is(err, spool.ErrGroupBoundary) {
			break
		}
		if err != nil {
			return nil, err
		}
		if ok {
			if r.Tenant != g.tenant || !strings.HasPrefix(r.Token, groupablePrefix) || len(r.Events) > b.insertMax {
				break
			}
			g.add(r, n, &b.groupBuf)
			continue
		}
		if b.flushing() || b.sp.Full() {
			// Shutting down, or the spool refuses appends for lack of
			// room: no more records will come; write what there is.
			break
		}
		wait := time.Until(deadline)
		if wait <= 0 || !b.waitAppend(wait) {
			break
		}
	}
	if g.records > 1 {
		g.token = groupToken(g.tenant, g.events)
		if err := b.sp.SetInflight(spool.Inflight{End: g.next, Token: g.token}); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// buffer returns the slice the next record of g is decoded onto
// (spool.PeekAt appends to it): g's events in buf, the replayer's buffer
// reused from group to group, so that a group is neither regrown nor copied
// record by record. The first record, read by Peek on its own, is moved
// there on the first call. buf grows as the groups need, up to insertMax
// events: a quiet ingester does not hold a buffer sized for the busiest
// (200,000 events, 116 MiB, by default).
func (g *group) buffer(buf *[]otelschema.Event) []otelschema.Event {
	if !g.buffered {
		g.events = append((*buf)[:0], g.events...)
		*buf = g.events
		g.buffered = true
	}
	return g.events
}

// growGroup grows g's buffer before the next record is read onto it, when
// it may not hold another record of size events (the group's first
// record's, or its records' mean when larger) and the spool holds more
// than the group: to what the spool holds (its records, each taken to be
// of that size), at least twice its room, at most insertMax events and a
// batch more — the most a group reaches. Grown by doubling alone as
// records come, a buffer reaching a large group allocates twice that
// group in steps, every one of them fresh memory to fault in and to
// collect; sized from the backlog, it takes a step or two. Sized by the
// first record alone, a small one understated the backlog and left the
// growth to PeekAt, which doubles the buffer past the bound, where it is
// held, for events no group takes, as long as the replayer runs; PeekAt
// still grows it so for a record larger than the group's mean appended
// between the count and the read.
func (b *batcher) growGroup(g *group, size int) {
	buf := g.buffer(&b.groupBuf)
	size = max(size, len(buf)/max(g.records, 1), 1)
	if cap(buf)-len(buf) >= size {
		return
	}
	backlog := int(min(b.sp.Stats().Records, math.MaxInt32/int64(size))) * size
	want := min(max(backlog, 2*cap(buf)), b.insertMax+b.maxEvents)
	if backlog <= len(buf) || want <= cap(buf) {
		// Nothing more spooled yet, or a record past the bound: PeekAt
		// grows the buffer for a record that comes.
		return
	}
	grown := make([]otelschema.Event, len(buf), want)
	copy(grown, buf)
	g.events, b.groupBuf = grown, grown
}

// add takes r, read by PeekAt onto g.buffer and ending at next, into g:
// r.Events are g's events followed by the record's.
func (g *group) add(r spool.Record, next spool.Position, buf *[]otelschema.Event) {
	g.events = r.Events
	*buf = g.events
	g.records++
	g.next = next
}

// waitAppend waits up to d for an append to the spool; false when the
// batcher is shutting down or d passed.
func (b *batcher) waitAppend(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-b.sp.Notify():
		return !b.flushing()
	case <-t.C:
	case <-b.flushed:
	case <-b.ctx.Done():
	}
	return false
}

// flushing reports whether the batcher is shutting down and the replayer
// should write what the spool holds without waiting for more.
func (b *batcher) flushing() bool {
	select {
	case <-b.flushed:
		return true
	default:
		return false
	}
}

// groupToken identifies a group by its events, like batchToken.
func groupToken(tenant string, events []otelschema.Event) string {
	return "group:" + batchToken(tenant, events)
}

// abandonedDone reports whether no write left running past spoolAfter is
// still running.
func (b *batcher) abandonedDone() bool {
	p := b.abandoned.Load()
	if p == nil {
		return true
	}
	select {
	case <-*p:
		return true
	default:
		return false
	}
}
