package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// startBatcher returns a batcher on w, shut down at the end of the test.
func startBatcher(t *testing.T, maxEvents, maxPending int, delay time.Duration, w store.Writer) *batcher {
	t.Helper()
	cfg := testConfig()
	cfg.BatchMaxEvents = maxEvents
	cfg.MaxPendingEvents = maxPending
	cfg.BatchMaxDelay = delay
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	b := newBatcher(cfg, w, nil, &counters{}, nil, tracing{})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.Shutdown(ctx)
	})
	return b
}

// events returns n events for tool, with ids distinct across tools, as
// content-derived ids are.
func events(tool string, n int) []otelschema.Event {
	ev := make([]otelschema.Event, n)
	base := xxhash.Sum64String(tool) &^ 0xffffffff
	for i := range ev {
		ev[i] = otelschema.Event{ID: base + uint64(i+1), Name: otelschema.EventCall, Tool: tool}
	}
	return ev
}

func mustEnqueue(t *testing.T, b *batcher, ev []otelschema.Event) ticket {
	t.Helper()
	tk, err := b.enqueue(context.Background(), ev)
	if err != nil {
		t.Fatalf("enqueue(%d events): %v", len(ev), err)
	}
	return tk
}

func TestBatcherFlushBySize(t *testing.T) {
	w := &sink{}
	b := startBatcher(t, 4, 100, time.Hour, w)
	// Full batches are written at once, without waiting for the delay.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.Add(ctx, events("a", 4)); err != nil {
		t.Fatal(err)
	}
	// A request larger than a batch is split; the rest waits.
	tk := mustEnqueue(t, b, events("b", 10))
	if err := (ticket{parts: tk.parts[:2]}).wait(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := w.sizes(), []int{4, 4, 4}; !slices.Equal(got, want) {
		t.Fatalf("batch sizes %v, want %v", got, want)
	}
	if got := b.Pending(); got != 2 {
		t.Fatalf("pending %d, want 2", got)
	}
}

func TestBatcherFlushByDelay(t *testing.T) {
	w := &sink{}
	const delay = 30 * time.Millisecond
	b := startBatcher(t, 1000, 10000, delay, w)
	start := time.Now()
	t1 := mustEnqueue(t, b, events("a", 3))
	t2 := mustEnqueue(t, b, events("b", 2))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tk := range []ticket{t1, t2} {
		if err := tk.wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if elapsed := time.Since(start); elapsed < delay {
		t.Errorf("batch written after %s, before its delay of %s", elapsed, delay)
	}
	if got, want := w.sizes(), []int{5}; !slices.Equal(got, want) {
		t.Fatalf("batch sizes %v, want %v", got, want)
	}
	if w.batches[0].Tenant != store.DefaultTenant || w.batches[0].Token == "" {
		t.Errorf("batch tenant %q token %q", w.batches[0].Tenant, w.batches[0].Token)
	}
	if b.Pending() != 0 {
		t.Errorf("pending %d after the write", b.Pending())
	}
}

func TestBatcherWriteErrorReachesEveryWaiter(t *testing.T) {
	errDown := errors.New("store down")
	f := func(t *testing.T, fail func(store.Batch) error, check func(t *testing.T, err error)) {
		t.Helper()
		w := &sink{fail: fail}
		b := startBatcher(t, 6, 100, time.Hour, w)
		var tickets []ticket
		for i := range 3 {
			tickets = append(tickets, mustEnqueue(t, b, events(fmt.Sprint(i), 2)))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for i, tk := range tickets {
			err := tk.wait(ctx)
			if err == nil {
				t.Fatalf("waiter %d: no error", i)
			}
			check(t, err)
		}
	}
	t.Run("retryable", func(t *testing.T) {
		f(t, func(store.Batch) error { return errDown }, func(t *testing.T, err error) {
			if !errors.Is(err, errDown) || errors.Is(err, store.ErrPermanent) {
				t.Errorf("error %v: want the retryable store error", err)
			}
		})
	})
	t.Run("permanent", func(t *testing.T) {
		perm := fmt.Errorf("%w: table gone", store.ErrPermanent)
		f(t, func(store.Batch) error { return perm }, func(t *testing.T, err error) {
			// Every request refused on its own too: the store, not the data.
			if !errors.Is(err, store.ErrPermanent) || !errors.Is(err, ErrStoreRefused) || errors.Is(err, ErrInvalidData) {
				t.Errorf("error %v: want a permanent store refusal", err)
			}
		})
	})
}

func TestBatcherPermanentErrorBlamesTheBadRequestOnly(t *testing.T) {
	w := &sink{fail: func(b store.Batch) error {
		for _, e := range b.Events {
			if e.Tool == "poison" {
				return fmt.Errorf("%w: cannot parse tool", store.ErrPermanent)
			}
		}
		return nil
	}}
	b := startBatcher(t, 6, 100, time.Hour, w)
	good1 := mustEnqueue(t, b, events("a", 2))
	bad := mustEnqueue(t, b, events("poison", 2))
	good2 := mustEnqueue(t, b, events("b", 2))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := good1.wait(ctx); err != nil {
		t.Errorf("good request: %v", err)
	}
	if err := good2.wait(ctx); err != nil {
		t.Errorf("good request: %v", err)
	}
	if err := bad.wait(ctx); !errors.Is(err, ErrInvalidData) || !errors.Is(err, store.ErrPermanent) {
		t.Errorf("bad request: %v, want invalid data", err)
	}
	if got := w.total(); got != 4 {
		t.Errorf("%d events stored, want the 4 good ones", got)
	}
}

func TestBatcherRefusesWhenPendingIsFull(t *testing.T) {
	w := &sink{gate: make(chan struct{}), entered: make(chan struct{}, 10)}
	b := startBatcher(t, 5, 10, time.Hour, w)
	// Two full batches: one being written (blocked), one queued.
	t1 := mustEnqueue(t, b, events("a", 5))
	<-w.entered
	t2 := mustEnqueue(t, b, events("b", 5))
	start := time.Now()
	if _, err := b.enqueue(context.Background(), events("c", 1)); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("enqueue past MaxPendingEvents: %v, want ErrOverloaded", err)
	}
	if time.Since(start) > time.Second {
		t.Error("the refusal waited")
	}
	if _, err := b.enqueue(context.Background(), events("c", 11)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("enqueue of more than MaxPendingEvents: %v, want ErrTooLarge", err)
	}
	close(w.gate)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tk := range []ticket{t1, t2} {
		if err := tk.wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Room again.
	b.mu.Lock()
	b.maxDelay = time.Millisecond
	b.mu.Unlock()
	if err := b.Add(ctx, events("c", 1)); err != nil {
		t.Fatalf("Add after the writes: %v", err)
	}
}

func TestBatcherShutdownFlushes(t *testing.T) {
	w := &sink{}
	b := startBatcher(t, 100, 1000, time.Hour, w)
	tk := mustEnqueue(t, b, events("a", 5))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tk.wait(ctx); err != nil {
		t.Fatalf("waiter after Shutdown: %v", err)
	}
	if got, want := w.sizes(), []int{5}; !slices.Equal(got, want) {
		t.Fatalf("batch sizes %v, want %v", got, want)
	}
	if _, err := b.enqueue(context.Background(), events("b", 1)); !errors.Is(err, ErrShuttingDown) {
		t.Fatalf("enqueue after Shutdown: %v, want ErrShuttingDown", err)
	}
}

func TestBatcherShutdownGivesUp(t *testing.T) {
	w := &sink{gate: make(chan struct{}), entered: make(chan struct{}, 10)}
	b := startBatcher(t, 5, 100, time.Hour, w)
	t1 := mustEnqueue(t, b, events("a", 5)) // written, blocks
	<-w.entered
	t2 := mustEnqueue(t, b, events("b", 3)) // flushed by Shutdown
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want deadline exceeded", err)
	}
	for i, tk := range []ticket{t1, t2} {
		if err := tk.wait(context.Background()); err == nil || errors.Is(err, store.ErrPermanent) {
			t.Errorf("waiter %d: %v, want a retryable error", i, err)
		}
	}
}

// TestConcurrentRetryIsNotBatchedAgain: the same events admitted while
// their first admission is still being written are not batched again;
// the second request waits for the first one's write and shares its
// outcome. Once settled, the events may be admitted anew (after a failed
// write, the client's retry must be).
func TestConcurrentRetryIsNotBatchedAgain(t *testing.T) {
	w := &sink{gate: make(chan struct{}), entered: make(chan struct{}, 4)}
	var calls int
	w.fail = func(b store.Batch) error {
		calls++
		if calls == 1 {
			return errors.New("transient")
		}
		return nil
	}
	b := startBatcher(t, 100, 1000, time.Millisecond, w)
	ev := events("retry", 5)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	first := mustEnqueue(t, b, ev)
	<-w.entered // the first write is under way, blocked
	second := mustEnqueue(t, b, ev)
	if len(second.parts) != 1 || second.parts[0] != first.parts[0] {
		t.Fatalf("the second admission holds parts %v, want to wait for the first's %v", second.parts, first.parts)
	}
	close(w.gate)
	if err1, err2 := first.wait(ctx), second.wait(ctx); err1 == nil || err2 == nil {
		t.Fatalf("a failed write: the first request got %v, the second %v; want both refused", err1, err2)
	}
	// The retry after the failure is admitted and written.
	if err := mustEnqueue(t, b, ev).wait(ctx); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.batches) != 1 || len(w.batches[0].Events) != 5 {
		t.Fatalf("stored %d batches, want the 5 events once", len(w.batches))
	}
}
