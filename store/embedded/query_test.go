package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/store/chwire/chwiretest"

	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// The tests of this file run real SELECTs on the engine and decode their
// RowBinaryWithNamesAndTypes output through Query (chwire.DecodeRowBinary);
// each is also read as JSONEachRow, the format Query used before, and
// decoded with encoding/json, to check that both give the same values.

var updateRowBinary = flag.Bool("update-rowbinary", false, "rewrite the seeds in "+rowBinarySeedDir+" from the engine")

// openTestStore opens a store for one test and closes it after: the engine
// serves one data path at a time per process, and the other tests of the
// package open their own.
func openTestStore(t testing.TB) *Store {
	t.Helper()
	if _, err := LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB is set: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	s, err := Open(context.Background(), DefaultConfig(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// jsonSettings are the settings the JSONEachRow path of Query used.
const jsonSettings = " SETTINGS output_format_json_quote_64bit_integers = 0, date_time_output_format = 'iso', output_format_json_quote_denormals = 0"

// queryJSON is Query as it was before RowBinary: JSONEachRow decoded by
// encoding/json into dest, a pointer to a slice.
func queryJSON(s *Store, sql string, dest any) error {
	out, err := s.run(context.Background(), sql+jsonSettings, "JSONEachRow", nil)
	if err != nil {
		return err
	}
	rv := reflect.ValueOf(dest).Elem()
	slice := rv
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		v := reflect.New(slice.Type().Elem())
		if err := dec.Decode(v.Interface()); err != nil {
			return fmt.Errorf("row %d: %w", slice.Len()+1, err)
		}
		slice = reflect.Append(slice, v.Elem())
	}
	rv.Set(slice)
	return nil
}

const allTypesSQL = `SELECT
	'héllo' AS s, toFixedString('ab', 4) AS fs, toLowCardinality('lc') AS lc,
	toUInt8(255) AS u8, toUInt16(65535) AS u16, toUInt32(4294967295) AS u32, toUInt64(18446744073709551615) AS u64,
	toInt8(-128) AS i8, toInt16(-32768) AS i16, toInt32(-2147483648) AS i32, toInt64(-9223372036854775808) AS i64,
	toFloat32(0.1) AS f32, toFloat64(-2.5e-300) AS f64, true AS b,
	CAST('b' AS Enum8('a' = 1, 'b' = -2)) AS e8, CAST('it''s' AS Enum16('x' = 1000, 'it''s' = -1000)) AS e16,
	toDateTime('2026-11-30 03:04:05', 'UTC') AS dt, toDateTime('2026-11-30 03:04:05', 'Asia/Tokyo') AS dtz,
	toDateTime64('1969-12-31 23:59:58', 0, 'UTC') AS dt64_0, toDateTime64('2026-11-30 03:04:05.123', 3, 'UTC') AS dt64_3,
	toDateTime64('1969-12-31 23:59:59.999999', 6, 'UTC') AS dt64_6, toDateTime64('2026-11-30 03:04:05.123456789', 9, 'Europe/Paris') AS dt64_9,
	toNullable('x') AS ns, CAST(NULL AS Nullable(String)) AS nnull, CAST(NULL AS Nullable(Int64)) AS ni,
	['a', 'b'] AS arr, CAST([] AS Array(String)) AS empty, [[1, 2], [], [-3]] AS nested, [NULL, 'y'] AS anull,
	map('k', 'v', 'k2', '') AS m, CAST(map() AS Map(LowCardinality(String), UInt64)) AS emptym,
	CAST(('cursor', 3, -7) AS Tuple(name String, calls UInt64, max_session_age_s Int64)) AS t,
	[CAST(('a', 1, 2) AS Tuple(name String, calls UInt64, max_session_age_s Int64)), CAST(('b', 3, 4) AS Tuple(name String, calls UInt64, max_session_age_s Int64))] AS tuples`

func ptr[T any](v T) *T { return &v }

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// decodeCase is one SELECT, the slice it decodes into and the rows expected.
type decodeCase struct {
	name string
	sql  string
	want any // a slice; the test decodes into a new one of its type
	// noJSON marks conversions the JSON path could not do.
	noJSON bool
}

type (
	intsInto struct {
		U32AsI64 int64   `json:"a"`
		I16AsF64 float64 `json:"b"`
		U64AsF32 float32 `json:"c"`
		I8AsU8   int     `json:"d"`
		F64AsInt int64   `json:"e"`
	}
	floats struct {
		NaN    float64  `json:"nan"`
		Inf    *float64 `json:"inf"`
		NegInf float32  `json:"neginf"`
		One    *float64 `json:"one"`
		NaNs   []float64
		NullP  *float64 `json:"nullp"`
	}
	timeStrings struct {
		DT     string `json:"dt"`
		DT64_3 string `json:"dt64_3"`
		DT64_9 string `json:"dt64_9"`
		D      string `json:"d"`
		D32    string `json:"d32"`
	}
	dates struct {
		D   time.Time  `json:"d"`
		D32 time.Time  `json:"d32"`
		ND  *time.Time `json:"nd"`
	}
	flags struct {
		U8 bool `json:"u8"`
		B  bool `json:"b"`
	}
	maps struct {
		ByInt  map[string]string `json:"by_int"`
		IntKey map[int32]float64 `json:"int_key"`
		Counts map[string]uint64 `json:"counts"`
	}
	oneField struct {
		Keep string `json:"keep"`
	}
	Embedded struct {
		Inner string `json:"inner"`
	}
	folded struct {
		*Embedded
		CamelCase uint64
		Tagged    string `json:"Tagged"`
		Ignored   string `json:"-"`
	}
	numbered struct {
		N    uint64 `json:"n"`
		Name string `json:"name"`
	}
)

var decodeCases = []decodeCase{
	{name: "all types", sql: allTypesSQL, want: []chwiretest.AllTypes{{
		S: "héllo", FS: "ab\x00\x00", LC: "lc",
		U8: 255, U16: 65535, U32: 4294967295, U64: 18446744073709551615,
		I8: -128, I16: -32768, I32: -2147483648, I64: -9223372036854775808,
		F32: 0.1, F64: -2.5e-300, B: true, E8: "b", E16: "it's",
		DT: utc("2026-11-30T03:04:05Z"), DTZ: utc("2026-11-29T18:04:05Z"),
		DT64_0: utc("1969-12-31T23:59:58Z"), DT64_3: utc("2026-11-30T03:04:05.123Z"),
		DT64_6: utc("1969-12-31T23:59:59.999999Z"), DT64_9: utc("2026-11-30T02:04:05.123456789Z"),
		NS: ptr("x"), Arr: []string{"a", "b"}, Empty: []string{}, Nested: [][]int64{{1, 2}, {}, {-3}},
		ANull: []string{"", "y"}, M: map[string]string{"k": "v", "k2": ""}, EmptyM: map[string]uint64{},
		T:      chwiretest.TupleRow{Name: "cursor", Calls: 3, Age: -7},
		Tuples: []chwiretest.TupleRow{{Name: "a", Calls: 1, Age: 2}, {Name: "b", Calls: 3, Age: 4}},
	}}},
	{name: "integers into other kinds", sql: `SELECT toUInt32(4000000000) AS a, toInt16(-300) AS b, toUInt64(16777217) AS c, toInt8(-5) AS d, 3.0 AS e`,
		want: []intsInto{{U32AsI64: 4000000000, I16AsF64: -300, U64AsF32: 16777216, I8AsU8: -5, F64AsInt: 3}}},
	{name: "NaN and infinities", sql: `SELECT nan AS nan, inf AS inf, toFloat32(-inf) AS neginf, 1.5 AS one, [nan, 2, -inf] AS NaNs, CAST(NULL AS Nullable(Float64)) AS nullp`,
		want: []floats{{One: ptr(1.5), NaNs: []float64{0, 2, 0}}}},
	{name: "times into strings", sql: `SELECT toDateTime('2026-01-02 03:04:05', 'UTC') AS dt, toDateTime64('2026-01-02 03:04:05.1', 3, 'UTC') AS dt64_3,
		toDateTime64('2026-01-02 03:04:05', 9, 'UTC') AS dt64_9, toDate('2026-01-02') AS d, toDate32('1950-06-07') AS d32`,
		want: []timeStrings{{DT: "2026-01-02T03:04:05Z", DT64_3: "2026-01-02T03:04:05.100Z", DT64_9: "2026-01-02T03:04:05.000000000Z", D: "2026-01-02", D32: "1950-06-07"}}},
	{name: "dates into times", sql: `SELECT toDate('2026-01-02') AS d, toDate32('1950-06-07') AS d32, toNullable(toDate('1970-01-01')) AS nd`, noJSON: true,
		want: []dates{{D: utc("2026-01-02T00:00:00Z"), D32: utc("1950-06-07T00:00:00Z"), ND: ptr(utc("1970-01-01T00:00:00Z"))}}},
	{name: "SimpleAggregateFunction", sql: `SELECT CAST(toDateTime64('2026-01-02 03:04:05.5', 9, 'UTC') AS SimpleAggregateFunction(min, DateTime64(9, 'UTC'))) AS dt,
		CAST(toUInt64(7) AS SimpleAggregateFunction(sum, UInt64)) AS n`,
		want: []struct {
			DT time.Time `json:"dt"`
			N  int       `json:"n"`
		}{{DT: utc("2026-01-02T03:04:05.5Z"), N: 7}}},
	{name: "NULL, [] and odd names", sql: "SELECT NULL AS keep, [] AS arr, CAST((1, 'x', 'y') AS Tuple(`a b` UInt8, `c,)` String, d String)) AS t, CAST('a,b' AS Enum8('a,b' = 1, 'c)' = 2)) AS e",
		want: []struct {
			Keep string   `json:"keep"`
			Arr  []string `json:"arr"`
			T    struct {
				AB uint8  `json:"a b"`
				D  string `json:"d"`
			} `json:"t"`
			E string `json:"e"`
		}{{Arr: []string{}, T: struct {
			AB uint8  `json:"a b"`
			D  string `json:"d"`
		}{1, "y"}, E: "a,b"}}},
	{name: "UInt8 into bool", sql: `SELECT toUInt8(2) AS u8, false AS b`, noJSON: true, want: []flags{{U8: true}}},
	{name: "maps", sql: `SELECT map(toUInt64(7), 'seven') AS by_int, map(toInt32(-1), 0.5) AS int_key, CAST(map('a', 1) AS Map(LowCardinality(String), UInt64)) AS counts`,
		want: []maps{{ByInt: map[string]string{"7": "seven"}, IntKey: map[int32]float64{-1: 0.5}, Counts: map[string]uint64{"a": 1}}}},
	{name: "columns without fields are skipped", sql: `SELECT [[1]] AS a, map('k', [NULL, 1]) AS b, CAST((1, 'x') AS Tuple(p UInt8, q String)) AS c,
		toNullable(toFixedString('z', 3)) AS d, CAST('a' AS Enum8('a' = 1)) AS e, 'kept' AS keep, toLowCardinality(toNullable('w')) AS f, (1, 2) AS g, CAST(NULL AS Nullable(String)) AS h`,
		want: []oneField{{Keep: "kept"}}},
	{name: "names fold and embedded structs", sql: `SELECT 'in' AS inner, toUInt64(9) AS camelcase, 'tag' AS Tagged, 'no' AS Ignored`,
		want: []folded{{Embedded: &Embedded{Inner: "in"}, CamelCase: 9, Tagged: "tag"}}},
	{name: "invalid UTF-8", sql: `SELECT unhex('ff61e282') AS keep`, want: []oneField{{Keep: "\ufffda\ufffd\ufffd"}}},
	{name: "no rows", sql: `SELECT 'x' AS keep WHERE 0`, want: []oneField(nil)},
	{name: "pointers to structs", sql: `SELECT 'p' AS keep`, want: []*oneField{{Keep: "p"}}},
	{name: "many rows", sql: `SELECT number AS n, toString(number) AS name FROM numbers(3000)`, want: func() []numbered {
		out := make([]numbered, 3000)
		for i := range out {
			out[i] = numbered{N: uint64(i), Name: fmt.Sprint(i)}
		}
		return out
	}()},
}

func TestDecodeRowBinary(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	for _, c := range decodeCases {
		t.Run(c.name, func(t *testing.T) {
			typ := reflect.TypeOf(c.want)
			got := reflect.New(typ)
			if err := s.Query(ctx, store.Query{Name: "decode", SQL: c.sql}, nil, got.Interface()); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Elem().Interface(), c.want) {
				t.Errorf("RowBinary decoded\n%+v\nwant\n%+v", got.Elem().Interface(), c.want)
			}
			viaJSON := reflect.New(typ)
			err := queryJSON(s, c.sql, viaJSON.Interface())
			switch {
			case c.noJSON && err == nil:
				t.Errorf("the JSON path decoded %+v; drop noJSON", viaJSON.Elem().Interface())
			case c.noJSON:
			case err != nil:
				t.Fatalf("JSON path: %v", err)
			case !reflect.DeepEqual(got.Elem().Interface(), viaJSON.Elem().Interface()):
				t.Errorf("RowBinary decoded\n%+v\nJSON decoded\n%+v", got.Elem().Interface(), viaJSON.Elem().Interface())
			}
		})
	}
}

func TestDecodeRowBinaryErrors(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	f := func(name, sql string, dest any, want ...string) {
		t.Helper()
		err := s.Query(ctx, store.Query{Name: name, SQL: sql}, nil, dest)
		if err == nil {
			t.Errorf("%s: no error, want one with %q", name, want)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", name, err, w)
			}
		}
		if reflect.ValueOf(dest).Elem().Len() != 0 {
			t.Errorf("%s: dest holds rows after an error", name)
		}
	}
	var ints []struct {
		V int8 `json:"v"`
	}
	var strs []struct {
		V string `json:"v"`
	}
	var nums []struct {
		V uint64 `json:"v"`
	}
	f("unsupported", "SELECT toDecimal64(1, 2) AS v", &strs, "query unsupported:", "column v", "unsupported type Decimal(18, 2)")
	f("mismatch", "SELECT 'x' AS v", &ints, "query mismatch:", "row 1", "column v (String)", "cannot store String in int8")
	f("overflow", "SELECT toUInt16(number + 126) AS v FROM numbers(3)", &ints, "query overflow:", "row 3", "column v (UInt16)", "128 overflows int8")
	f("negative", "SELECT toInt64(-1) AS v", &nums, "column v (Int64)", "-1 overflows uint64")
	f("fraction", "SELECT 1.5 AS v", &nums, "column v (Float64)", "cannot store 1.5 in uint64")
	f("not structs", "SELECT 1 AS v", &[]int{}, "dest elements must be structs")

	// A column that cannot be stored fails on its first row only, as with JSON.
	if err := s.Query(ctx, store.Query{Name: "empty", SQL: "SELECT 'x' AS v WHERE 0"}, nil, &ints); err != nil {
		t.Errorf("no rows: %v", err)
	}
}

// rowBinarySeedDir holds the engine output that seeds chwire's
// FuzzDecodeRowBinary and TestDecodeCorruptRowBinary.
var rowBinarySeedDir = filepath.Join("..", "chwire", "testdata", "rowbinary")

// rowBinarySeeds are the queries whose output seeds FuzzDecodeRowBinary,
// saved under rowBinarySeedDir by -update-rowbinary.
var rowBinarySeeds = map[string]string{
	"all_types.bin": allTypesSQL,
	"many_rows.bin": `SELECT number AS n, toString(number) AS name, [number, number + 1] AS nums,
		if(number % 2 = 0, NULL, toNullable(number)) AS opt FROM numbers(20)`,
	"no_rows.bin": `SELECT 'x' AS s WHERE 0`,
}

func TestRowBinarySeeds(t *testing.T) {
	s := openTestStore(t)
	for name, sql := range rowBinarySeeds {
		out, err := s.run(context.Background(), sql, "RowBinaryWithNamesAndTypes", nil)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(rowBinarySeedDir, name)
		if *updateRowBinary {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		saved, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update-rowbinary)", err)
		}
		if !bytes.Equal(out, saved) {
			t.Errorf("%s: the engine's output changed; run with -update-rowbinary", path)
		}
	}
}

// realisticSQL returns 10,000 rows shaped like the adapter retirement and
// stale usage reports: names, revisions, counters, times, a flag and an
// array of named tuples.
const realisticSQL = `SELECT
	toLowCardinality(concat('tool-', toString(number % 97))) AS tool,
	toLowCardinality(concat('rev-', toString(number % 13))) AS revision_client,
	toLowCardinality(concat('rev-', toString(number % 7))) AS revision_server,
	toBool(number % 3 = 0) AS stale,
	number * 7 AS calls, number * 3 AS current, number AS normalized, number % 11 AS rejected,
	toUInt64(0) AS removed, number % 5 AS failed, number % 101 AS sessions, number % 17 AS runs, number % 9 AS clients,
	toDateTime64('2026-11-01 00:00:00', 9, 'UTC') + toIntervalSecond(number) AS first_seen,
	toDateTime64('2026-11-29 00:00:00', 9, 'UTC') + toIntervalMillisecond(number) AS last_seen,
	number * 2 AS calls_first_half, number * 5 AS calls_second_half,
	toLowCardinality(['rising', 'falling', 'flat'][number % 3 + 1]) AS trend,
	if(number % 3 = 0, NULL, toLowCardinality(toNullable(toString(number)))) AS note,
	if(number % 4 = 0, nan, number / 7) AS rejection_rate,
	arrayMap(i -> CAST((concat('client-', toString(i)), toString(i % 3), i * 10, toInt64(i * 60), 'read') AS
		Tuple(name String, version String, calls UInt64, max_session_age_s Int64, max_privilege String)), range(number % 4)) AS callers_raw
FROM numbers(10000)`

type realisticRow struct {
	Tool            string     `json:"tool"`
	RevisionClient  string     `json:"revision_client"`
	RevisionServer  string     `json:"revision_server"`
	Stale           bool       `json:"stale"`
	Calls           uint64     `json:"calls"`
	Current         uint64     `json:"current"`
	Normalized      uint64     `json:"normalized"`
	Rejected        uint64     `json:"rejected"`
	Removed         uint64     `json:"removed"`
	Failed          uint64     `json:"failed"`
	Sessions        uint64     `json:"sessions"`
	Runs            uint64     `json:"runs"`
	Clients         uint64     `json:"clients"`
	FirstSeen       time.Time  `json:"first_seen"`
	LastSeen        *time.Time `json:"last_seen"`
	CallsFirstHalf  uint64     `json:"calls_first_half"`
	CallsSecondHalf uint64     `json:"calls_second_half"`
	Trend           string     `json:"trend"`
	Note            string     `json:"note"`
	RejectionRate   *float64   `json:"rejection_rate"`
	Callers         []struct {
		Name           string `json:"name"`
		Version        string `json:"version"`
		Calls          uint64 `json:"calls"`
		MaxSessionAgeS int64  `json:"max_session_age_s"`
		MaxPrivilege   string `json:"max_privilege"`
	} `json:"callers_raw"`
}

func TestRealisticRowsMatchJSON(t *testing.T) {
	s := openTestStore(t)
	var got, viaJSON []realisticRow
	if err := s.Query(context.Background(), store.Query{Name: "realistic", SQL: realisticSQL}, nil, &got); err != nil {
		t.Fatal(err)
	}
	if err := queryJSON(s, realisticSQL, &viaJSON); err != nil {
		t.Fatal(err)
	}
	if len(got) != 10000 || !reflect.DeepEqual(got, viaJSON) {
		t.Fatalf("%d rows differ from the JSON path's %d", len(got), len(viaJSON))
	}
	if got[4].RejectionRate != nil || *got[5].RejectionRate != 5.0/7 || math.IsNaN(*got[5].RejectionRate) {
		t.Errorf("rejection rates %v, %v", got[4].RejectionRate, *got[5].RejectionRate)
	}
}

// BenchmarkDecode compares decoding the realistic 10,000-row result from
// JSONEachRow with encoding/json and from RowBinaryWithNamesAndTypes, both
// in Go only (Decode) and through the engine (Query).
func BenchmarkDecode(b *testing.B) {
	s := openTestStore(b)
	ctx := context.Background()
	jsonOut, err := s.run(ctx, realisticSQL+jsonSettings, "JSONEachRow", nil)
	if err != nil {
		b.Fatal(err)
	}
	binOut, err := s.run(ctx, realisticSQL, "RowBinaryWithNamesAndTypes", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Decode/JSON", func(b *testing.B) {
		b.SetBytes(int64(len(jsonOut)))
		for b.Loop() {
			var rows []realisticRow
			dec := json.NewDecoder(bytes.NewReader(jsonOut))
			for dec.More() {
				var r realisticRow
				if err := dec.Decode(&r); err != nil {
					b.Fatal(err)
				}
				rows = append(rows, r)
			}
		}
	})
	b.Run("Decode/RowBinary", func(b *testing.B) {
		b.SetBytes(int64(len(binOut)))
		for b.Loop() {
			var rows []realisticRow
			if err := chwire.DecodeRowBinary(binOut, reflect.ValueOf(&rows).Elem()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Query/JSON", func(b *testing.B) {
		for b.Loop() {
			var rows []realisticRow
			if err := queryJSON(s, realisticSQL, &rows); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Query/RowBinary", func(b *testing.B) {
		for b.Loop() {
			var rows []realisticRow
			if err := s.Query(ctx, store.Query{Name: "realistic", SQL: realisticSQL}, nil, &rows); err != nil {
				b.Fatal(err)
			}
		}
	})
}
