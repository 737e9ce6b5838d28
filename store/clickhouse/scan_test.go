package clickhouse

import (
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

func ptr[T any](v T) *T { return &v }

// TestAssign covers the driver's scan types (what rows.ColumnTypes reports
// for each ClickHouse type) against the field types report rows use.
func TestAssign(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	ts := time.Date(2026, 11, 30, 4, 0, 0, 5, paris)
	type row struct {
		U64   uint64            `json:"u64"`
		I     int               `json:"i"`
		F     float64           `json:"f"`
		S     string            `json:"s"`
		B     bool              `json:"b"`
		T     time.Time         `json:"t"`
		M     map[string]string `json:"m"`
		Arr   []string          `json:"arr"`
		Nums  []int64           `json:"nums"`
		Opt   *int64            `json:"opt"`
		Any   any               `json:"any"`
		TS    string            `json:"ts"`
		Plain int
		Skip  string `json:"-"`
	}
	cols := []string{"u64", "i", "f", "s", "b", "t", "m", "arr", "nums", "opt", "any", "ts", "plain", "Skip", "unknown"}
	vals := []any{
		ptr(uint64(1 << 63)), ptr(uint8(7)), ptr(uint32(3)), ptr("x"), ptr(true), ptr(ts),
		ptr(map[string]string{"k": "v"}), ptr([]string{"a", "b"}), ptr([]uint32{1, 2}),
		ptr((*int64)(nil)), ptr("any"), ptr(ts), ptr(int16(-4)), ptr("no"), ptr(1),
	}
	idx, err := store.FieldIndex(reflect.TypeOf(row{}), cols)
	if err != nil {
		t.Fatal(err)
	}
	var r row
	v := reflect.ValueOf(&r).Elem()
	for i, ix := range idx {
		if ix == nil {
			continue
		}
		if err := assign(v.FieldByIndex(ix), vals[i]); err != nil {
			t.Fatalf("column %s: %v", cols[i], err)
		}
	}
	want := row{U64: 1 << 63, I: 7, F: 3, S: "x", B: true, T: ts.UTC(), M: map[string]string{"k": "v"},
		Arr: []string{"a", "b"}, Nums: []int64{1, 2}, Any: "any", TS: "2026-11-30T03:00:00.000000005Z", Plain: -4}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got  %+v\nwant %+v", r, want)
	}
	if r.T.Location() != time.UTC {
		t.Errorf("time in %v, want UTC", r.T.Location())
	}

	var n struct {
		A int64  `json:"a"`
		S string `json:"s"`
		F float64
	}
	nv := reflect.ValueOf(&n).Elem()
	for name, src := range map[string]any{"A": big.NewInt(42), "S": big.NewInt(-9), "F": ptr(big.NewInt(2))} {
		if err := assign(nv.FieldByName(name), src); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if n.A != 42 || n.S != "-9" || n.F != 2 {
		t.Errorf("big integers: %+v", n)
	}
	var b bool
	if err := assign(reflect.ValueOf(&b).Elem(), ptr("yes")); err == nil || !strings.Contains(err.Error(), "cannot store string in bool") {
		t.Errorf("string into bool: %v", err)
	}
	if _, err := store.FieldIndex(reflect.TypeOf(0), nil); err == nil {
		t.Error("a non-struct destination was accepted")
	}
}

// TestAssignTuples stores the driver's scan types of tuples in structs: a
// named Tuple comes as a map from element names, an unnamed one as a
// slice. The adapter retirement report reads its callers as an array of
// named tuples.
func TestAssignTuples(t *testing.T) {
	type caller struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		Calls   uint64 `json:"calls"`
		Age     int64  `json:"max_session_age_s"`
	}
	var callers []caller
	named := []map[string]any{
		{"name": "agent", "version": "1.0", "calls": uint64(3), "max_session_age_s": int64(-1), "unknown": "x"},
		{"name": "ci", "calls": uint64(1)},
	}
	if err := assign(reflect.ValueOf(&callers).Elem(), &named); err != nil {
		t.Fatal(err)
	}
	if want := []caller{{"agent", "1.0", 3, -1}, {Name: "ci", Calls: 1}}; !reflect.DeepEqual(callers, want) {
		t.Errorf("named tuples stored as %+v, want %+v", callers, want)
	}

	type pair struct {
		S string
		N int
	}
	var p pair
	if err := assign(reflect.ValueOf(&p).Elem(), &[]any{"a", uint8(2)}); err != nil {
		t.Fatal(err)
	}
	if p != (pair{"a", 2}) {
		t.Errorf("unnamed tuple stored as %+v", p)
	}
	if err := assign(reflect.ValueOf(&p).Elem(), &[]any{"a"}); err == nil || !strings.Contains(err.Error(), "tuple of 1 elements") {
		t.Errorf("a tuple of the wrong size: %v", err)
	}
}

// addColumn matches a column added to a table, and the column it follows.
var addColumn = regexp.MustCompile(`ADD COLUMN IF NOT EXISTS (\w+) .*? AFTER (\w+)`)

// TestColumnsMatchEventsIn checks the INSERT's columns, the Native block's
// (chwire), against events_in as the migrations create it, and that the
// INSERT's column list (store.InsertColumns) names them in that order.
func TestColumnsMatchEventsIn(t *testing.T) {
	ms, err := schema.Migrations(schema.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var ddl string
	for _, s := range ms[0].Statements {
		if strings.HasPrefix(s, "CREATE TABLE IF NOT EXISTS mcpdrift.events_in\n") {
			ddl = s
		}
	}
	var want []string
	for _, l := range strings.Split(ddl, "\n")[2:] {
		if f := strings.Fields(l); len(f) > 1 && f[0] != ")" && f[0] != "ENGINE" {
			want = append(want, f[0])
		}
	}
	// Later versions add columns to events_in with ADD COLUMN … AFTER.
	for _, m := range ms[1:] {
		for _, s := range m.Statements {
			if !strings.HasPrefix(s, "ALTER TABLE mcpdrift.events_in\n") {
				continue
			}
			for _, a := range addColumn.FindAllStringSubmatch(s, -1) {
				name, after := a[1], a[2]
				at := slices.Index(want, after)
				if at < 0 {
					t.Fatalf("version %d adds %s after %s, which events_in does not have", m.Version, name, after)
				}
				want = slices.Insert(want, at+1, name)
			}
		}
	}
	var blk chwire.NativeBlock
	blk.Encode("a", []otelschema.Event{{ID: 9}})
	var got []string
	for _, c := range blk.Columns() {
		got = append(got, c.Name)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("insert columns\n %v\nevents_in\n %v", got, want)
	}
	if list := "(" + strings.Join(got, ", ") + ")"; list != store.InsertColumns {
		t.Fatalf("store.InsertColumns %s, the block's %s", store.InsertColumns, list)
	}
}
