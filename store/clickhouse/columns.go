package clickhouse

import (
	"math"
	"slices"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// column is one column of events_in and how to read it from a chunk: its
// values for every event of the chunk, in order, as the slice type
// clickhouse-go appends for the column's type. values fills reuse, a slice
// it returned before (or nil), when it is of that type: clickhouse-go
// copies what it appends, so one INSERT's slices can take the next one's
// values (Store.flush), where new ones for every INSERT kept the garbage
// collector busy.
type column struct {
	name   string
	values func(c *chunk, reuse any) any
}

// columns are the columns of events_in that Write fills, in INSERT order
// (store.InsertColumns): the tenant, then store.EventColumns.
var columns = func() []column {
	out := []column{{store.TenantColumn, func(c *chunk, reuse any) any {
		v, _ := reuse.([]string)
		v = slices.Grow(v[:0], c.rows)
		for _, p := range c.parts {
			for range p.events {
				v = append(v, p.tenant)
			}
		}
		return v
	}}}
	for _, col := range store.EventColumns {
		out = append(out, column{col.Name, valuesOf(col)})
	}
	return out
}()

// valuesOf reads col from a chunk's events.
func valuesOf(col store.Column) func(c *chunk, reuse any) any {
	switch col.Kind {
	case store.KindString:
		return collect(func(e *otelschema.Event) string { return *col.Str(e) })
	case store.KindUInt64:
		return collect(func(e *otelschema.Event) uint64 { return *col.Uint(e) })
	case store.KindInt64:
		return collect(func(e *otelschema.Event) int64 { return *col.Int(e) })
	case store.KindEnum:
		// The numbers, which are the Go values (store.KindEnum).
		return collect(func(e *otelschema.Event) int8 { return int8(*col.Enum(e)) })
	case store.KindBool:
		return collect(func(e *otelschema.Event) bool { return *col.Bool(e) })
	case store.KindNanos:
		return collect(func(e *otelschema.Event) time.Time { return time.Unix(0, *col.Int(e)).UTC() })
	case store.KindSeconds:
		return collect(func(e *otelschema.Event) time.Time { return time.Unix(clampUint32(*col.Int(e)), 0).UTC() })
	case store.KindFixed:
		return collect(func(e *otelschema.Event) string { return string(col.Fixed(e)) })
	case store.KindMap:
		return collect(func(e *otelschema.Event) map[string]string {
			if m := *col.Map(e); m != nil {
				return m
			}
			return map[string]string{}
		})
	}
	panic("store.EventColumns: column " + col.Name + " of an unknown kind")
}

// collect returns the values f reads from every event of a chunk, in
// reuse when it is a []T.
func collect[T any](f func(*otelschema.Event) T) func(c *chunk, reuse any) any {
	return func(c *chunk, reuse any) any {
		out, _ := reuse.([]T)
		out = slices.Grow(out[:0], c.rows)
		for _, p := range c.parts {
			for i := range p.events {
				out = append(out, f(&p.events[i]))
			}
		}
		return out
	}
}

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
