package ingest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/mcpdrift/mcpdrift/internal/spool"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// batcher gathers the events of many requests into batches and writes them
// with one goroutine, so that the store sees few, large inserts one at a
// time while the next batch fills. A request waits until every batch holding
// its events is durable: an export is acknowledged only then.
//
// Memory is bounded by maxPending: the events accepted but not yet written,
// counted from the moment a request is admitted until its batch's Write
// returns. Past it requests are refused at once, never queued.
//
// With a spool, a batch whose write fails retryably or takes longer than
// spoolAfter is appended to the spool instead, and its requests are
// acknowledged once it is fsynced there. From then on batches go to the
// spool, in order behind it, until the replayer goroutine has written
// everything in it to the store; then writes go to the store again. When
// the spool is full, requests are refused at admission.
//
// With ackSpooled (Config.Ack AckSpooled) every batch goes to the spool:
// the writer seals the filling batch as soon as it is idle, so that the
// requests that arrived during one append and fsync share the next one
// (group commit), and the replayer writes the spool to the store in
// inserts of up to insertMax events gathered from consecutive records.
type batcher struct {
	w          store.Writer
	tenant     string
	maxEvents  int
	maxDelay   time.Duration
	maxPending int
	timeout    time.Duration
	stats      *counters
	logger     *slog.Logger

	// sp is the spool, nil without one.
	sp         *spool.Spool
	spoolAfter time.Duration
	// ackSpooled acknowledges every batch once spooled; the replayer
	// groups records into inserts of up to insertMax events, waiting at
	// most insertDelay for more.
	ackSpooled  bool
	insertMax   int
	insertDelay time.Duration
	// flushed is closed when Shutdown tells the replayer to stop waiting
	// for more records (see flushing).
	flushed   chan struct{}
	flushOnce sync.Once
	// groupBuf holds the events of the replayer's groups, grown on demand;
	// only the replayer uses it.
	groupBuf []otelschema.Event
	// spooling sends batches to the spool only: it holds records, or the
	// store failed or was too slow. Set by the writer goroutine, cleared by
	// the replayer once the spool is empty and no abandoned write is
	// running, both under modeMu. While it is false the writer owns the
	// spool's head and the replayer is idle.
	spooling atomic.Bool
	modeMu   sync.Mutex
	// abandoned is closed when the last write left running past spoolAfter
	// returns; nil before the first.
	abandoned  atomic.Pointer[chan struct{}]
	replayDone chan struct{} // closed when the replayer exits; nil without a spool

	// ctx is the parent of every write; cancelled when Shutdown gives up.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the writer goroutine exits

	mu      sync.Mutex
	cond    sync.Cond // signalled when queue grows or closed is set
	cur     *batch    // the batch filling up, nil when none
	queue   []*batch  // sealed batches waiting for the writer, in order
	pending int       // events admitted and not yet written
	closed  bool      // no more events are admitted
	// draining writes every batch at once: the server is shutting down and
	// waits for the requests in flight.
	draining bool
	pool     sync.Pool // *[]otelschema.Event of written batches
	// recent holds the ids of events made durable lately; an event whose
	// id it holds is dropped at admission. Nil when disabled.
	recent *idSet
	// inflight maps the id of each event admitted and not yet settled to
	// the part that holds it: an event admitted again meanwhile — the same
	// export sent concurrently, a retry while the first try still waits —
	// is not batched again, and its request waits for that part instead.
	// Nil when recent is.
	inflight map[uint64]partRef
}

// batch is a set of events written with one store.Write.
type batch struct {
	events *[]otelschema.Event
	// ends holds, for each part (one request's events, or a chunk of them),
	// the offset just past its last event.
	ends  []int
	timer *time.Timer
	// errs holds the outcome of each part; it is set before done is closed
	// and read only after.
	errs []error
	done chan struct{}
}

// ticket locates the events of one request in the batches that hold them.
type ticket struct {
	parts []partRef
}

type partRef struct {
	b *batch
	i int
}

// newBatcher starts a batcher writing to w and, when sp is not nil,
// spooling to sp and replaying it. A nil logger discards logs.
func newBatcher(cfg Config, w store.Writer, sp *spool.Spool, stats *counters, logger *slog.Logger) *batcher {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &batcher{
		w:          newLoggedWriter(w, logger),
		tenant:     cfg.Tenant,
		maxEvents:  cfg.BatchMaxEvents,
		maxDelay:   cfg.BatchMaxDelay,
		maxPending: cfg.MaxPendingEvents,
		timeout:    cfg.WriteTimeout,
		stats:      stats,
		logger:     logger,
		sp:         sp,
		spoolAfter: cfg.SpoolAfter,
		ackSpooled: sp != nil && cfg.Ack == AckSpooled,
		insertMax:  cfg.InsertMaxEvents,
		flushed:    make(chan struct{}),
		ctx:        ctx,
		cancel:     cancel,
		done:       make(chan struct{}),
		recent:     newIDSet(cfg.DedupIDs),
	}
	if b.recent != nil {
		b.inflight = make(map[uint64]partRef)
	}
	b.cond.L = &b.mu
	b.insertDelay = cfg.InsertMaxDelay
	if sp != nil {
		if b.ackSpooled || sp.Stats().Records > 0 {
			// Replay what an earlier process left before writing anew.
			b.spooling.Store(true)
		}
		b.replayDone = make(chan struct{})
		go b.replay()
	}
	go b.run()
	return b
}

// remember adds the ids of events made durable to the recent set.
func (b *batcher) remember(events []otelschema.Event) {
	if b.recent == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range events {
		b.recent.add(events[i].ID)
	}
}

// dropRecent returns events without those whose id is in the recent set,
// counting them; events itself when none is. The caller holds mu.
func (b *batcher) dropRecentLocked(events []otelschema.Event) []otelschema.Event {
	if b.recent == nil {
		return events
	}
	var kept []otelschema.Event
	for i := range events {
		if b.recent.has(events[i].ID) {
			if kept == nil {
				kept = make([]otelschema.Event, i, len(events))
				copy(kept, events[:i])
			}
			b.stats.dedupHits.Add(1)
			continue
		}
		if kept != nil {
			kept = append(kept, events[i])
		}
	}
	if kept == nil {
		return events
	}
	return kept
}

// dropInflightLocked returns events without those whose id is in a part
// not yet settled, counting them, with the parts to wait for instead, each
// once; events itself when none is. The caller holds mu.
func (b *batcher) dropInflightLocked(events []otelschema.Event) ([]otelschema.Event, []partRef) {
	if len(b.inflight) == 0 {
		return events, nil
	}
	var (
		kept  []otelschema.Event
		waits []partRef
	)
	for i := range events {
		p, busy := b.inflight[events[i].ID]
		if !busy || events[i].ID == 0 {
			if kept != nil {
				kept = append(kept, events[i])
			}
			continue
		}
		if kept == nil {
			kept = make([]otelschema.Event, i, len(events))
			copy(kept, events[:i])
		}
		b.stats.dedupHits.Add(1)
		if !slices.Contains(waits, p) {
			waits = append(waits, p)
		}
	}
	if kept == nil {
		return events, waits
	}
	return kept, waits
}

// settleLocked forgets the in-flight ids of bt, written (or refused):
// from now on the recent set, or a new admission, answers for them. The
// caller holds mu.
func (b *batcher) settleLocked(bt *batch) {
	if b.inflight == nil {
		return
	}
	for i := range *bt.events {
		id := (*bt.events)[i].ID
		if p, ok := b.inflight[id]; ok && p.b == bt {
			delete(b.inflight, id)
		}
	}
}

// Add admits events, copying them into batches, and waits until they are
// durable. See enqueue and ticket.wait.
func (b *batcher) Add(ctx context.Context, events []otelschema.Event) error {
	t, err := b.enqueue(events)
	if err != nil {
		return err
	}
	return t.wait(ctx)
}

// enqueue copies events into the filling batch, sealing it whenever it
// reaches maxEvents, so that the caller may reuse events as soon as it
// returns. It refuses the events, all of them, when the ingester is
// overloaded or shutting down.
func (b *batcher) enqueue(events []otelschema.Event) (ticket, error) {
	if len(events) == 0 {
		return ticket{}, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ticket{}, ErrShuttingDown
	}
	events = b.dropRecentLocked(events)
	events, waits := b.dropInflightLocked(events)
	n := len(events)
	switch {
	case n == 0:
		// Every event was made durable already, or is being written: a
		// retry.
		return ticket{parts: waits}, nil
	case b.sp != nil && b.spooling.Load() && b.sp.Full():
		return ticket{}, fmt.Errorf("%w: cannot admit %d events until the spool has room again", ErrSpoolFull, n)
	case n > b.maxPending:
		// Would never fit, however long the client waits.
		return ticket{}, fmt.Errorf("%w: %d events in one request, more than the %d the ingester holds", ErrTooLarge, n, b.maxPending)
	case b.pending+n > b.maxPending:
		return ticket{}, fmt.Errorf("%w: cannot admit %d events with %d of %d pending", ErrOverloaded, n, b.pending, b.maxPending)
	}
	b.pending += n
	t := ticket{parts: waits}
	for len(events) > 0 {
		if b.cur == nil {
			b.cur = b.newBatch()
		}
		cur := b.cur
		k := min(b.maxEvents-len(*cur.events), len(events))
		*cur.events = append(*cur.events, events[:k]...)
		cur.ends = append(cur.ends, len(*cur.events))
		part := partRef{b: cur, i: len(cur.ends) - 1}
		t.parts = append(t.parts, part)
		if b.inflight != nil {
			for i := range events[:k] {
				if id := events[i].ID; id != 0 { // as in the recent set
					b.inflight[id] = part
				}
			}
		}
		events = events[k:]
		if len(*cur.events) >= b.maxEvents {
			b.sealLocked()
		}
	}
	switch {
	case b.draining && b.cur != nil:
		b.sealLocked()
	case b.ackSpooled && b.cur != nil && len(b.queue) == 0:
		// Wakes an idle writer: it seals the batch at once.
		b.cond.Signal()
	}
	return t, nil
}

func (b *batcher) newBatch() *batch {
	bt := &batch{done: make(chan struct{})}
	if p, ok := b.pool.Get().(*[]otelschema.Event); ok {
		bt.events = p
	} else {
		bt.events = new([]otelschema.Event)
	}
	bt.timer = time.AfterFunc(b.maxDelay, func() { b.expire(bt) })
	return bt
}

// expire seals bt when its delay is over, unless it was sealed already.
func (b *batcher) expire(bt *batch) {
	b.mu.Lock()
	if b.cur == bt {
		b.sealLocked()
	}
	b.mu.Unlock()
}

// sealLocked hands the filling batch to the writer.
func (b *batcher) sealLocked() {
	b.cur.timer.Stop()
	b.queue = append(b.queue, b.cur)
	b.cur = nil
	b.cond.Signal()
}

// wait returns once every batch holding the ticket's events is written, with
// the first error met, or when ctx is done. Events of a request that stops
// waiting are still written.
func (t ticket) wait(ctx context.Context) error {
	for _, p := range t.parts {
		select {
		case <-p.b.done:
			if err := p.b.errs[p.i]; err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

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
	var (
		next spool.Position
		err  error
	)
	if b.sp != nil {
		var spooling bool
		if next, spooling = b.spoolBatch(bt); spooling || bt.errs[0] != nil {
			return false
		}
		err, detached = b.writeWithBudget(events)
		switch {
		case err == nil:
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
		err = b.writeEvents(events)
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
		if perr := b.writeEvents(part); perr != nil {
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
// errSlowWrite.
func (b *batcher) writeWithBudget(events []otelschema.Event) (err error, detached bool) {
	if b.sp == nil {
		return b.writeEvents(events), false
	}
	res := make(chan error, 1)
	fin := make(chan struct{})
	go func() {
		defer close(fin)
		res <- b.writeEvents(events)
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
// the replayer writes this one.
func (b *batcher) spoolBatch(bt *batch) (next spool.Position, spooling bool) {
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
		start := time.Now()
		err := b.w.Write(ctx, store.Batch{Tenant: g.tenant, Token: g.token, Events: g.events})
		b.stats.observeWrite(start)
		cancel()
		n := len(g.events)
		switch {
		case err == nil:
			backoff = replayMinBackoff
			b.stats.replayed.Add(uint64(g.records))
			b.stats.replayedEvents.Add(uint64(n))
			b.stats.eventsStored.Add(uint64(n))
			b.stats.observeInsert(n)
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

// writeEvents makes one store write, bounded by the write timeout.
func (b *batcher) writeEvents(events []otelschema.Event) error {
	if err := b.ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrShuttingDown, err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.timeout)
	defer cancel()
	start := time.Now()
	defer b.stats.observeWrite(start)
	b.stats.observeInsert(len(events))
	return b.w.Write(ctx, store.Batch{Tenant: b.tenant, Token: batchToken(b.tenant, events), Events: events})
}

// batchToken identifies a batch by its tenant and its events' identities, so
// that writing the same batch again yields the same token.
func batchToken(tenant string, events []otelschema.Event) string {
	d := xxhash.New()
	_, _ = d.WriteString(tenant)
	var buf [8]byte
	for i := range events {
		binary.LittleEndian.PutUint64(buf[:], events[i].ID)
		_, _ = d.Write(buf[:])
	}
	return fmt.Sprintf("%016x-%d", d.Sum64(), len(events))
}

// Drain makes the batcher write every batch at once, without waiting for
// more events, so that the requests in flight during a shutdown finish soon.
func (b *batcher) Drain() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.draining = true
	if b.cur != nil {
		b.sealLocked()
	}
}

// Shutdown refuses new events, writes the pending ones and waits for them.
// When ctx ends first, the writes in progress are cancelled, the batches
// left fail with ErrShuttingDown, and ctx's error is returned.
func (b *batcher) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		if b.cur != nil {
			b.sealLocked()
		}
		b.cond.Broadcast()
	}
	b.mu.Unlock()
	var err error
	select {
	case <-b.done:
		if b.ackSpooled {
			b.flushSpool(ctx)
		}
	case <-ctx.Done():
		err = ctx.Err()
	}
	// Stops the replayer, and the writes in progress when ctx ended.
	b.cancel()
	<-b.done
	if b.replayDone != nil {
		<-b.replayDone
	}
	// A write left running past spoolAfter still reads its batch.
	if p := b.abandoned.Load(); p != nil {
		select {
		case <-*p:
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
		}
	}
	return err
}

// flushSpool lets the replayer write what the spool holds without waiting
// for more, until the spool is empty or ctx ends: after a clean shutdown
// the reports show every acknowledged event. What is left stays durable in
// the spool and is replayed at the next start.
func (b *batcher) flushSpool(ctx context.Context) {
	b.flushOnce.Do(func() { close(b.flushed) })
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for b.sp.Stats().Records > 0 {
		select {
		case <-t.C:
		case <-ctx.Done():
			b.logger.Warn("stopping with spooled batches not yet stored: they are replayed at the next start", "records", b.sp.Stats().Records)
			return
		}
	}
}

// Pending returns the events admitted and not yet written.
func (b *batcher) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pending
}
