package chwire

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcpdrift/mcpdrift/store"
)

// decodeFunc decodes one value into v, or skips it when v is the zero Value.
type decodeFunc func(r *rbReader, v reflect.Value) error

// rbReader reads RowBinary values, checking every length against the bytes
// left.
type rbReader struct {
	buf []byte
	off int
	// strs holds the values of LowCardinality(String) columns read so far.
	strs map[string]string
}

// maxInterned bounds the strings a reader keeps for reuse.
const maxInterned = 4096

// intern returns b as jsonString does, reusing the string of an equal value
// read before.
func (r *rbReader) intern(b []byte) string {
	if s, ok := r.strs[string(b)]; ok {
		return s
	}
	s := jsonString(b)
	if len(r.strs) < maxInterned {
		if r.strs == nil {
			r.strs = make(map[string]string)
		}
		key := s
		if s != string(b) { // invalid UTF-8 was replaced
			key = string(b)
		}
		r.strs[key] = s
	}
	return s
}

func (r *rbReader) next(n int) ([]byte, error) {
	if n < 0 || n > len(r.buf)-r.off {
		return nil, fmt.Errorf("%w: %d bytes needed at offset %d, %d left", errTruncated, n, r.off, len(r.buf)-r.off)
	}
	b := r.buf[r.off : r.off+n : r.off+n]
	r.off += n
	return b, nil
}

func (r *rbReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.buf[r.off:])
	switch {
	case n == 0:
		return 0, fmt.Errorf("%w: varint at offset %d", errTruncated, r.off)
	case n < 0:
		return 0, fmt.Errorf("%w: varint at offset %d overflows 64 bits", errCorrupt, r.off)
	}
	r.off += n
	return v, nil
}

// count reads the varint length of a string, array or map whose items take
// at least size bytes each, refusing lengths the bytes left cannot hold.
func (r *rbReader) count(size int) (int, error) {
	v, err := r.uvarint()
	if err != nil {
		return 0, err
	}
	left := len(r.buf) - r.off
	if v > uint64(left/max(size, 1)) {
		return 0, fmt.Errorf("%w: %d items of %d bytes or more at offset %d, %d bytes left", errTruncated, v, max(size, 1), r.off, left)
	}
	return int(v), nil
}

// bytes reads a String.
func (r *rbReader) bytes() ([]byte, error) {
	n, err := r.count(1)
	if err != nil {
		return nil, err
	}
	return r.next(n)
}

// rowPlan decodes the rows of one result header into one struct type.
type rowPlan struct {
	cols []planColumn
	// err is a column that cannot be stored in its field. Like the JSON
	// decoder, it fails on the first row, not on an empty result.
	err error
}

type planColumn struct {
	name, typ string
	index     []int // nil: no field, the value is skipped
	decode    decodeFunc
	skip      decodeFunc
}

type planKey struct {
	elem   reflect.Type
	header string
}

// Plans are compiled once per (dest element type, result header) and cached.
var (
	plans     sync.Map // planKey → *rowPlan
	planCount atomic.Int64
)

// maxPlans bounds the plans kept: past it, a new header's plan is compiled
// for each query, as if headers were built at run time.
const maxPlans = 1024

// DecodeRowBinary appends the rows of data, a whole RowBinaryWithNamesAndTypes
// result, to slice, a settable slice of structs or of pointers to structs;
// it panics if slice is not a settable slice. Each column goes to the field
// that store.FieldIndex maps its name to, or is skipped without one; values
// are converted as encoding/json converted the engine's JSONEachRow output,
// so that a Querier's callers see the same values:
//
//   - integers into any Go integer kind (an error if the value overflows it)
//     and into floats; UInt8 and Bool into bool;
//   - floats into floats, and into integer kinds when they are whole; NaN
//     and ±Inf, which JSONEachRow wrote as null, leave the zero value (a
//     nil pointer);
//   - String, FixedString(N) and Enum names into strings, invalid UTF-8
//     replaced byte by byte with U+FFFD as encoding/json did;
//   - Date, Date32, DateTime and DateTime64 into time.Time in UTC, or into
//     strings as the engine's ISO output wrote them;
//   - Nullable's NULL leaves the zero value (a nil pointer);
//   - Array into slices (empty, not nil, for an empty array), Map into maps,
//     named Tuple into structs by `json` tag (store.FieldIndex);
//   - LowCardinality(T) and SimpleAggregateFunction(f, T) as T.
//
// Empty data is a result without rows. A column of a type the decoder does
// not read is an error that names it. Elements that are not structs, and a
// column that cannot be stored in its field, are an error at the first row,
// none when there are no rows, as with encoding/json. Data that ends inside
// a value, or holds what no engine writes, is an error, never a panic. On
// error, slice holds the rows decoded so far: the caller drops them.
// DecodeRowBinary is safe for concurrent use.
func DecodeRowBinary(data []byte, slice reflect.Value) error {
	if len(data) == 0 {
		return nil
	}
	r := &rbReader{buf: data}
	names, types, err := readHeader(r)
	if err != nil {
		return fmt.Errorf("cannot decode the result header: %w", err)
	}
	elem := slice.Type().Elem()
	st, ptr := elem, false
	if elem.Kind() == reflect.Pointer && elem.Elem().Kind() == reflect.Struct {
		st, ptr = elem.Elem(), true
	}
	key := planKey{elem: st, header: string(data[:r.off])}
	p, ok := plans.Load(key)
	if !ok {
		plan, err := compilePlan(st, names, types)
		if err != nil {
			return err
		}
		p = plan
		if planCount.Load() < maxPlans {
			var loaded bool
			if p, loaded = plans.LoadOrStore(key, plan); !loaded {
				planCount.Add(1)
			}
		}
	}
	plan := p.(*rowPlan)
	if plan.err != nil && r.off < len(r.buf) {
		return fmt.Errorf("cannot decode row %d into %s: %w", slice.Len()+1, elem, plan.err)
	}
	// A first pass checks every row against the buffer and counts them, so
	// that dest grows once, by the number of rows.
	rows, skip := 0, *r
	for ; skip.off < len(skip.buf); rows++ {
		for i := range plan.cols {
			if err := plan.cols[i].skip(&skip, reflect.Value{}); err != nil {
				return plan.cols[i].error(slice.Len()+rows+1, elem, err)
			}
		}
	}
	n := slice.Len()
	slice.Grow(rows)
	slice.SetLen(n + rows)
	for ; r.off < len(r.buf); n++ {
		row := slice.Index(n)
		row.SetZero()
		if ptr {
			v := reflect.New(st)
			row.Set(v)
			row = v.Elem()
		}
		for i := range plan.cols {
			c := &plan.cols[i]
			var field reflect.Value
			if c.index != nil {
				field = fieldOf(row, c.index)
			}
			if err := c.decode(r, field); err != nil {
				return c.error(n+1, elem, err)
			}
		}
	}
	return nil
}

func (c *planColumn) error(row int, elem reflect.Type, err error) error {
	return fmt.Errorf("cannot decode row %d into %s: column %s (%s): %w", row, elem, c.name, c.typ, err)
}

// readHeader reads the column count, names and types.
func readHeader(r *rbReader) (names, types []string, err error) {
	n, err := r.count(2)
	if err != nil {
		return nil, nil, err
	}
	if n == 0 && r.off < len(r.buf) {
		return nil, nil, fmt.Errorf("%w: rows without columns", errCorrupt)
	}
	names, types = make([]string, n), make([]string, n)
	for _, out := range [][]string{names, types} {
		for i := range out {
			b, err := r.bytes()
			if err != nil {
				return nil, nil, err
			}
			out[i] = string(b)
		}
	}
	return names, types, nil
}

// compilePlan parses the column types, failing on any the decoder does not
// support, and compiles a decoder per column for its field of st.
func compilePlan(st reflect.Type, names, types []string) (*rowPlan, error) {
	plan := &rowPlan{cols: make([]planColumn, len(names))}
	index, err := store.FieldIndex(st, names)
	if err != nil {
		plan.err = err
		return plan, nil
	}
	for i, name := range names {
		t, err := parseType(types[i])
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", name, err)
		}
		c := planColumn{name: name, typ: types[i], index: index[i], skip: skipper(t)}
		var dt reflect.Type
		if c.index != nil {
			dt = st.FieldByIndex(c.index).Type
		}
		if c.decode, err = compile(t, dt); err != nil && plan.err == nil {
			plan.err = fmt.Errorf("column %s (%s): %w", name, types[i], err)
		}
		plan.cols[i] = c
	}
	return plan, nil
}

// fieldOf returns the field at index, allocating the embedded struct
// pointers on its way, as encoding/json does.
func fieldOf(v reflect.Value, index []int) reflect.Value {
	if len(index) == 1 {
		return v.Field(index[0])
	}
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

// deref allocates the pointers of v, if any, and returns what they point to.
func deref(v reflect.Value) reflect.Value {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	return v
}

var timeType = reflect.TypeFor[time.Time]()

// compile returns the decoder of t's values into values of type dt, or one
// that skips them when dt is nil.
func compile(t *chType, dt reflect.Type) (decodeFunc, error) {
	if t.writtenAsElement() {
		if t.name == "LowCardinality" && t.args[0].name == "String" && dt != nil && dt.Kind() == reflect.String {
			// Few distinct values: each is allocated once per result.
			return func(r *rbReader, v reflect.Value) error {
				b, err := r.bytes()
				if err != nil {
					return err
				}
				v.SetString(r.intern(b))
				return nil
			}, nil
		}
		return compile(t.args[0], dt)
	}
	switch t.name {
	case "Nullable":
		inner, err := compile(t.args[0], dt)
		if err != nil {
			return nil, err
		}
		return func(r *rbReader, v reflect.Value) error {
			b, err := r.next(1)
			if err != nil {
				return err
			}
			switch b[0] {
			case 0:
				return inner(r, v)
			case 1:
				if v.IsValid() {
					v.SetZero()
				}
				return nil
			}
			return fmt.Errorf("%w: null flag %d", errCorrupt, b[0])
		}, nil
	case "Nothing": // only ever inside a NULL or an empty array
		return func(*rbReader, reflect.Value) error {
			return fmt.Errorf("%w: a value of type Nothing", errCorrupt)
		}, nil
	}
	if dt == nil {
		return skipper(t), nil
	}
	if dt.Kind() == reflect.Pointer && t.name != "Float32" && t.name != "Float64" {
		inner, err := compile(t, dt.Elem())
		if err != nil {
			return nil, err
		}
		et := dt.Elem()
		return func(r *rbReader, v reflect.Value) error {
			p := reflect.New(et)
			if err := inner(r, p.Elem()); err != nil {
				return err
			}
			v.Set(p)
			return nil
		}, nil
	}
	switch t.name {
	case "String":
		return compileString(t, dt, (*rbReader).bytes)
	case "FixedString":
		n := t.n
		return compileString(t, dt, func(r *rbReader) ([]byte, error) { return r.next(n) })
	case "Enum8", "Enum16":
		return compileEnum(t, dt)
	case "UInt8", "UInt16", "UInt32", "UInt64", "Int8", "Int16", "Int32", "Int64":
		return compileInteger(t, dt)
	case "Float32", "Float64":
		return compileFloat(t, dt)
	case "Bool":
		if dt.Kind() != reflect.Bool {
			break
		}
		return decodeBool, nil
	case "Date", "Date32", "DateTime", "DateTime64":
		return compileTime(t, dt)
	case "Array":
		return compileArray(t, dt)
	case "Map":
		return compileMap(t, dt)
	case "Tuple":
		return compileTuple(t, dt)
	}
	return nil, cannotStore(t, dt)
}

// decodeBool decodes a Bool or a UInt8 into a bool.
func decodeBool(r *rbReader, v reflect.Value) error {
	b, err := r.next(1)
	if err != nil {
		return err
	}
	v.SetBool(b[0] != 0)
	return nil
}

func cannotStore(t *chType, dt reflect.Type) error {
	return fmt.Errorf("cannot store %s in %s", t.text, dt)
}

// skipper returns a decoder that reads t's values and drops them.
func skipper(t *chType) decodeFunc {
	if t.size > 0 {
		n := t.size
		return func(r *rbReader, _ reflect.Value) error {
			_, err := r.next(n)
			return err
		}
	}
	switch t.name {
	case "String":
		return func(r *rbReader, _ reflect.Value) error {
			_, err := r.bytes()
			return err
		}
	case "LowCardinality", "SimpleAggregateFunction":
		return skipper(t.args[0])
	case "Nullable":
		inner := skipper(t.args[0])
		return func(r *rbReader, v reflect.Value) error {
			b, err := r.next(1)
			switch {
			case err != nil:
				return err
			case b[0] == 1:
				return nil
			case b[0] != 0:
				return fmt.Errorf("%w: null flag %d", errCorrupt, b[0])
			}
			return inner(r, v)
		}
	case "Array", "Map":
		var items []decodeFunc
		size := 0
		for _, a := range t.args {
			items = append(items, skipper(a))
			size += a.min
		}
		return func(r *rbReader, v reflect.Value) error {
			n, err := r.count(size)
			if err != nil {
				return err
			}
			for range n {
				for _, skip := range items {
					if err := skip(r, v); err != nil {
						return err
					}
				}
			}
			return nil
		}
	case "Tuple":
		var items []decodeFunc
		for _, a := range t.args {
			items = append(items, skipper(a))
		}
		return func(r *rbReader, v reflect.Value) error {
			for _, skip := range items {
				if err := skip(r, v); err != nil {
					return err
				}
			}
			return nil
		}
	}
	// Nothing: never has a value.
	return func(*rbReader, reflect.Value) error {
		return fmt.Errorf("%w: a value of type %s", errCorrupt, t.text)
	}
}

func compileString(t *chType, dt reflect.Type, read func(*rbReader) ([]byte, error)) (decodeFunc, error) {
	if dt.Kind() != reflect.String {
		return nil, cannotStore(t, dt)
	}
	return func(r *rbReader, v reflect.Value) error {
		b, err := read(r)
		if err != nil {
			return err
		}
		v.SetString(jsonString(b))
		return nil
	}, nil
}

// jsonString converts b as encoding/json did when it read the engine's JSON:
// each byte that is not part of valid UTF-8 becomes U+FFFD.
func jsonString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		c, n := utf8.DecodeRune(b)
		if c == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return string(out)
}

func compileEnum(t *chType, dt reflect.Type) (decodeFunc, error) {
	if dt.Kind() != reflect.String {
		return nil, cannotStore(t, dt)
	}
	names := make(map[int16]string, len(t.enum))
	for k, v := range t.enum {
		names[k] = jsonString([]byte(v))
	}
	size := t.size
	return func(r *rbReader, v reflect.Value) error {
		b, err := r.next(size)
		if err != nil {
			return err
		}
		var x int16
		if size == 1 {
			x = int16(int8(b[0]))
		} else {
			x = int16(binary.LittleEndian.Uint16(b))
		}
		name, ok := names[x]
		if !ok {
			return fmt.Errorf("%w: %d is not a value of %s", errCorrupt, x, t.text)
		}
		v.SetString(name)
		return nil
	}, nil
}

// readUint reads a little-endian integer of len(b) bytes.
func readUint(b []byte) uint64 {
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// signExtend reads u, of size bytes, as a signed integer.
func signExtend(u uint64, size int) int64 {
	shift := 64 - 8*size
	return int64(u<<shift) >> shift
}

func compileInteger(t *chType, dt reflect.Type) (decodeFunc, error) {
	size := t.size
	signed := t.name[0] == 'I'
	overflow := func(x any) error { return fmt.Errorf("%v overflows %s", x, dt) }
	switch dt.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		hi := int64(1)<<(dt.Bits()-1) - 1
		lo := -hi - 1
		return func(r *rbReader, v reflect.Value) error {
			b, err := r.next(size)
			if err != nil {
				return err
			}
			u := readUint(b)
			if !signed {
				if u > uint64(hi) {
					return overflow(u)
				}
				v.SetInt(int64(u))
				return nil
			}
			x := signExtend(u, size)
			if x < lo || x > hi {
				return overflow(x)
			}
			v.SetInt(x)
			return nil
		}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		hi := uint64(math.MaxUint64) >> (64 - dt.Bits())
		return func(r *rbReader, v reflect.Value) error {
			b, err := r.next(size)
			if err != nil {
				return err
			}
			u := readUint(b)
			if signed && signExtend(u, size) < 0 {
				return overflow(signExtend(u, size))
			}
			if u > hi {
				return overflow(u)
			}
			v.SetUint(u)
			return nil
		}, nil
	case reflect.Float32, reflect.Float64:
		return func(r *rbReader, v reflect.Value) error {
			b, err := r.next(size)
			if err != nil {
				return err
			}
			u := readUint(b)
			if signed {
				v.SetFloat(float64(signExtend(u, size)))
			} else {
				v.SetFloat(float64(u))
			}
			return nil
		}, nil
	case reflect.Bool:
		if t.name != "UInt8" {
			break
		}
		return decodeBool, nil
	}
	return nil, cannotStore(t, dt)
}

// compileFloat decodes floats into dt, which may be a pointer: NaN and ±Inf
// leave it zero (nil), as the JSON null the engine wrote for them did.
func compileFloat(t *chType, dt reflect.Type) (decodeFunc, error) {
	base := dt
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	var set func(v reflect.Value, f float64) error
	switch base.Kind() {
	case reflect.Float64:
		set = func(v reflect.Value, f float64) error { v.SetFloat(f); return nil }
	case reflect.Float32:
		set = func(v reflect.Value, f float64) error {
			if math.Abs(f) > math.MaxFloat32 {
				return fmt.Errorf("%v overflows %s", f, base)
			}
			v.SetFloat(f)
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		set = func(v reflect.Value, f float64) error {
			if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 || v.OverflowInt(int64(f)) {
				return fmt.Errorf("cannot store %v in %s", f, base)
			}
			v.SetInt(int64(f))
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		set = func(v reflect.Value, f float64) error {
			if f != math.Trunc(f) || f < 0 || f >= 1<<64 || v.OverflowUint(uint64(f)) {
				return fmt.Errorf("cannot store %v in %s", f, base)
			}
			v.SetUint(uint64(f))
			return nil
		}
	default:
		return nil, cannotStore(t, dt)
	}
	float32Bits := t.name == "Float32"
	ptr := dt.Kind() == reflect.Pointer
	return func(r *rbReader, v reflect.Value) error {
		var f float64
		if float32Bits {
			b, err := r.next(4)
			if err != nil {
				return err
			}
			f = float32ToFloat64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		} else {
			b, err := r.next(8)
			if err != nil {
				return err
			}
			f = math.Float64frombits(binary.LittleEndian.Uint64(b))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			v.SetZero()
			return nil
		}
		if ptr {
			v = deref(v)
		}
		return set(v, f)
	}, nil
}

// float32ToFloat64 returns the float64 nearest to f's shortest decimal form,
// the number the engine's JSON wrote for a Float32: 0.1, not 0.100000001.
func float32ToFloat64(f float32) float64 {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return float64(f)
	}
	var buf [32]byte
	out, _ := strconv.ParseFloat(string(strconv.AppendFloat(buf[:0], float64(f), 'g', -1, 32)), 64)
	return out
}

// compileTime decodes dates and times into time.Time (UTC) or into strings
// as the engine's ISO output wrote them.
func compileTime(t *chType, dt reflect.Type) (decodeFunc, error) {
	size, prec := t.size, t.n
	var read func(b []byte) (sec, nsec int64)
	layout := "2006-01-02T15:04:05Z"
	switch t.name {
	case "Date":
		read = func(b []byte) (int64, int64) { return int64(binary.LittleEndian.Uint16(b)) * 86400, 0 }
		layout = time.DateOnly
	case "Date32":
		read = func(b []byte) (int64, int64) { return int64(int32(binary.LittleEndian.Uint32(b))) * 86400, 0 }
		layout = time.DateOnly
	case "DateTime":
		read = func(b []byte) (int64, int64) { return int64(binary.LittleEndian.Uint32(b)), 0 }
	case "DateTime64":
		scale := int64(1)
		for range prec {
			scale *= 10
		}
		nsPerTick := int64(1e9) / scale
		read = func(b []byte) (int64, int64) {
			ticks := int64(binary.LittleEndian.Uint64(b))
			sec, frac := ticks/scale, ticks%scale
			if frac < 0 {
				sec, frac = sec-1, frac+scale
			}
			return sec, frac * nsPerTick
		}
		if prec > 0 {
			layout = "2006-01-02T15:04:05." + "000000000"[:prec] + "Z"
		}
	}
	switch {
	case dt == timeType:
		return func(r *rbReader, v reflect.Value) error {
			b, err := r.next(size)
			if err != nil {
				return err
			}
			*(v.Addr().Interface().(*time.Time)) = time.Unix(read(b)).UTC()
			return nil
		}, nil
	case dt.Kind() == reflect.String:
		return func(r *rbReader, v reflect.Value) error {
			b, err := r.next(size)
			if err != nil {
				return err
			}
			v.SetString(time.Unix(read(b)).UTC().Format(layout))
			return nil
		}, nil
	}
	return nil, cannotStore(t, dt)
}

func compileArray(t *chType, dt reflect.Type) (decodeFunc, error) {
	if dt.Kind() != reflect.Slice {
		return nil, cannotStore(t, dt)
	}
	elem, err := compile(t.args[0], dt.Elem())
	if err != nil {
		return nil, err
	}
	size := t.args[0].min
	return func(r *rbReader, v reflect.Value) error {
		n, err := r.count(size)
		if err != nil {
			return err
		}
		s := reflect.MakeSlice(dt, n, n)
		for i := range n {
			if err := elem(r, s.Index(i)); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		v.Set(s)
		return nil
	}, nil
}

func compileMap(t *chType, dt reflect.Type) (decodeFunc, error) {
	if dt.Kind() != reflect.Map {
		return nil, cannotStore(t, dt)
	}
	key, err := compileMapKey(t.args[0], dt.Key())
	if err != nil {
		return nil, err
	}
	val, err := compile(t.args[1], dt.Elem())
	if err != nil {
		return nil, err
	}
	size := t.args[0].min + t.args[1].min
	kt, vt := dt.Key(), dt.Elem()
	return func(r *rbReader, v reflect.Value) error {
		n, err := r.count(size)
		if err != nil {
			return err
		}
		m := reflect.MakeMapWithSize(dt, n)
		k, e := reflect.New(kt).Elem(), reflect.New(vt).Elem()
		for range n {
			k.SetZero()
			if err := key(r, k); err != nil {
				return fmt.Errorf("map key: %w", err)
			}
			e.SetZero()
			if err := val(r, e); err != nil {
				return fmt.Errorf("map value: %w", err)
			}
			m.SetMapIndex(k, e)
		}
		v.Set(m)
		return nil
	}, nil
}

// compileMapKey decodes map keys as encoding/json read the engine's object
// keys: strings into string kinds, integers into integer kinds or, as their
// decimal form, into string kinds.
func compileMapKey(t *chType, dt reflect.Type) (decodeFunc, error) {
	for t.writtenAsElement() {
		t = t.args[0]
	}
	isInt := t.size > 0 && (t.name[0] == 'U' || t.name[0] == 'I')
	switch {
	case isInt && dt.Kind() == reflect.String:
		signed := t.name[0] == 'I'
		size := t.size
		return func(r *rbReader, v reflect.Value) error {
			b, err := r.next(size)
			if err != nil {
				return err
			}
			if u := readUint(b); signed {
				v.SetString(strconv.FormatInt(signExtend(u, size), 10))
			} else {
				v.SetString(strconv.FormatUint(u, 10))
			}
			return nil
		}, nil
	case isInt && (dt.Kind() == reflect.Bool || dt.Kind() == reflect.Float32 || dt.Kind() == reflect.Float64):
		return nil, cannotStore(t, dt)
	case isInt || dt.Kind() == reflect.String:
		return compile(t, dt)
	}
	return nil, cannotStore(t, dt)
}

// compileTuple decodes a named Tuple into a struct, element by element into
// the fields that FieldIndex maps their names to.
func compileTuple(t *chType, dt reflect.Type) (decodeFunc, error) {
	if dt.Kind() != reflect.Struct || t.names == nil || dt == timeType {
		return nil, cannotStore(t, dt)
	}
	index, err := store.FieldIndex(dt, t.names)
	if err != nil {
		return nil, err
	}
	elems := make([]decodeFunc, len(t.args))
	for i, a := range t.args {
		var ft reflect.Type
		if index[i] != nil {
			ft = dt.FieldByIndex(index[i]).Type
		}
		if elems[i], err = compile(a, ft); err != nil {
			return nil, fmt.Errorf("element %s: %w", t.names[i], err)
		}
	}
	return func(r *rbReader, v reflect.Value) error {
		for i, elem := range elems {
			var field reflect.Value
			if index[i] != nil {
				field = fieldOf(v, index[i])
			}
			if err := elem(r, field); err != nil {
				return fmt.Errorf("element %s: %w", t.names[i], err)
			}
		}
		return nil
	}, nil
}
