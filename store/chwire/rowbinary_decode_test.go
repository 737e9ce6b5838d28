package chwire

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/store/chwire/chwiretest"

	"github.com/mcpdrift/mcpdrift/store"
)

// The seeds under testdata/rowbinary are the engine's output for the
// queries of rowBinarySeeds in store/embedded (query_test.go), whose
// TestRowBinarySeeds checks them and rewrites them with -update-rowbinary.

// TestDecodeCorruptRowBinary cuts and damages the saved engine output: every
// prefix decodes or fails, without a panic, and a cut inside a row fails.
func TestDecodeCorruptRowBinary(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "rowbinary", "*.bin"))
	if len(files) == 0 {
		t.Fatal("no files in testdata/rowbinary")
	}
	decode := func(data []byte) (int, error) {
		var rows []fuzzRow
		err := DecodeRowBinary(data, reflect.ValueOf(&rows).Elem())
		return len(rows), err
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n, err := decode(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for i := 1; i < len(data); i++ {
			if m, err := decode(data[:i]); err == nil && m >= n {
				t.Errorf("%s: the first %d of %d bytes decoded into %d rows", p, i, len(data), m)
			}
		}
		if _, err := decode(data[:len(data)-1]); !errors.Is(err, errTruncated) {
			t.Errorf("%s without its last byte: %v, want %v", p, err, errTruncated)
		}
	}
	header := func(types ...string) []byte {
		b := []byte{byte(len(types))}
		for i := range types {
			b = append(b, 1, byte('a'+i))
		}
		for _, typ := range types {
			b = append(b, byte(len(typ)))
			b = append(b, typ...)
		}
		return b
	}
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"varint past 64 bits", append(header("String"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), errCorrupt},
		{"string longer than the data", append(header("String"), 0xff, 0xff, 0xff, 0xff, 0x0f, 'x'), errTruncated},
		{"array longer than the data", append(header("Array(UInt64)"), 0x80, 0x80, 0x04, 1, 2, 3, 4, 5, 6, 7, 8), errTruncated},
		{"map longer than the data", append(header("Map(String, String)"), 100, 0, 0), errTruncated},
		{"column count past the data", []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 1, 'a'}, errTruncated},
		{"null flag 2", append(header("Nullable(String)"), 2), errCorrupt},

		{"value of Nothing", append(header("Nothing"), 0), errCorrupt},
		{"rows without columns", []byte{0, 1}, errCorrupt},
	} {
		var skipped []struct{}
		if err := DecodeRowBinary(c.data, reflect.ValueOf(&skipped).Elem()); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	var enums []struct {
		A string `json:"a"`
	}
	if err := DecodeRowBinary(append(header("Enum8('x' = 1)"), 7), reflect.ValueOf(&enums).Elem()); !errors.Is(err, errCorrupt) {
		t.Errorf("unknown enum value: %v, want %v", err, errCorrupt)
	}
}

func TestParseType(t *testing.T) {
	for _, typ := range []string{"UUID", "Decimal(9, 2)", "Int128", "AggregateFunction(uniq, String)", "Tuple()", "Nested(a String)",
		"Dynamic", "JSON", "Variant(String, UInt8)", "Array(IPv4)", "Map(String, Decimal(9, 2))", "DateTime64(10)", "FixedString(0)", "Enum8('a' = x)", "Array(String"} {
		if _, err := parseType(typ); err == nil {
			t.Errorf("%s: parsed", typ)
		}
	}
	ct, err := parseType(`Tuple(` + "`a b`" + ` String, ` + "`c\\`d`" + ` Array(Enum8('x,)' = 1, 'y\'' = 2)))`)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ct.names, ct.args[1].args[0].enum); got != "[a b c`d] map[1:x,) 2:y']" {
		t.Errorf("parsed %s", got)
	}
}

// fuzzRow has a field for the columns of every seed.
type fuzzRow struct {
	chwiretest.AllTypes
	N    uint64   `json:"n"`
	Name string   `json:"name"`
	Nums []int64  `json:"nums"`
	Opt  *float64 `json:"opt"`
}

// TestFuzzRowCoversSeeds checks that fuzzRow has a field for every column
// of every seed, so that the fuzzer starts from values it decodes: the
// seeds' queries live in store/embedded, fuzzRow here.
func TestFuzzRowCoversSeeds(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "rowbinary", "*.bin"))
	if len(files) == 0 {
		t.Fatal("no files in testdata/rowbinary")
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		names, _, err := readHeader(&rbReader{buf: data})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		index, err := store.FieldIndex(reflect.TypeFor[fuzzRow](), names)
		if err != nil {
			t.Fatal(err)
		}
		for i, name := range names {
			if index[i] == nil {
				t.Errorf("%s: fuzzRow has no field for column %s", p, name)
			}
		}
	}
}

func FuzzDecodeRowBinary(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "rowbinary", "*.bin"))
	if len(files) == 0 {
		f.Fatal("no seeds in testdata/rowbinary (TestRowBinarySeeds in store/embedded writes them with -update-rowbinary)")
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		decode := func(data []byte, dest any) (int, error) {
			v := reflect.ValueOf(dest).Elem()
			v.SetLen(0)
			err := DecodeRowBinary(data, v)
			return v.Len(), err
		}
		for _, dest := range []any{&[]fuzzRow{}, &[]struct{}{}} {
			n, err := decode(data, dest)
			if err != nil {
				if !errors.Is(err, errTruncated) && !errors.Is(err, errCorrupt) && !strings.Contains(err.Error(), "type") &&
					!strings.Contains(err.Error(), "overflows") && !strings.Contains(err.Error(), "cannot store") {
					t.Errorf("unexpected error: %v", err)
				}
				continue
			}
			// Decoding is a prefix parse and every value is at least a byte
			// wide: without its last byte, the last row (or the header) is
			// incomplete, unless that row was the byte. Then the first n-1
			// rows decode, and the header with that byte is one row.
			if len(data) > 1 {
				if m, err := decode(data[:len(data)-1], dest); err == nil {
					r := &rbReader{buf: data}
					if _, _, err := readHeader(r); err != nil {
						t.Fatalf("the header decoded, then failed: %v", err)
					}
					last := append(data[:r.off:r.off], data[len(data)-1])
					if k, err := decode(last, dest); m != n-1 || k != 1 || err != nil {
						t.Errorf("%d bytes decoded into %d rows, the first %d into %d, and the header with the last byte into %d (%v)",
							len(data), n, len(data)-1, m, k, err)
					}
				}
			}
			if m, _ := decode(data[:len(data)/2], dest); m > n {
				t.Errorf("half the input decoded into %d rows, the whole into %d", m, n)
			}
		}
	})
}
