package store_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// TestEventColumnsCoverEvent: every field of otelschema.Event is held by
// exactly one column, so that a field added without its column fails here.
func TestEventColumnsCoverEvent(t *testing.T) {
	var e otelschema.Event
	base := uintptr(unsafe.Pointer(&e))
	covered := map[uintptr]string{}
	for _, c := range store.EventColumns {
		var p unsafe.Pointer
		switch c.Kind {
		case store.KindString:
			p = unsafe.Pointer(c.Str(&e))
		case store.KindUInt64:
			p = unsafe.Pointer(c.Uint(&e))
		case store.KindInt64, store.KindNanos, store.KindSeconds:
			p = unsafe.Pointer(c.Int(&e))
		case store.KindEnum:
			p = unsafe.Pointer(c.Enum(&e))
		case store.KindBool:
			p = unsafe.Pointer(c.Bool(&e))
		case store.KindFixed:
			b := c.Fixed(&e)
			if len(b) != c.Size {
				t.Errorf("column %s: %d bytes, want its size %d", c.Name, len(b), c.Size)
			}
			p = unsafe.Pointer(&b[0])
		case store.KindMap:
			p = unsafe.Pointer(c.Map(&e))
		default:
			t.Fatalf("column %s: unknown kind %d", c.Name, c.Kind)
		}
		off := uintptr(p) - base
		if prev, dup := covered[off]; dup {
			t.Errorf("columns %s and %s hold the same field", prev, c.Name)
		}
		covered[off] = c.Name
	}
	for _, f := range reflect.VisibleFields(reflect.TypeOf(e)) {
		if _, ok := covered[f.Offset]; !ok {
			t.Errorf("Event.%s has no column in store.EventColumns", f.Name)
		}
	}
}

// TestEventColumnsMatchEventsIn migrates an embedded store and holds the
// declaration to events_in as the migrations leave it: the same columns,
// in order, each of the type its kind is sent as (enums as Enum8).
func TestEventColumnsMatchEventsIn(t *testing.T) {
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ctx := context.Background()
	cfg := embedded.DefaultConfig(t.TempDir())
	st, err := embedded.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var cols []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	q := store.Query{Name: "events_in_columns", SQL: "SELECT name, type FROM system.columns WHERE database = {db:String} AND table = 'events_in' ORDER BY position"}
	if err := st.Query(ctx, q, store.Params{}.String("db", cfg.Schema.Database), &cols); err != nil {
		t.Fatal(err)
	}
	if len(cols) != len(store.EventColumns)+1 || cols[0].Name != store.TenantColumn {
		t.Fatalf("events_in has %d columns, the declaration %d after %s: %+v", len(cols), len(store.EventColumns), store.TenantColumn, cols)
	}
	for i, c := range store.EventColumns {
		got := cols[i+1]
		want := c.WireType()
		if c.Kind == store.KindEnum {
			want = "Enum8("
		}
		if got.Name != c.Name || !strings.HasPrefix(got.Type, want) {
			t.Errorf("column %d: events_in has %s %s, the declaration %s %s", i+2, got.Name, got.Type, c.Name, want)
		}
	}
	if want := "(tenant, event_id, event_name, time,"; !strings.HasPrefix(store.InsertColumns, want) {
		t.Errorf("InsertColumns = %.40s…, want it to start %s", store.InsertColumns, want)
	}
}
