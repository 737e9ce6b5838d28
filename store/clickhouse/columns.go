package clickhouse

import (
	"math"
	"slices"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// column is one column of events_in and how to read it from a chunk's
// events, as the slice type clickhouse-go appends for the column's type.
type column struct {
	name string
	// collector returns an empty collector of the column's values.
	collector func() collector
}

// collector gathers one column's values for an INSERT. clickhouse-go
// copies what it appends, so a collector serves INSERT after INSERT
// (Store.flush keeps them), where new slices for every INSERT kept the
// garbage collector busy.
type collector interface {
	// reset empties the collector, keeping room for n values.
	reset(n int)
	// add appends the values of events, all of tenant.
	add(tenant string, events []otelschema.Event)
	// values returns what was added, as clickhouse-go appends it.
	values() any
}

// collectChunk is how many events a chunk's columns are gathered from at a
// time: every column reads a few hundred events while they are in the
// CPU's cache, where reading a whole chunk column by column would stream
// it from memory once per column (chwire's encodeChunk, likewise).
const collectChunk = 256

// collect gathers the values of every column of c into cols, one per
// column of columns, in order.
func collect(c *chunk, cols []collector) {
	for _, col := range cols {
		col.reset(c.rows)
	}
	for _, p := range c.parts {
		for lo := 0; lo < len(p.events); lo += collectChunk {
			events := p.events[lo:min(lo+collectChunk, len(p.events))]
			for _, col := range cols {
				col.add(p.tenant, events)
			}
		}
	}
}

// columns are the columns of events_in that Write fills, in INSERT order
// (store.InsertColumns): the tenant, then store.EventColumns.
var columns = func() []column {
	out := []column{{store.TenantColumn, func() collector { return &tenants{} }}}
	for _, col := range store.EventColumns {
		out = append(out, column{col.Name, collectorOf(col)})
	}
	return out
}()

// tenants collects the tenant column.
type tenants struct{ out []string }

func (t *tenants) reset(n int) { t.out = slices.Grow(t.out[:0], n) }
func (t *tenants) add(tenant string, events []otelschema.Event) {
	for range events {
		t.out = append(t.out, tenant)
	}
}
func (t *tenants) values() any { return t.out }

// collectorOf returns the collector of col.
func collectorOf(col store.Column) func() collector {
	switch col.Kind {
	case store.KindString:
		return by(func(e *otelschema.Event) string { return *col.Str(e) })
	case store.KindUInt64:
		return by(func(e *otelschema.Event) uint64 { return *col.Uint(e) })
	case store.KindInt64:
		return by(func(e *otelschema.Event) int64 { return *col.Int(e) })
	case store.KindEnum:
		// The numbers, which are the Go values (store.KindEnum).
		return by(func(e *otelschema.Event) int8 { return int8(*col.Enum(e)) })
	case store.KindBool:
		return by(func(e *otelschema.Event) bool { return *col.Bool(e) })
	case store.KindNanos:
		return by(func(e *otelschema.Event) time.Time { return time.Unix(0, *col.Int(e)).UTC() })
	case store.KindSeconds:
		return by(func(e *otelschema.Event) time.Time { return time.Unix(clampUint32(*col.Int(e)), 0).UTC() })
	case store.KindFixed:
		return by(func(e *otelschema.Event) string { return string(col.Fixed(e)) })
	case store.KindMap:
		return by(func(e *otelschema.Event) map[string]string {
			if m := *col.Map(e); m != nil {
				return m
			}
			return map[string]string{}
		})
	}
	panic("store.EventColumns: column " + col.Name + " of an unknown kind")
}

// values collects the values f reads from each event.
type values[T any] struct {
	f   func(*otelschema.Event) T
	out []T
}

// by returns the collector of the values f reads.
func by[T any](f func(*otelschema.Event) T) func() collector {
	return func() collector { return &values[T]{f: f} }
}

func (v *values[T]) reset(n int) { v.out = slices.Grow(v.out[:0], n) }
func (v *values[T]) add(_ string, events []otelschema.Event) {
	for i := range events {
		v.out = append(v.out, v.f(&events[i]))
	}
}
func (v *values[T]) values() any { return v.out }

// clampUint32 fits Unix seconds into a DateTime column, as the embedded
// store does.
func clampUint32(v int64) int64 {
	switch {
	case v < 0:
		return 0
	case v > math.MaxUint32:
		return math.MaxUint32
	}
	return v
}
