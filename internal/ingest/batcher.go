package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/internal/spool"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
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
	w          *loggedWriter
	tenant     string
	maxEvents  int
	maxDelay   time.Duration
	maxPending int
	timeout    time.Duration
	stats      *counters
	logger     *slog.Logger
	tr         tracing

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
	// What only the replayer uses: groupBuf holds the events of its groups
	// for a writer that takes events only, grown on demand; with a native
	// one (native), groupBlk holds the groups' rows, tc transcodes each
	// record's payload into it, and keepID adds the id of each event to
	// ids, the group token's hash. recBuf holds the payload read last.
	groupBuf []otelschema.Event
	native   bool
	groupBlk *chwire.NativeBlock
	tc       spool.Transcoder
	ids      tokenHash
	keepID   func(id uint64) bool
	recBuf   []byte
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
	// journal keeps recent's ids beside the spool, for the next process;
	// nil without a spool. journaled is how many it gave at start-up.
	journal   *idJournal
	journaled int
	// inflight maps the id of each event admitted and not yet settled to
	// the part that holds it: an event admitted again meanwhile — the same
	// export sent concurrently, a retry while the first try still waits —
	// is not batched again, and its request waits for that part instead.
	// Nil when recent is.
	inflight map[uint64]partRef
}

// insertRowsLimiter is a store that bounds the rows of one INSERT. Its
// Write splits a larger batch; a Native block cannot be split, so the
// replayer gathers no group past the bound.
type insertRowsLimiter interface {
	MaxInsertRows() int
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
	// requests holds the span context of each traced request with a part
	// in the batch, in order; empty when nothing is traced.
	requests []trace.SpanContext
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
// spooling to sp and replaying it, traced by tr. A nil logger discards
// logs.
func newBatcher(cfg Config, w store.Writer, sp *spool.Spool, stats *counters, logger *slog.Logger, tr tracing) *batcher {
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
		tr:         tr.forBatcher(sp != nil),
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
		if sp != nil && cfg.Spool.Dir != "" {
			j, ids, err := openIDJournal(cfg.Spool.Dir, cfg.DedupIDs/2, logger)
			if err != nil {
				logger.Warn("no recent-id journal: after a restart, retries of exports stored before it may be stored twice", "error", err)
			}
			b.journal = j
			for _, id := range ids {
				b.recent.add(id)
			}
			b.journaled = len(ids)
		}
	}
	b.cond.L = &b.mu
	b.insertDelay = cfg.InsertMaxDelay
	b.native = b.w.nw != nil
	if m, ok := w.(insertRowsLimiter); ok && b.native && m.MaxInsertRows() > 0 {
		// A native block is one INSERT: a store that bounds its INSERTs
		// (the server's store.insert.max-rows) bounds the groups.
		b.insertMax = min(b.insertMax, m.MaxInsertRows())
	}
	b.keepID = func(id uint64) bool {
		b.ids.add(id)
		return true
	}
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

// Add admits events, copying them into batches, and waits until they are
// durable. See enqueue and ticket.wait.
func (b *batcher) Add(ctx context.Context, events []otelschema.Event) error {
	t, err := b.enqueue(ctx, events)
	if err != nil {
		return err
	}
	return t.wait(ctx)
}

// enqueue copies events into the filling batch, sealing it whenever it
// reaches maxEvents, so that the caller may reuse events as soon as it
// returns. It refuses the events, all of them, when the ingester is
// overloaded or shutting down. The span of ctx, if any, is that of the
// request: the batches it joins record it.
func (b *batcher) enqueue(ctx context.Context, events []otelschema.Event) (ticket, error) {
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
	var sc trace.SpanContext
	if b.tr.tracer != nil {
		sc = trace.SpanContextFromContext(ctx)
	}
	for len(events) > 0 {
		if b.cur == nil {
			b.cur = b.newBatch()
		}
		cur := b.cur
		k := min(b.maxEvents-len(*cur.events), len(events))
		*cur.events = append(*cur.events, events[:k]...)
		cur.ends = append(cur.ends, len(*cur.events))
		if sc.IsValid() {
			cur.requests = append(cur.requests, sc)
		}
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
	if jerr := b.journal.close(); jerr != nil {
		b.logger.Warn("cannot close the recent-id journal", "error", jerr)
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
