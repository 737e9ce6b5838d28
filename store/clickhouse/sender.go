package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// part is a run of events of one tenant.
type part struct {
	tenant string
	events []otelschema.Event
}

// chunk is what one INSERT sends.
type chunk struct {
	// token is the insert_deduplication_token: the batch's, or for batches
	// without one a store.UniqueToken, so that a retry of the INSERT is
	// stored once and the chunk is stored whatever was stored before.
	token string
	parts []part
	// blk, when set, is the chunk's rows encoded by the caller
	// (Store.WriteNative), sent as it is; parts is then empty.
	blk  *chwire.NativeBlock
	rows int

	done chan struct{} // closed once err is set
	err  error
}

// flushFunc sends one chunk in one INSERT.
type flushFunc func(ctx context.Context, c *chunk) error

// sender turns store batches into INSERTs of bounded size: batches with a
// token are split at MaxRows (each piece keeps a token derived from the
// batch's, so that a retried batch splits and deduplicates alike); small
// batches without a token are merged until MinRows or MaxDelay. At most
// Senders INSERTs run at once, and each is retried on transient errors.
type sender struct {
	cfg       InsertConfig
	flush     flushFunc
	retryable func(error) bool

	slots chan struct{} // one per concurrent INSERT

	ctx    context.Context // ends at close, bounding merged chunks
	cancel context.CancelFunc

	mu      sync.Mutex
	pending *chunk
	timer   *time.Timer
	closed  bool
	flights sync.WaitGroup
}

func newSender(cfg InsertConfig, flush flushFunc, retryable func(error) bool) *sender {
	ctx, cancel := context.WithCancel(context.Background())
	return &sender{cfg: cfg, flush: flush, retryable: retryable, slots: make(chan struct{}, cfg.Senders), ctx: ctx, cancel: cancel}
}

// split cuts b into chunks of at most max rows. A batch that fits keeps its
// token; the pieces of a larger one get token/1, token/2, … ; without a
// token, each piece gets a unique one.
func split(b store.Batch, max int) []*chunk {
	tenant := b.Tenant
	if tenant == "" {
		tenant = store.DefaultTenant
	}
	n := (len(b.Events) + max - 1) / max
	out := make([]*chunk, 0, n)
	for i := 0; i < n; i++ {
		lo, hi := i*max, min((i+1)*max, len(b.Events))
		token := b.Token
		switch {
		case token == "":
			token = store.UniqueToken()
		case n > 1:
			token += "/" + strconv.Itoa(i+1)
		}
		out = append(out, &chunk{token: token, parts: []part{{tenant: tenant, events: b.Events[lo:hi]}}, rows: hi - lo, done: make(chan struct{})})
	}
	return out
}

// write sends b and returns once every row is stored, or with the first
// error.
func (s *sender) write(ctx context.Context, b store.Batch) error {
	if len(b.Events) == 0 {
		return nil
	}
	if b.Token == "" && len(b.Events) < s.cfg.MinRows {
		return s.merge(ctx, b)
	}
	chunks := split(b, s.cfg.MaxRows)
	if len(chunks) == 1 {
		return s.send(ctx, chunks[0])
	}
	errs := make([]error, len(chunks))
	var wg sync.WaitGroup
	for i, c := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.send(ctx, c)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// merge adds a small batch to the pending chunk and waits for its INSERT.
func (s *sender) merge(ctx context.Context, b store.Batch) error {
	tenant := b.Tenant
	if tenant == "" {
		tenant = store.DefaultTenant
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	if s.pending == nil {
		s.pending = &chunk{token: store.UniqueToken(), done: make(chan struct{})}
		pending := s.pending
		s.timer = time.AfterFunc(s.cfg.MaxDelay, func() { s.release(pending) })
	}
	c := s.pending
	c.parts = append(c.parts, part{tenant: tenant, events: b.Events})
	c.rows += len(b.Events)
	if c.rows >= s.cfg.MinRows {
		s.detachLocked()
	}
	s.mu.Unlock()
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return fmt.Errorf("cannot wait for the insert of %d events: %w", len(b.Events), ctx.Err())
	}
}

// release sends c if it is still the pending chunk (its delay ran out).
func (s *sender) release(c *chunk) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == c {
		s.detachLocked()
	}
}

// detachLocked sends the pending chunk in the background.
func (s *sender) detachLocked() {
	c := s.pending
	s.pending = nil
	s.timer.Stop()
	s.flights.Add(1)
	go func() {
		defer s.flights.Done()
		ctx, cancel := context.WithTimeout(s.ctx, s.cfg.Timeout)
		defer cancel()
		_ = s.send(ctx, c)
	}()
}

// send runs c's INSERT in a sender slot, retrying transient errors, and
// records the outcome in c.
func (s *sender) send(ctx context.Context, c *chunk) error {
	defer close(c.done)
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		c.err = fmt.Errorf("cannot insert %d events: no sender free: %w", c.rows, ctx.Err())
		return c.err
	}
	defer func() { <-s.slots }()
	c.err = retry(ctx, s.cfg.Attempts, s.cfg.Backoff, s.retryable, func() error { return s.flush(ctx, c) })
	return c.err
}

// retry calls f up to attempts times while it fails with an error that
// retryable accepts, waiting backoff, then twice as long, and so on.
func retry(ctx context.Context, attempts int, backoff time.Duration, retryable func(error) bool, f func() error) error {
	var err error
	for i := 1; ; i++ {
		if err = f(); err == nil {
			return nil
		}
		if i >= attempts || !retryable(err) {
			if i > 1 {
				return fmt.Errorf("after %d attempts: %w", i, err)
			}
			return err
		}
		t := time.NewTimer(backoff << (i - 1))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("after %d attempts: %w (retry cancelled: %w)", i, err, ctx.Err())
		}
	}
}

// close sends what is pending, waits for the INSERTs in flight and stops.
func (s *sender) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	if s.pending != nil {
		s.detachLocked()
	}
	s.mu.Unlock()
	s.flights.Wait()
	s.cancel()
}
