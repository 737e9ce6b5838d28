package chwire

import (
	"fmt"
	"strconv"
	"strings"
)

// chType is a ClickHouse type as RowBinaryWithNamesAndTypes names it in its
// header, parsed far enough to decode its values.
type chType struct {
	// name is the type's name without its arguments: "UInt64", "Array", …
	name string
	// text is the type as the engine wrote it, for errors.
	text string
	// args are the element types of Nullable, LowCardinality, Array and
	// SimpleAggregateFunction (one),
	// Map (key, value) and Tuple (one per element).
	args []*chType
	// names are a named Tuple's element names.
	names []string
	// n is FixedString's length and DateTime64's precision.
	n int
	// enum maps an Enum8 or Enum16 value to its name.
	enum map[int16]string
	// size is the fixed width of a value in bytes, 0 for variable widths.
	size int
	// min is the fewest bytes a value takes, to bound the element counts of
	// a corrupt buffer.
	min int
}

// writtenAsElement reports whether t's values are written as those of its
// one element type: LowCardinality(T) and SimpleAggregateFunction(f, T).
func (t *chType) writtenAsElement() bool {
	return t.name == "LowCardinality" || t.name == "SimpleAggregateFunction"
}

// fixedTypes are the types without arguments whose values have a fixed width.
var fixedTypes = map[string]int{
	"UInt8": 1, "UInt16": 2, "UInt32": 4, "UInt64": 8,
	"Int8": 1, "Int16": 2, "Int32": 4, "Int64": 8,
	"Float32": 4, "Float64": 8, "Bool": 1,
	"Date": 2, "Date32": 4, "DateTime": 4, "DateTime64": 8,
}

// parseType parses a type name of a RowBinaryWithNamesAndTypes header. Types
// the decoder cannot read are an error that names them.
func parseType(s string) (*chType, error) {
	s = strings.TrimSpace(s)
	t := &chType{text: s, name: s}
	var args []string
	if i := strings.IndexByte(s, '('); i >= 0 {
		if !strings.HasSuffix(s, ")") {
			return nil, fmt.Errorf("cannot parse type %q: unbalanced parentheses", s)
		}
		t.name = strings.TrimSpace(s[:i])
		var err error
		if args, err = splitArgs(s[i+1 : len(s)-1]); err != nil {
			return nil, fmt.Errorf("cannot parse type %q: %w", s, err)
		}
	}
	nargs := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			return fmt.Errorf("cannot parse type %q: %d arguments", s, len(args))
		}
		return nil
	}
	switch t.name {
	case "String":
		t.min = 1
	case "Nothing": // the type of NULL and [], which have no values to read
		if err := nargs(0, 0); err != nil {
			return nil, err
		}
		t.min = 1
	case "UInt8", "UInt16", "UInt32", "UInt64", "Int8", "Int16", "Int32", "Int64",
		"Float32", "Float64", "Bool", "Date", "Date32":
		if err := nargs(0, 0); err != nil {
			return nil, err
		}
	case "DateTime", "DateTime64":
		// DateTime(['tz']) and DateTime64(p[, 'tz']) store instants: the
		// zone only changes how the engine prints them.
		tz := args
		if t.name == "DateTime64" {
			if err := nargs(1, 2); err != nil {
				return nil, err
			}
			p, err := strconv.Atoi(args[0])
			if err != nil || p < 0 || p > 9 {
				return nil, fmt.Errorf("cannot parse type %q: precision %q", s, args[0])
			}
			t.n, tz = p, args[1:]
		}
		if len(tz) > 1 {
			return nil, fmt.Errorf("cannot parse type %q: %d arguments", s, len(args))
		}
		for _, z := range tz {
			if _, err := unquote(z); err != nil {
				return nil, fmt.Errorf("cannot parse type %q: %w", s, err)
			}
		}
	case "FixedString":
		if err := nargs(1, 1); err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("cannot parse type %q: length %q", s, args[0])
		}
		t.n, t.size, t.min = n, n, n
	case "Enum8", "Enum16":
		if len(args) == 0 {
			return nil, fmt.Errorf("cannot parse type %q: no values", s)
		}
		t.size, t.min = 1, 1
		if t.name == "Enum16" {
			t.size, t.min = 2, 2
		}
		t.enum = make(map[int16]string, len(args))
		for _, a := range args {
			name, value, err := parseEnumValue(a)
			if err != nil {
				return nil, fmt.Errorf("cannot parse type %q: %w", s, err)
			}
			t.enum[value] = name
		}
	case "Nullable", "LowCardinality", "Array":
		if err := nargs(1, 1); err != nil {
			return nil, err
		}
		e, err := parseType(args[0])
		if err != nil {
			return nil, err
		}
		t.args = []*chType{e}
		switch t.name {
		case "Nullable":
			t.min = 1
		case "LowCardinality": // RowBinary writes the values themselves
			t.size, t.min = e.size, e.min
		case "Array":
			t.min = 1
		}
	case "SimpleAggregateFunction": // (function, T): RowBinary writes T's values
		if len(args) < 2 {
			return nil, fmt.Errorf("cannot parse type %q: %d arguments", s, len(args))
		}
		e, err := parseType(args[len(args)-1])
		if err != nil {
			return nil, err
		}
		t.args, t.size, t.min = []*chType{e}, e.size, e.min
	case "Map":
		if err := nargs(2, 2); err != nil {
			return nil, err
		}
		for _, a := range args {
			e, err := parseType(a)
			if err != nil {
				return nil, err
			}
			t.args = append(t.args, e)
		}
		t.min = 1
	case "Tuple":
		if len(args) == 0 {
			return nil, fmt.Errorf("unsupported type %s", s)
		}
		for _, a := range args {
			name, typ := splitTupleElement(a)
			e, err := parseType(typ)
			if err != nil {
				return nil, err
			}
			if name != "" {
				t.names = append(t.names, name)
			}
			t.args = append(t.args, e)
			t.min += e.min
		}
		if len(t.names) != 0 && len(t.names) != len(t.args) {
			return nil, fmt.Errorf("cannot parse type %q: named and unnamed elements", s)
		}
	default:
		return nil, fmt.Errorf("unsupported type %s", s)
	}
	if n, ok := fixedTypes[t.name]; ok {
		t.size, t.min = n, n
	}
	return t, nil
}

// splitArgs splits a type's arguments at the commas outside parentheses,
// quoted strings and back-quoted names.
func splitArgs(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return nil, fmt.Errorf("unbalanced parentheses")
			}
		case '\'', '`':
			j, err := skipQuoted(s, i)
			if err != nil {
				return nil, err
			}
			i = j
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced parentheses")
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" || len(out) > 0 {
		out = append(out, rest)
	}
	return out, nil
}

// skipQuoted returns the index of the quote that closes the one at s[i].
func skipQuoted(s string, i int) (int, error) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			return j, nil
		}
	}
	return 0, fmt.Errorf("unterminated %c", q)
}

// unquote decodes a string quoted with ' or ` and backslash escapes, as the
// engine writes enum names, time zones and tuple element names.
func unquote(s string) (string, error) {
	if len(s) < 2 || s[0] != s[len(s)-1] || s[0] != '\'' && s[0] != '`' {
		return "", fmt.Errorf("cannot parse %q: not quoted", s)
	}
	if end, err := skipQuoted(s, 0); err != nil || end != len(s)-1 {
		return "", fmt.Errorf("cannot parse %q: not one quoted string", s)
	}
	s = s[1 : len(s)-1]
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'n':
			c = '\n'
		case 't':
			c = '\t'
		case 'r':
			c = '\r'
		case '0':
			c = 0
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}

// parseEnumValue parses one "'name' = value" of an Enum8 or Enum16.
func parseEnumValue(s string) (string, int16, error) {
	if s == "" || s[0] != '\'' {
		return "", 0, fmt.Errorf("cannot parse enum value %q", s)
	}
	end, err := skipQuoted(s, 0)
	if err != nil {
		return "", 0, fmt.Errorf("cannot parse enum value %q: %w", s, err)
	}
	name, err := unquote(s[:end+1])
	if err != nil {
		return "", 0, err
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(s[end+1:]), "=")
	if !ok {
		return "", 0, fmt.Errorf("cannot parse enum value %q", s)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("cannot parse enum value %q: %w", s, err)
	}
	return name, int16(v), nil
}

// splitTupleElement splits a Tuple element into its name, if it has one,
// and its type: "calls UInt64", "`a b` String", or just "UInt64".
func splitTupleElement(s string) (name, typ string) {
	if s != "" && s[0] == '`' {
		if end, err := skipQuoted(s, 0); err == nil {
			if n, err := unquote(s[:end+1]); err == nil {
				return n, strings.TrimSpace(s[end+1:])
			}
		}
		return "", s
	}
	i := strings.IndexAny(s, " (")
	if i < 0 || s[i] == '(' {
		return "", s
	}
	return s[:i], strings.TrimSpace(s[i+1:])
}
