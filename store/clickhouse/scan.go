package clickhouse

import (
	"fmt"
	"math/big"
	"reflect"
	"time"

	"github.com/mcpdrift/mcpdrift/store"
)

// assign stores the scanned value src into dst, converting as the embedded
// store's result decoder does: integers and floats into any numeric kind,
// times as UTC, strings into strings, and slices and maps element by
// element. A nil (NULL) value leaves the zero value.
func assign(dst reflect.Value, src any) error {
	return assignValue(dst, reflect.ValueOf(src))
}

var timeType = reflect.TypeOf(time.Time{})

func assignValue(dst, src reflect.Value) error {
	for src.IsValid() && (src.Kind() == reflect.Pointer || src.Kind() == reflect.Interface) {
		if src.IsNil() {
			dst.SetZero()
			return nil
		}
		src = src.Elem()
	}
	if !src.IsValid() {
		dst.SetZero()
		return nil
	}
	if dst.Kind() == reflect.Pointer {
		v := reflect.New(dst.Type().Elem())
		if err := assignValue(v.Elem(), src); err != nil {
			return err
		}
		dst.Set(v)
		return nil
	}
	if src.Type() == timeType {
		t := src.Interface().(time.Time).UTC()
		switch {
		case dst.Type() == timeType:
			dst.Set(reflect.ValueOf(t))
			return nil
		case dst.Kind() == reflect.String:
			dst.SetString(t.Format(time.RFC3339Nano))
			return nil
		}
	}
	if dst.Kind() == reflect.Interface && src.Type().AssignableTo(dst.Type()) {
		dst.Set(src)
		return nil
	}
	if b, ok := src.Interface().(big.Int); ok { // Int128, UInt256, …
		switch {
		case dst.Kind() == reflect.String:
			dst.SetString(b.String())
			return nil
		case dst.CanInt():
			dst.SetInt(b.Int64())
			return nil
		case dst.CanUint():
			dst.SetUint(b.Uint64())
			return nil
		case dst.CanFloat():
			f, _ := new(big.Float).SetInt(&b).Float64()
			dst.SetFloat(f)
			return nil
		}
	}
	if d, ok := src.Interface().(interface{ InexactFloat64() float64 }); ok && dst.CanFloat() { // Decimal
		dst.SetFloat(d.InexactFloat64())
		return nil
	}
	switch dst.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if isNumber(src.Kind()) {
			dst.Set(src.Convert(dst.Type()))
			return nil
		}
	case reflect.Bool:
		if src.Kind() == reflect.Bool {
			dst.SetBool(src.Bool())
			return nil
		}
	case reflect.String:
		switch {
		case src.Kind() == reflect.String:
			dst.SetString(src.String())
			return nil
		case src.Kind() == reflect.Slice && src.Type().Elem().Kind() == reflect.Uint8:
			dst.SetString(string(src.Bytes()))
			return nil
		}
		if s, ok := src.Interface().(fmt.Stringer); ok {
			dst.SetString(s.String())
			return nil
		}
	case reflect.Slice:
		if src.Kind() == reflect.Slice || src.Kind() == reflect.Array {
			out := reflect.MakeSlice(dst.Type(), src.Len(), src.Len())
			for i := 0; i < src.Len(); i++ {
				if err := assignValue(out.Index(i), src.Index(i)); err != nil {
					return fmt.Errorf("element %d: %w", i, err)
				}
			}
			dst.Set(out)
			return nil
		}
	case reflect.Map:
		if src.Kind() == reflect.Map {
			out := reflect.MakeMapWithSize(dst.Type(), src.Len())
			it := src.MapRange()
			for it.Next() {
				k, v := reflect.New(dst.Type().Key()).Elem(), reflect.New(dst.Type().Elem()).Elem()
				if err := assignValue(k, it.Key()); err != nil {
					return fmt.Errorf("map key: %w", err)
				}
				if err := assignValue(v, it.Value()); err != nil {
					return fmt.Errorf("map value: %w", err)
				}
				out.SetMapIndex(k, v)
			}
			dst.Set(out)
			return nil
		}
	case reflect.Struct:
		if src.Type().AssignableTo(dst.Type()) {
			dst.Set(src)
			return nil
		}
		if src.Kind() == reflect.Map && src.Type().Key().Kind() == reflect.String {
			return assignNamedTuple(dst, src)
		}
		if src.Kind() == reflect.Slice || src.Kind() == reflect.Array {
			return assignTuple(dst, src)
		}
	}
	if src.Type().AssignableTo(dst.Type()) {
		dst.Set(src)
		return nil
	}
	return fmt.Errorf("cannot store %s in %s", src.Type(), dst.Type())
}

// assignNamedTuple stores a named Tuple, which the driver scans as a map
// from element names to values, in the struct dst: each element in the
// field its name maps to, as result columns are (store.FieldIndex).
func assignNamedTuple(dst, src reflect.Value) error {
	keys := src.MapKeys()
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.String()
	}
	index, err := store.FieldIndex(dst.Type(), names)
	if err != nil {
		return err
	}
	dst.SetZero()
	for i, idx := range index {
		if idx == nil {
			continue
		}
		if err := assignValue(dst.FieldByIndex(idx), src.MapIndex(keys[i])); err != nil {
			return fmt.Errorf("tuple element %s: %w", names[i], err)
		}
	}
	return nil
}

// assignTuple stores an unnamed Tuple, which the driver scans as a slice
// of its elements, in the exported fields of the struct dst, in order.
func assignTuple(dst, src reflect.Value) error {
	var fields []int
	for i := range dst.NumField() {
		if dst.Type().Field(i).IsExported() {
			fields = append(fields, i)
		}
	}
	if len(fields) != src.Len() {
		return fmt.Errorf("cannot store a tuple of %d elements in %s, which has %d fields", src.Len(), dst.Type(), len(fields))
	}
	for i, f := range fields {
		if err := assignValue(dst.Field(f), src.Index(i)); err != nil {
			return fmt.Errorf("tuple element %d: %w", i+1, err)
		}
	}
	return nil
}

func isNumber(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
