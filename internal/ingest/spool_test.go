package ingest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/mcpdrift/mcpdrift/internal/spool"
	"github.com/mcpdrift/mcpdrift/store"
)

// spoolConfig returns a test configuration with a spool in a temporary
// directory.
func spoolConfig(t *testing.T) Config {
	cfg := testConfig()
	cfg.Spool = spool.Config{Dir: t.TempDir(), MaxBytes: 1 << 20, SegmentBytes: 64 << 10, Fsync: true}
	cfg.SpoolAfter = 50 * time.Millisecond
	return cfg
}

// startSpoolBatcher returns a batcher with a spool, both closed at the end of
// the test.
func startSpoolBatcher(t *testing.T, cfg Config, w store.Writer) (*batcher, *spool.Spool) {
	t.Helper()
	sp, err := spool.Open(cfg.Spool, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := newBatcher(cfg, w, sp, &counters{}, nil, tracing{})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.Shutdown(ctx)
		sp.Close()
	})
	return b, sp
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSpoolWhileStoreFails(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	w := &sink{fail: func(store.Batch) error {
		if down.Load() {
			return errors.New("store down")
		}
		return nil
	}}
	b, sp := startSpoolBatcher(t, spoolConfig(t), w)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Acknowledged once spooled, although the store fails.
	for _, tool := range []string{"a", "b", "c"} {
		if err := b.Add(ctx, events(tool, 10)); err != nil {
			t.Fatalf("Add(%s) while the store is down: %v", tool, err)
		}
	}
	if w.total() != 0 || sp.Stats().Records == 0 {
		t.Fatalf("stored %d, spooled %d records: want all spooled", w.total(), sp.Stats().Records)
	}
	down.Store(false)
	waitFor(t, "the replay", func() bool { return w.total() == 30 && !b.spooling.Load() })
	// Replayed in order, each batch under the token it was spooled with.
	w.mu.Lock()
	for i, bt := range w.batches {
		if bt.Token != batchToken(bt.Tenant, bt.Events) {
			t.Errorf("batch %d token %q is not its content's", i, bt.Token)
		}
		if want := []string{"a", "b", "c"}[i]; bt.Events[0].Tool != want {
			t.Errorf("batch %d is %s, want %s", i, bt.Events[0].Tool, want)
		}
	}
	w.mu.Unlock()
	// Healthy again: written directly.
	if err := b.Add(ctx, events("d", 5)); err != nil {
		t.Fatal(err)
	}
	if st := b.stats.snapshot(receiver.Stats{}); st.Spool.Replayed != 3 || st.EventsStored != 35 || st.Spool.SpooledEvents != 35 {
		t.Fatalf("stats %+v", st)
	}
}

func TestSpoolOnSlowWrite(t *testing.T) {
	w := &sink{gate: make(chan struct{})}
	cfg := spoolConfig(t)
	b, _ := startSpoolBatcher(t, cfg, w)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := b.Add(ctx, events("a", 3)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("acknowledged after %s with a hung store", d)
	}
	close(w.gate)
	// The hung write and the replay both reach the sink, under one token:
	// the store deduplicates them.
	waitFor(t, "the replay", func() bool { return len(w.sizes()) == 2 && !b.spooling.Load() })
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.batches[0].Token != w.batches[1].Token {
		t.Fatalf("tokens %q and %q differ", w.batches[0].Token, w.batches[1].Token)
	}
}

func TestSpoolFullRefuses(t *testing.T) {
	w := &sink{fail: func(store.Batch) error { return errors.New("store down") }}
	cfg := spoolConfig(t)
	cfg.Spool.MaxBytes, cfg.Spool.SegmentBytes = 4<<10, 4<<10
	b, sp := startSpoolBatcher(t, cfg, w)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var acked, refused int
	for i := range 50 {
		err := b.Add(ctx, events(string(rune('a'+i)), 10))
		switch {
		case err == nil:
			acked++
		case errors.Is(err, ErrSpoolFull):
			refused++
		default:
			t.Fatalf("Add %d: %v", i, err)
		}
	}
	if acked == 0 || refused == 0 || sp.Stats().Records != int64(acked) {
		t.Fatalf("acked %d, refused %d, spooled %d", acked, refused, sp.Stats().Records)
	}
}

func TestDedupDropsRetriedEvents(t *testing.T) {
	w := &sink{}
	b := startBatcher(t, 100, 1000, time.Millisecond, w)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 3 {
		if err := b.Add(ctx, events("a", 10)); err != nil {
			t.Fatal(err)
		}
	}
	// A partial overlap keeps the new events only.
	if err := b.Add(ctx, append(events("a", 10), events("b", 5)...)); err != nil {
		t.Fatal(err)
	}
	if w.total() != 15 || b.stats.dedupHits.Load() != 30 {
		t.Fatalf("stored %d events with %d dedup hits, want 15 and 30", w.total(), b.stats.dedupHits.Load())
	}
}

func TestIDSetBounded(t *testing.T) {
	s := newIDSet(1000)
	for id := uint64(1); id <= 100000; id++ {
		s.add(id)
	}
	if !s.has(100000) || !s.has(99600) || s.has(1) || s.has(50000) {
		t.Fatal("idSet does not keep the latest ids only")
	}
	if len(s.cur) > 1024 {
		t.Fatalf("%d slots for 1000 ids", len(s.cur))
	}
}

// TestIDSetAddAgain adds ids that the set holds already: one in the current
// generation takes no second slot, one in the previous generation is
// carried into the current one, so that it outlives the next rotation.
func TestIDSetAddAgain(t *testing.T) {
	s := newIDSet(8) // 4 ids per generation
	for range 3 {
		s.add(7)
	}
	if s.n != 1 {
		t.Fatalf("one id added three times counts %d", s.n)
	}
	for id := uint64(100); id < 103; id++ {
		s.add(id)
	}
	s.add(200) // rotates: 7 and 100-102 are now the previous generation
	s.add(7)   // carried into the current one, with 200
	for id := uint64(300); id < 303; id++ {
		s.add(id) // 302 rotates again: 100-102 are dropped, 7 is kept
	}
	s.add(400)
	if !s.has(7) || s.has(100) || !s.has(400) || !s.has(302) {
		t.Fatalf("after two rotations: has(7) %t has(100) %t has(400) %t has(302) %t, want true false true true",
			s.has(7), s.has(100), s.has(400), s.has(302))
	}
}
