package ingest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

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
type batcher struct {
	w          store.Writer
	tenant     string
	maxEvents  int
	maxDelay   time.Duration
	maxPending int
	timeout    time.Duration
	stats      *counters

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

func newBatcher(cfg Config, w store.Writer, stats *counters) *batcher {
	ctx, cancel := context.WithCancel(context.Background())
	b := &batcher{
		w:          w,
		tenant:     cfg.Tenant,
		maxEvents:  cfg.BatchMaxEvents,
		maxDelay:   cfg.BatchMaxDelay,
		maxPending: cfg.MaxPendingEvents,
		timeout:    cfg.WriteTimeout,
		stats:      stats,
		ctx:        ctx,
		cancel:     cancel,
		done:       make(chan struct{}),
	}
	b.cond.L = &b.mu
	go b.run()
	return b
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
	n := len(events)
	if n == 0 {
		return ticket{}, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return ticket{}, ErrShuttingDown
	case n > b.maxPending:
		// Would never fit, however long the client waits.
		return ticket{}, fmt.Errorf("%w: %d events in one request, more than the %d the ingester holds", ErrTooLarge, n, b.maxPending)
	case b.pending+n > b.maxPending:
		return ticket{}, fmt.Errorf("%w: cannot admit %d events with %d of %d pending", ErrOverloaded, n, b.pending, b.maxPending)
	}
	b.pending += n
	var t ticket
	for len(events) > 0 {
		if b.cur == nil {
			b.cur = b.newBatch()
		}
		cur := b.cur
		k := min(b.maxEvents-len(*cur.events), len(events))
		*cur.events = append(*cur.events, events[:k]...)
		cur.ends = append(cur.ends, len(*cur.events))
		t.parts = append(t.parts, partRef{b: cur, i: len(cur.ends) - 1})
		events = events[k:]
		if len(*cur.events) >= b.maxEvents {
			b.sealLocked()
		}
	}
	if b.draining && b.cur != nil {
		b.sealLocked()
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

		b.write(bt)
		n := len(*bt.events)
		// Not cleared, as in Server.putEvents: reuse overwrites.
		*bt.events = (*bt.events)[:0]
		b.mu.Lock()
		b.pending -= n
		b.pool.Put(bt.events)
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
func (b *batcher) write(bt *batch) {
	events := *bt.events
	bt.errs = make([]error, len(bt.ends))
	err := b.writeEvents(events)
	switch {
	case err == nil:
		b.stats.eventsStored.Add(uint64(len(events)))
		return
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
}

// writeEvents makes one store write, bounded by the write timeout.
func (b *batcher) writeEvents(events []otelschema.Event) error {
	if err := b.ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrShuttingDown, err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.timeout)
	defer cancel()
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
	select {
	case <-b.done:
		b.cancel()
		return nil
	case <-ctx.Done():
		b.cancel()
		<-b.done
		return ctx.Err()
	}
}

// Pending returns the events admitted and not yet written.
func (b *batcher) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pending
}
