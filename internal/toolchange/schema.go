package toolchange

import (
	"math"
	"reflect"
	"slices"
	"strings"
)

// The JSON types of JSON Schema; integer is a subset of number.
const (
	typeNull    = "null"
	typeBoolean = "boolean"
	typeObject  = "object"
	typeArray   = "array"
	typeNumber  = "number"
	typeInteger = "integer"
	typeString  = "string"
)

var allTypes = []string{typeNull, typeBoolean, typeObject, typeArray, typeNumber, typeString}

// obj returns a schema as a keyword map: true and {} give an empty map,
// false gives nil and ok true, anything else (a malformed schema) nil and
// ok false.
func obj(s any) (m map[string]any, ok bool) {
	switch v := s.(type) {
	case map[string]any:
		return v, true
	case bool:
		if v {
			return map[string]any{}, true
		}
		return nil, true
	case nil:
		return map[string]any{}, true
	}
	return nil, false
}

// isFalse reports whether s is the schema false, which no instance meets.
func isFalse(s any) bool { b, ok := s.(bool); return ok && !b }

// declaredTypes returns the types the "type" keyword of m allows, nil when
// it has none (or a malformed one).
func declaredTypes(m map[string]any) []string {
	switch t := m["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, v := range t {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// possibleTypes returns the JSON types an instance of m can have, from its
// type, enum and const; nil means any type. An integer instance is typed
// integer, a number instance number.
func possibleTypes(m map[string]any) []string {
	if vals, ok := values(m); ok {
		var out []string
		for _, v := range vals {
			t := instanceType(v)
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
		return out
	}
	return declaredTypes(m)
}

// values returns the only instances m allows when it has a const or an
// enum.
func values(m map[string]any) ([]any, bool) {
	if c, ok := m["const"]; ok {
		return []any{c}, true
	}
	if e, ok := m["enum"].([]any); ok {
		return e, true
	}
	return nil, false
}

// instanceType returns the JSON type of a decoded instance; integral
// numbers are integers.
func instanceType(v any) string {
	switch x := v.(type) {
	case nil:
		return typeNull
	case bool:
		return typeBoolean
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return typeInteger
		}
		return typeNumber
	case string:
		return typeString
	case []any:
		return typeArray
	case map[string]any:
		return typeObject
	}
	return ""
}

// typeAllowed reports whether an instance of type t meets a type list;
// nil allows every type.
func typeAllowed(t string, allowed []string) bool {
	if allowed == nil {
		return true
	}
	return slices.Contains(allowed, t) || (t == typeInteger && slices.Contains(allowed, typeNumber))
}

// typesWithin reports whether every type in a is allowed by b.
func typesWithin(a, b []string) bool {
	if b == nil {
		return true
	}
	if a == nil {
		return false
	}
	for _, t := range a {
		if !typeAllowed(t, b) {
			return false
		}
	}
	return true
}

// mayBe reports whether an instance of m may have type t (or, for number,
// be an integer).
func mayBe(m map[string]any, t string) bool {
	pt := possibleTypes(m)
	if pt == nil {
		return true
	}
	for _, p := range pt {
		if p == t || (t == typeNumber && p == typeInteger) || (t == typeInteger && p == typeNumber) {
			return true
		}
	}
	return false
}

// properties returns the properties keyword of m.
func properties(m map[string]any) map[string]any {
	p, _ := m["properties"].(map[string]any)
	return p
}

// required returns the names the required keyword of m lists.
func required(m map[string]any) []string {
	r, _ := m["required"].([]any)
	out := make([]string, 0, len(r))
	for _, v := range r {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// additional returns the additionalProperties schema of m, true when
// absent.
func additional(m map[string]any) any {
	if a, ok := m["additionalProperties"]; ok {
		return a
	}
	return true
}

// number returns keyword k of m as a number.
func number(m map[string]any, k string) (float64, bool) {
	f, ok := m[k].(float64)
	return f, ok
}

// description returns the description of a schema, "" when it has none.
func description(s any) string {
	m, _ := obj(s)
	d, _ := m["description"].(string)
	return strings.TrimSpace(d)
}

// equal reports whether two decoded JSON values are the same; numbers are
// compared by value.
func equal(a, b any) bool { return reflect.DeepEqual(a, b) }

// sortedKeys returns the keys of m in order.
// keysApart returns the keys of old that new lacks and those of new that
// old lacks, each sorted.
func keysApart(old, new map[string]any) (gone, fresh []string) {
	for _, k := range sortedKeys(old) {
		if _, ok := new[k]; !ok {
			gone = append(gone, k)
		}
	}
	for _, k := range sortedKeys(new) {
		if _, ok := old[k]; !ok {
			fresh = append(fresh, k)
		}
	}
	return gone, fresh
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
