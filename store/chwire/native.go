package chwire

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// The engine reads a Native column of fixed-width values in one copy and a
// string column in one loop, where RowBinary costs it a call per value (the
// comparison is in docs/capacity.md).

// NativeBlock is a batch of events encoded as one block of ClickHouse's
// Native format, the data of an INSERT INTO events_in (store.InsertColumns)
// FORMAT Native: column after column, each with its name, its type and its
// values. The columns are the tenant's (store.TenantColumn, a String), then
// store.EventColumns' in their order, each sent as its WireType.
//
// The zero value is ready for Encode. Encode reuses the buffers of the
// content it replaces, so a block kept from batch to batch grows to the
// largest batch rather than being allocated for each; Size says what
// keeping it costs. A NativeBlock is not safe for concurrent use.
type NativeBlock struct {
	rows int
	// cols holds the tenant column, then one per store.EventColumns; a
	// map column's three streams are in mapOffsets, mapKeys and mapValues.
	cols                           [][]byte
	mapOffsets, mapKeys, mapValues []byte
	mapColumn                      int    // the index in cols of the map column, -1 without one
	mapCount                       uint64 // the map entries of the rows so far
	// starts is Append's scratch: the length of each buffer (cols, then
	// the map's three) before its rows (see reserve).
	starts []int
	// mark and markCount are the lengths and map count Mark recorded.
	mark      []int
	markCount uint64
}

// encodeChunk is how many events Encode reads a column of at a time: a
// few hundred events stay in the CPU's cache while every column is read
// from them, where a column of a whole batch would read it from memory
// once per column.
const encodeChunk = 256

// Encode replaces b's content with events, every one of them of tenant.
func (b *NativeBlock) Encode(tenant string, events []otelschema.Event) {
	b.Reset()
	b.Append(tenant, events)
}

// Reset empties b, keeping its buffers.
func (b *NativeBlock) Reset() {
	if b.cols == nil {
		b.cols = make([][]byte, len(store.EventColumns)+1)
	}
	for i := range b.cols {
		b.cols[i] = b.cols[i][:0]
	}
	b.mapOffsets, b.mapKeys, b.mapValues = b.mapOffsets[:0], b.mapKeys[:0], b.mapValues[:0]
	b.rows = 0
	b.mapColumn = -1
	b.mapCount = 0
}

// Append adds events, every one of them of tenant, to b's rows.
func (b *NativeBlock) Append(tenant string, events []otelschema.Event) {
	if b.cols == nil {
		b.Reset()
	}
	b.rows += len(events)
	for range events {
		b.cols[0] = appendString(b.cols[0], tenant)
	}
	mapCount := b.mapCount
	b.starts = b.starts[:0]
	for _, c := range b.cols {
		b.starts = append(b.starts, len(c))
	}
	b.starts = append(b.starts, len(b.mapOffsets), len(b.mapKeys), len(b.mapValues))
	for lo := 0; lo < len(events); lo += encodeChunk {
		if lo == encodeChunk {
			b.reserve(encodeChunk, len(events)-encodeChunk)
		}
		chunk := events[lo:min(lo+encodeChunk, len(events))]
		for ci, col := range store.EventColumns {
			buf := b.cols[ci+1]
			switch col.Kind {
			case store.KindString:
				for i := range chunk {
					buf = appendString(buf, *col.StringAt(&chunk[i]))
				}
			case store.KindUInt64:
				for i := range chunk {
					buf = binary.LittleEndian.AppendUint64(buf, *col.UintAt(&chunk[i]))
				}
			case store.KindInt64, store.KindNanos:
				for i := range chunk {
					buf = binary.LittleEndian.AppendUint64(buf, uint64(*col.IntAt(&chunk[i])))
				}
			case store.KindSeconds:
				for i := range chunk {
					buf = binary.LittleEndian.AppendUint32(buf, clampUint32(*col.IntAt(&chunk[i])))
				}
			case store.KindEnum:
				for i := range chunk {
					buf = append(buf, *col.EnumAt(&chunk[i]))
				}
			case store.KindBool:
				for i := range chunk {
					buf = appendBool(buf, *col.BoolAt(&chunk[i]))
				}
			case store.KindFixed:
				for i := range chunk {
					buf = append(buf, col.FixedAt(&chunk[i])...)
				}
			case store.KindMap:
				// As the engine serialises a Map: the cumulative count of
				// entries per row, then every key, then every value.
				b.mapColumn = ci + 1
				for i := range chunk {
					m := *col.MapAt(&chunk[i])
					for k, v := range m {
						b.mapKeys = appendString(b.mapKeys, k)
						b.mapValues = appendString(b.mapValues, v)
					}
					mapCount += uint64(len(m))
					b.mapOffsets = binary.LittleEndian.AppendUint64(b.mapOffsets, mapCount)
				}
			}
			b.cols[ci+1] = buf
		}
	}
	b.mapCount = mapCount
}

// reserve makes room in every column for more rows, estimated from the
// bytes that the first done rows of this Append took (b.starts holds each
// buffer's length before them), when a buffer is short of it. A block
// that append grows row by row to a batch of 200,000 events allocates
// each column several times over, in steps of a quarter, all of it fresh
// memory to fault in and to collect; reserved, a buffer is allocated once
// (or twice, when the first rows are shorter than the rest). A block kept
// from batch to batch has the room already and reserves nothing.
func (b *NativeBlock) reserve(done, more int) {
	grow := func(buf []byte, start int) []byte {
		need := (len(buf) - start) * more / done
		if cap(buf)-len(buf) >= need {
			return buf
		}
		return slices.Grow(buf, need+need/8)
	}
	for i := range b.cols {
		b.cols[i] = grow(b.cols[i], b.starts[i])
	}
	n := len(b.cols)
	b.mapOffsets = grow(b.mapOffsets, b.starts[n])
	b.mapKeys = grow(b.mapKeys, b.starts[n+1])
	b.mapValues = grow(b.mapValues, b.starts[n+2])
}

// Size is the capacity in bytes of the buffers b holds, whatever their
// content: what keeping b costs.
func (b *NativeBlock) Size() int {
	n := cap(b.mapOffsets) + cap(b.mapKeys) + cap(b.mapValues)
	for i := range b.cols {
		n += cap(b.cols[i])
	}
	return n
}

// Chunks returns the block as the byte slices to send, in order, that
// together are one Native block: the block header (column and row counts),
// then each column's header and values. They alias b and headers shared by
// every block: the caller must not modify them, and they hold the block
// only until b's next Encode.
func (b *NativeBlock) Chunks() [][]byte {
	var h [2 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(h[:], uint64(len(b.cols)))
	n += binary.PutUvarint(h[n:], uint64(b.rows))
	out := make([][]byte, 0, 2*len(b.cols)+3)
	out = append(out, h[:n])
	for i := range b.cols {
		out = append(out, columnHeaders[i])
		if i == b.mapColumn {
			out = append(out, b.mapOffsets, b.mapKeys, b.mapValues)
			continue
		}
		out = append(out, b.cols[i])
	}
	return out
}

// Rows returns the rows b holds.
func (b *NativeBlock) Rows() int { return b.rows }

// Column is one column of a block: its name, its type as the block carries
// it, and its values as a Native block (or the native protocol's Data
// packet) serialises them, in Data's slices, in order. Data aliases the
// block: it holds the column only until the block's next Reset, Encode or
// Append.
type Column struct {
	Name, Type string
	Data       [][]byte
}

// Columns returns b's columns, in the order of store.InsertColumns, for a
// client that frames the block itself.
func (b *NativeBlock) Columns() []Column {
	out := make([]Column, len(b.cols))
	for i := range b.cols {
		out[i] = Column{Name: columnNames[i], Type: columnTypes[i], Data: [][]byte{b.cols[i]}}
		if i == b.mapColumn {
			out[i].Data = [][]byte{b.mapOffsets, b.mapKeys, b.mapValues}
		}
	}
	return out
}

// columnNames and columnTypes are each column's name and type as a block
// carries them: the tenant's, then store.EventColumns'; columnHeaders are
// both as a Native block frames them.
var (
	columnNames = func() []string {
		n := []string{store.TenantColumn}
		for _, c := range store.EventColumns {
			n = append(n, c.Name)
		}
		return n
	}()
	columnTypes = func() []string {
		t := []string{"String"}
		for _, c := range store.EventColumns {
			t = append(t, c.WireType())
		}
		return t
	}()
	columnHeaders = func() [][]byte {
		var h [][]byte
		for i := range columnNames {
			h = append(h, appendString(appendString(nil, columnNames[i]), columnTypes[i]))
		}
		return h
	}()
)

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// clampUint32 fits Unix seconds into a DateTime column.
func clampUint32(v int64) uint32 {
	switch {
	case v < 0:
		return 0
	case v > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(v)
}
