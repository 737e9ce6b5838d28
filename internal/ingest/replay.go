package ingest

import (
	"bytes"
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
	"github.com/mcpdrift/mcpdrift/store/chwire"
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
			p, _, more, _ := b.sp.PeekPayload(b.recBuf)
			b.recBuf = p.Bytes
			if !more && b.abandonedDone() && !b.ackSpooled {
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
		ctx, span := b.tr.startInsert(ctx, batches, g.rows, selftrace.KeyReplay.Bool(true))
		start := time.Now()
		var err error
		if g.blk != nil {
			err = b.w.WriteNative(ctx, g.token, g.blk)
		} else {
			err = b.w.Write(ctx, store.Batch{Tenant: g.tenant, Token: g.token, Events: g.events})
		}
		b.stats.observeWrite(start)
		endSpan(span, err)
		cancel()
		n := g.rows
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
//
// With a store that takes a Native block (nativeWriter, both stores), the
// records' payloads are transcoded into blk as they are read
// (spool.Transcoder), with no otelschema.Event in between; the group's
// token is hashed from the event ids the transcoder hands its keep
// callback. With any other writer the payloads are decoded onto events,
// the replayer's buffer (group.buffer), and written with Write.
type group struct {
	tenant  string
	token   string
	rows    int // the events of its records
	records int
	next    spool.Position
	// blk holds the rows, for a native writer (the replayer's groupBlk).
	blk *chwire.NativeBlock
	// events holds them otherwise; buffered says that they lie in the
	// replayer's buffer (group.buffer).
	events   []otelschema.Event
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
	g, p, err := b.firstGroup()
	if g == nil || err != nil {
		return nil, err
	}
	if in := resume; in != nil {
		// Exactly the records of the group cut short, under its token.
		for g.next != in.End {
			r, n, ok, err := b.sp.PeekPayloadAt(g.next, b.recBuf)
			if err != nil && !errors.Is(err, spool.ErrGroupBoundary) {
				return nil, err
			}
			if ok {
				b.recBuf = r.Bytes
				ok = b.add(g, r, n) == nil
			}
			if !ok {
				b.logger.Warn("the spool's inflight group cannot be read whole: replaying its records anew",
					"records", g.records, "end_segment", in.End.Seg, "end_offset", in.End.Off)
				_ = b.sp.ClearInflight()
				g, _, err := b.firstGroup()
				return g, err
			}
		}
		g.token = in.Token
		return g, nil
	}
	if alone || !b.ackSpooled || !strings.HasPrefix(p.Token, groupablePrefix) {
		return g, nil
	}
	deadline := time.Now().Add(b.insertDelay)
	for g.rows < b.insertMax {
		b.growGroup(g, p.Events)
		r, n, ok, err := b.sp.PeekPayloadAt(g.next, b.recBuf)
		if errors.Is(err, spool.ErrGroupBoundary) {
			break
		}
		if err != nil {
			return nil, err
		}
		if ok {
			b.recBuf = r.Bytes
			if r.Tenant != g.tenant || !strings.HasPrefix(r.Token, groupablePrefix) || g.rows+r.Events > b.insertMax {
				break
			}
			if b.add(g, r, n) != nil {
				// Read again at the cursor, where it is quarantined.
				break
			}
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
		g.token = "group:" + b.ids.token(g.rows)
		if err := b.sp.SetInflight(spool.Inflight{End: g.next, Token: g.token}); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// firstGroup returns a group of the record at the cursor, nil when the
// spool is empty, and that record's payload. A record at the cursor that
// does not transcode or decode, which PeekPayload checked already for
// one read from disk, is quarantined and the next one taken.
func (b *batcher) firstGroup() (*group, spool.Payload, error) {
	for {
		p, next, ok, err := b.sp.PeekPayload(b.recBuf)
		if err != nil || !ok {
			return nil, spool.Payload{}, err
		}
		b.recBuf = p.Bytes
		// Cloned: p's strings alias recBuf, which the next read reuses.
		g := &group{tenant: strings.Clone(p.Tenant), token: strings.Clone(p.Token)}
		if b.native {
			if b.groupBlk == nil {
				b.groupBlk = new(chwire.NativeBlock)
			}
			b.groupBlk.Reset()
			g.blk = b.groupBlk
		}
		b.ids.reset(p.Tenant)
		aerr := b.add(g, p, next)
		if aerr == nil {
			return g, p, nil
		}
		b.stats.spoolErrors.Add(1)
		b.logger.Error("a spooled batch cannot be read: quarantined", "events", p.Events, "token", p.Token, "error", aerr)
		if qerr := b.sp.Quarantine(next, aerr.Error()); qerr != nil {
			return nil, spool.Payload{}, qerr
		}
	}
}

// add appends the events of p, the record ending at next, to g.
func (b *batcher) add(g *group, p spool.Payload, next spool.Position) error {
	if g.blk != nil {
		_, _, n, err := b.tc.AppendPayload(g.blk, p.Bytes, b.keepID)
		if err != nil {
			return err
		}
		g.rows += n
	} else {
		// Decoded from a copy: the events' strings alias it, and a test
		// writer may keep them past the write.
		rec, err := spool.DecodePayload(bytes.Clone(p.Bytes), g.buffer(&b.groupBuf))
		if err != nil {
			return err
		}
		for i := range rec.Events[len(g.events):] {
			b.ids.add(rec.Events[len(g.events)+i].ID)
		}
		g.events = rec.Events
		b.groupBuf = g.events
		g.rows = len(g.events)
	}
	g.records++
	g.next = next
	return nil
}

// buffer returns the slice the next record of g is decoded onto: g's
// events in buf, the replayer's buffer reused from group to group, so
// that a group is neither regrown nor copied record by record. buf grows
// as the groups need, up to insertMax events: a quiet ingester does not
// hold a buffer sized for the busiest.
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
// growth to decoding, which doubles the buffer past the bound, where it
// is held, for events no group takes, as long as the replayer runs.
//
// A native block is grown alike, in bytes estimated from those of the
// rows it holds (NativeBlock.Reserve, a no-op once the block kept from
// group to group has the room): left to append, its columns of tens of
// megabytes grew in quarter steps, each a copy into fresh memory (a
// quarter of the replayer's CPU in a 500,000-event bench run).
func (b *batcher) growGroup(g *group, size int) {
	size = max(size, g.rows/max(g.records, 1), 1)
	backlog := int(min(b.sp.Stats().Records, math.MaxInt32/int64(size))) * size
	if g.blk != nil {
		g.blk.Reserve(size, min(max(backlog, 2*g.rows), b.insertMax+b.maxEvents)-g.rows)
		return
	}
	buf := g.buffer(&b.groupBuf)
	if cap(buf)-len(buf) >= size {
		return
	}
	want := min(max(backlog, 2*cap(buf)), b.insertMax+b.maxEvents)
	if backlog <= len(buf) || want <= cap(buf) {
		// Nothing more spooled yet, or a record past the bound: decoding
		// grows the buffer for a record that comes.
		return
	}
	grown := make([]otelschema.Event, len(buf), want)
	copy(grown, buf)
	g.events, b.groupBuf = grown, grown
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
