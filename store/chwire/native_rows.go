package chwire

import (
	"encoding/binary"
	"slices"

	"github.com/mcpdrift/mcpdrift/store"
)

// Row by row: a caller that holds events already encoded, field by field
// (the spool's records), appends their values to a block without building
// an otelschema.Event for each: StartRow, then every column of
// store.EventColumns exactly once, in any order, with the method of its
// kind — AppendString, AppendUint64, AppendInt, AppendByte, AppendFixed,
// AppendMapEntry then EndMap — or AppendZero. The block's bytes are then
// those Append writes for the same events (a map's entries in the order
// given, where Append takes Go's map order). col is an index in
// store.EventColumns. A row missing a column, or given one twice, leaves
// a malformed block: these methods do not check, being called per value.
// The Native encoding stays here and the record's in the spool, each
// package knowing one format.

// StartRow adds a row of tenant.
func (b *NativeBlock) StartRow(tenant []byte) {
	if b.cols == nil {
		b.Reset()
	}
	b.rows++
	b.cols[0] = appendBytes(b.cols[0], tenant)
}

// AppendString appends v to column col, a KindString.
func (b *NativeBlock) AppendString(col int, v []byte) {
	b.cols[col+1] = appendBytes(b.cols[col+1], v)
}

// AppendUint64 appends v to column col, a KindUInt64 or a KindNanos (its
// int64 as bits).
func (b *NativeBlock) AppendUint64(col int, v uint64) {
	b.cols[col+1] = binary.LittleEndian.AppendUint64(b.cols[col+1], v)
}

// AppendInt appends v to column col, a KindInt64 or KindNanos (8 bytes) or
// a KindSeconds (4, clamped as Append clamps them).
func (b *NativeBlock) AppendInt(col int, v int64) {
	if store.EventColumns[col].Kind == store.KindSeconds {
		b.cols[col+1] = binary.LittleEndian.AppendUint32(b.cols[col+1], clampUint32(v))
		return
	}
	b.cols[col+1] = binary.LittleEndian.AppendUint64(b.cols[col+1], uint64(v))
}

// AppendByte appends v to column col, a KindEnum, or a KindBool (true
// when v is not 0, written as 1).
func (b *NativeBlock) AppendByte(col int, v byte) {
	if store.EventColumns[col].Kind == store.KindBool {
		b.cols[col+1] = appendBool(b.cols[col+1], v != 0)
		return
	}
	b.cols[col+1] = append(b.cols[col+1], v)
}

// AppendFixed appends v, of the column's Size, to column col, a KindFixed.
func (b *NativeBlock) AppendFixed(col int, v []byte) {
	b.cols[col+1] = append(b.cols[col+1], v...)
}

// AppendMapEntry appends an entry to the row's map; EndMap closes it.
func (b *NativeBlock) AppendMapEntry(k, v []byte) {
	b.mapKeys = appendBytes(b.mapKeys, k)
	b.mapValues = appendBytes(b.mapValues, v)
}

// EndMap closes the row's map of column col, a KindMap, after its n
// entries given by AppendMapEntry.
func (b *NativeBlock) EndMap(col, n int) {
	b.mapColumn = col + 1
	b.mapCount += uint64(n)
	b.mapOffsets = binary.LittleEndian.AppendUint64(b.mapOffsets, b.mapCount)
}

// AppendZero appends the zero value of column col's kind, as Append
// writes for a zero field.
func (b *NativeBlock) AppendZero(col int) {
	c := &store.EventColumns[col]
	buf := b.cols[col+1]
	switch c.Kind {
	case store.KindString, store.KindEnum, store.KindBool:
		buf = append(buf, 0)
	case store.KindUInt64, store.KindInt64, store.KindNanos:
		buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0)
	case store.KindSeconds:
		buf = append(buf, 0, 0, 0, 0)
	case store.KindFixed:
		buf = append(buf, make([]byte, c.Size)...)
	case store.KindMap:
		b.EndMap(col, 0)
	}
	b.cols[col+1] = buf
}

// Mark records b's length, for Rollback: a caller appending rows from
// input it may find malformed half way marks first and rolls back on the
// error, leaving the rows before the mark whole.
func (b *NativeBlock) Mark() {
	if b.cols == nil {
		b.Reset()
	}
	b.mark = b.mark[:0]
	for _, c := range b.cols {
		b.mark = append(b.mark, len(c))
	}
	b.mark = append(b.mark, len(b.mapOffsets), len(b.mapKeys), len(b.mapValues), b.rows, b.mapColumn)
	b.markCount = b.mapCount
}

// Rollback truncates b to its length at the last Mark.
func (b *NativeBlock) Rollback() {
	m := b.mark
	for i := range b.cols {
		b.cols[i] = b.cols[i][:m[i]]
	}
	n := len(b.cols)
	b.mapOffsets, b.mapKeys, b.mapValues = b.mapOffsets[:m[n]], b.mapKeys[:m[n+1]], b.mapValues[:m[n+2]]
	b.rows, b.mapColumn, b.mapCount = m[n+3], m[n+4], b.markCount
}

// Grow makes room in every column for rows more rows, estimated from the
// bytes the rows b holds take (nothing when b is empty), as Append's
// reserve does: a caller appending row by row otherwise lets append grow
// each column in steps of a quarter.
func (b *NativeBlock) Grow(rows int) { b.Reserve(rows, rows) }

// Reserve makes room in every column for need more rows, estimated as
// Grow estimates them; a column short of that room is grown for want
// rows (at least need) at once. A caller adding records one at a time
// to a block that reaches a large size calls it before each record with
// the record's rows as need and, as want, the rows it expects or as many
// as the block holds: each column then grows in a step or two, or
// doubles, where append's quarter steps past 256 elements copy a column
// about five times over, every copy fresh memory to fault in.
func (b *NativeBlock) Reserve(need, want int) {
	if b.rows == 0 || need <= 0 {
		return
	}
	want = max(want, need)
	grow := func(buf []byte) []byte {
		if cap(buf)-len(buf) >= len(buf)*need/b.rows {
			return buf
		}
		return slices.Grow(buf, len(buf)*want/b.rows)
	}
	for i := range b.cols {
		b.cols[i] = grow(b.cols[i])
	}
	b.mapOffsets, b.mapKeys, b.mapValues = grow(b.mapOffsets), grow(b.mapKeys), grow(b.mapValues)
}

func appendBytes(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
