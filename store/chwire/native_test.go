package chwire

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// BenchmarkNativeEncode encodes 100,000 simulator events into a Native
// block, as the embedded store's Write does; ns/event is per event.
func BenchmarkNativeEncode(b *testing.B) {
	g, err := simulate.NewGenerator(simulate.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	var rec simulate.Record
	var events []otelschema.Event
	for len(events) < 100000 && g.Next(&rec) {
		events = append(events, rec.Event)
	}
	var blk NativeBlock
	b.ResetTimer()
	for range b.N {
		blk.Encode("bench", events)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}

// TestAppendInPieces encodes the same events at once and in pieces: the
// blocks are byte for byte the same (the map column's offsets continue
// from piece to piece), and Columns frames the same bytes as Chunks, each
// column's name and type apart.
func TestAppendInPieces(t *testing.T) {
	g, err := simulate.NewGenerator(simulate.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var rec simulate.Record
	var events []otelschema.Event
	for len(events) < 3*encodeChunk+11 && g.Next(&rec) {
		rec.Event.Attributes = map[string]string{"k": fmt.Sprint(len(events))}
		events = append(events, rec.Event)
	}
	var whole, pieces NativeBlock
	whole.Encode("acme", events)
	pieces.Encode("acme", events[:5]) // replaced by what follows
	pieces.Reset()
	for _, cut := range [][2]int{{0, 1}, {1, encodeChunk + 3}, {encodeChunk + 3, len(events)}} {
		pieces.Append("acme", events[cut[0]:cut[1]])
	}
	flat := func(chunks [][]byte) []byte { return bytes.Join(chunks, nil) }
	if pieces.Rows() != len(events) || !bytes.Equal(flat(whole.Chunks()), flat(pieces.Chunks())) {
		t.Fatalf("%d rows in pieces, %d at once; the blocks differ", pieces.Rows(), len(events))
	}
	var framed [][]byte
	for i, c := range whole.Columns() {
		if c.Name != columnNames[i] || c.Type != columnTypes[i] {
			t.Fatalf("column %d: %s %s", i, c.Name, c.Type)
		}
		framed = append(framed, columnHeaders[i], flat(c.Data))
	}
	if chunks := whole.Chunks(); !bytes.Equal(flat(framed), flat(chunks[1:])) {
		t.Fatal("Columns does not hold the bytes of Chunks")
	}
}

// TestEncodeAllocatesOnce encodes a large batch into a fresh block: the
// bytes allocated stay within 1.5 times the block's buffers, where growing
// each column by append alone allocates several times them (a column
// regrown in steps of a quarter). Kept and refilled, the block allocates
// nothing.
func TestEncodeAllocatesOnce(t *testing.T) {
	g, err := simulate.NewGenerator(simulate.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var rec simulate.Record
	var events []otelschema.Event
	for len(events) < 50000 && g.Next(&rec) {
		events = append(events, rec.Event)
	}
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	var blk NativeBlock
	fresh := allocated(func() { blk.Encode("acme", events) })
	if limit := uint64(blk.Size()) * 3 / 2; fresh > limit {
		t.Errorf("a fresh block of %d events allocated %d bytes for buffers of %d: more than %d", len(events), fresh, blk.Size(), limit)
	}
	if again := allocated(func() { blk.Encode("acme", events) }); again > 4096 {
		t.Errorf("the kept block allocated %d bytes to encode the same %d events again", again, len(events))
	}
}
