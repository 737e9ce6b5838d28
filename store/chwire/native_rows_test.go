package chwire

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// appendRow appends e with the row-by-row methods, its columns in reverse
// order (any order is allowed), its map's entries in key order, and every
// column that is zero in e with AppendZero.
func appendRow(b *NativeBlock, tenant string, e *otelschema.Event) {
	b.StartRow([]byte(tenant))
	for c := len(store.EventColumns) - 1; c >= 0; c-- {
		col := &store.EventColumns[c]
		switch col.Kind {
		case store.KindString:
			if s := *col.StringAt(e); s != "" {
				b.AppendString(c, []byte(s))
				continue
			}
		case store.KindUInt64:
			if v := *col.UintAt(e); v != 0 {
				b.AppendUint64(c, v)
				continue
			}
		case store.KindNanos, store.KindInt64, store.KindSeconds:
			if v := *col.IntAt(e); v != 0 {
				b.AppendInt(c, v)
				continue
			}
		case store.KindEnum:
			if v := *col.EnumAt(e); v != 0 {
				b.AppendByte(c, v)
				continue
			}
		case store.KindBool:
			if *col.BoolAt(e) {
				b.AppendByte(c, 7) // any byte but 0 is true
				continue
			}
		case store.KindFixed:
			if v := col.FixedAt(e); !bytes.Equal(v, make([]byte, len(v))) {
				b.AppendFixed(c, v)
				continue
			}
		case store.KindMap:
			if m := *col.MapAt(e); len(m) > 0 {
				for _, k := range slices.Sorted(func(yield func(string) bool) {
					for k := range m {
						if !yield(k) {
							return
						}
					}
				}) {
					b.AppendMapEntry([]byte(k), []byte(m[k]))
				}
				b.EndMap(c, len(m))
				continue
			}
		}
		b.AppendZero(c)
	}
}

// TestRowsMatchAppend: simulator events appended row by row make the
// block Append makes of them (their maps of one entry, Append's order
// being Go's), Seconds clamped alike; rows appended after a Mark and
// rolled back leave the block as it was.
func TestRowsMatchAppend(t *testing.T) {
	g, err := simulate.NewGenerator(simulate.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var rec simulate.Record
	var events []otelschema.Event
	for len(events) < 700 && g.Next(&rec) {
		e := rec.Event
		e.Attributes = nil
		switch len(events) % 3 {
		case 1:
			e.Attributes = map[string]string{"k": fmt.Sprint(len(events))}
			e.AdapterWindowEnd = -5 // clamped to 0
		case 2:
			e.AdapterWindowEnd = 1 << 40 // clamped to MaxUint32
		}
		events = append(events, e)
	}
	var want, got NativeBlock
	want.Append("acme", events)
	for i := range events {
		appendRow(&got, "acme", &events[i])
	}
	flat := func(b *NativeBlock) []byte { return bytes.Join(b.Chunks(), nil) }
	if !bytes.Equal(flat(&got), flat(&want)) {
		t.Fatalf("%d rows appended row by row, %d at once: the blocks differ", got.Rows(), want.Rows())
	}
	got.Mark()
	for i := range 5 {
		appendRow(&got, "other", &events[i*3+1])
	}
	got.Rollback()
	if !bytes.Equal(flat(&got), flat(&want)) {
		t.Fatal("the block changed after a rollback")
	}
	got.Grow(1000)
	if !bytes.Equal(flat(&got), flat(&want)) {
		t.Fatal("Grow changed the block")
	}
}

// TestReserve: a column short of room for need rows is grown for want
// rows at once, one with room is left alone, and the block's content does
// not change.
func TestReserve(t *testing.T) {
	g, err := simulate.NewGenerator(simulate.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var rec simulate.Record
	var events []otelschema.Event
	for len(events) < 100 && g.Next(&rec) {
		events = append(events, rec.Event)
	}
	var b NativeBlock
	b.Append("acme", events)
	before := bytes.Join(b.Chunks(), nil)
	caps := func() []int {
		var c []int
		for _, col := range b.cols {
			c = append(c, cap(col))
		}
		return c
	}
	b.Reserve(100, 1000)
	if !bytes.Equal(bytes.Join(b.Chunks(), nil), before) {
		t.Fatal("Reserve changed the block")
	}
	grown := caps()
	for i, col := range b.cols {
		if want := len(col) * 11; len(col) > 0 && cap(col) < want {
			t.Errorf("column %d: capacity %d after Reserve(100, 1000) of 100 rows of %d bytes, want at least %d", i, cap(col), len(col), want)
		}
	}
	b.Reserve(100, 5000) // room for 100 more rows: nothing grows
	if got := caps(); !slices.Equal(got, grown) {
		t.Errorf("capacities %v after a Reserve the block had room for, want %v", got, grown)
	}
}
