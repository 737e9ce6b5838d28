package clickhouse_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// TestInsertBufferGrownOnce sends a block of 40,000 events, lz4
// compressed as by default, over a new connection and counts the bytes
// this process allocated meanwhile: the connection's buffer, which ch-go
// encodes the whole block into, and the compressed copy, about twice the
// block. Grown by append from empty, the buffer alone allocated about
// five times the block, in steps. A second INSERT of the block on the
// same connection allocates a fraction of it.
func TestInsertBufferGrownOnce(t *testing.T) {
	b := clickhousetest.Server(t)
	s := b.Open(t)
	ctx := context.Background()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	events := make([]otelschema.Event, 40_000)
	now := time.Now().UnixNano()
	for i := range events {
		events[i] = otelschema.Event{ID: uint64(i + 1), Name: otelschema.EventCall, Time: now + int64(i), Tool: fmt.Sprint("tool-", i%97),
			Outcome: otelschema.OutcomeCurrent, SessionID: fmt.Sprintf("session-%08x", i*2654435761), RequestID: fmt.Sprint("req-", i)}
	}
	var blk chwire.NativeBlock
	blk.Encode("buffer", events)
	size := 0
	for _, c := range blk.Chunks() {
		size += len(c)
	}
	allocated := func(token string) float64 {
		t.Helper()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := s.WriteNative(ctx, token, &blk); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(size)
	}
	first := allocated("buffer-1")
	t.Logf("a %d-byte block: the first INSERT allocated %.2f× its size", size, first)
	if first > 3 {
		t.Errorf("the first INSERT of a %d-byte block allocated %.1f× its size, want at most 3× (the buffer once, the compressed copy)", size, first)
	}
	if got := allocated("buffer-2"); got > 0.5 {
		t.Errorf("a second INSERT of the block on the same connection allocated %.1f× its size, want at most 0.5×", got)
	}
}
