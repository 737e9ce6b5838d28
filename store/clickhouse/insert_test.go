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
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
)

// TestInsertBufferGrownOnce sends a block of 40,000 events over a new
// connection and counts the bytes this process allocated meanwhile.
// lz4-compressed, ch-go encodes the whole block into the connection's
// buffer, then compresses it: the buffer and the compressed copy, about
// twice the block; grown by append from empty, the buffer alone
// allocated about five times the block, in steps. A second INSERT on the
// same connection allocates a fraction of it. Uncompressed (as over
// loopback by default), the columns are written as they are and the
// buffer is left alone: a fraction of the block at the first INSERT too.
func TestInsertBufferGrownOnce(t *testing.T) {
	b := clickhousetest.Server(t)
	ctx := context.Background()
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
	for _, tc := range []struct {
		compression   string
		first, second float64 // the most allocated, in blocks
	}{
		{"lz4", 3, 0.5},
		{"none", 0.5, 0.5},
	} {
		t.Run(tc.compression, func(t *testing.T) {
			cfg := b.Config(clickhousetest.FreshDatabase())
			cfg.Compression = tc.compression
			if _, err := b.Migrate(ctx, cfg.Schema); err != nil {
				t.Fatal(err)
			}
			s, err := clickhouse.Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				s.Close()
				if err := b.DropDatabase(ctx, cfg.Schema.Database); err != nil {
					t.Errorf("cannot drop the test database %s: %v", cfg.Schema.Database, err)
				}
			})
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
			first, second := allocated("buffer-1"), allocated("buffer-2")
			t.Logf("a %d-byte block, %s: the INSERTs allocated %.2f× and %.2f× its size", size, tc.compression, first, second)
			if first > tc.first || second > tc.second {
				t.Errorf("the first and second INSERTs of a %d-byte block, %s, allocated %.2f× and %.2f× its size, want at most %.1f× and %.1f×",
					size, tc.compression, first, second, tc.first, tc.second)
			}
		})
	}
}
