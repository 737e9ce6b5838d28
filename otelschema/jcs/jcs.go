// Package jcs implements the JSON Canonicalization Scheme of RFC 8785: object
// members sorted by the UTF-16 code units of their names, no insignificant
// white space, strings escaped as ECMAScript's JSON.stringify does, and
// numbers serialised as ECMAScript's Number.prototype.toString.
//
// The input must be I-JSON (RFC 7493): duplicate member names, numbers
// outside IEEE 754 binary64 and invalid UTF-8 are rejected.
package jcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Sentinel errors.
var (
	// ErrDuplicateName is returned for an object with two members of the
	// same name.
	ErrDuplicateName = errors.New("duplicate member name")
	// ErrNumber is returned for a number that has no binary64 value (NaN,
	// an infinity or an overflow).
	ErrNumber = errors.New("number outside IEEE 754 binary64")
	// ErrInvalidUTF8 is returned for a string that is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
	// ErrLoneSurrogate is returned for a \u escape of a UTF-16 surrogate
	// that is not part of a pair (encoding/json would silently replace it).
	ErrLoneSurrogate = errors.New("lone UTF-16 surrogate")
)

// checkSurrogates rejects \u escapes of unpaired surrogates. It scans the
// escapes inside strings only; the JSON syntax itself is checked later.
func checkSurrogates(data []byte) error {
	in := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if !in {
			in = c == '"'
			continue
		}
		switch c {
		case '"':
			in = false
		case '\\':
			if i+1 < len(data) && data[i+1] == 'u' {
				u, ok := hex4(data[i+2:])
				switch {
				case !ok:
				case u >= 0xd800 && u < 0xdc00:
					if len(data) < i+12 || data[i+6] != '\\' || data[i+7] != 'u' {
						return fmt.Errorf("%w at byte %d", ErrLoneSurrogate, i)
					}
					if lo, ok := hex4(data[i+8:]); !ok || lo < 0xdc00 || lo >= 0xe000 {
						return fmt.Errorf("%w at byte %d", ErrLoneSurrogate, i)
					}
					i += 6
				case u >= 0xdc00 && u < 0xe000:
					return fmt.Errorf("%w at byte %d", ErrLoneSurrogate, i)
				}
			}
			i++ // skip the escaped character
		}
	}
	return nil
}

// hex4 decodes four hex digits.
func hex4(b []byte) (uint16, bool) {
	if len(b) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return uint16(v), err == nil
}

// Transform returns the canonical form of the JSON text data.
func Transform(data []byte) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("cannot canonicalise %d bytes: %w", len(data), ErrInvalidUTF8)
	}
	if err := checkSurrogates(data); err != nil {
		return nil, fmt.Errorf("cannot canonicalise %d bytes: %w", len(data), err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parse(dec)
	if err != nil {
		return nil, fmt.Errorf("cannot canonicalise %d bytes: %w", len(data), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("cannot canonicalise %d bytes: trailing data after the JSON value", len(data))
	}
	return appendValue(make([]byte, 0, len(data)), v)
}

// Marshal returns the canonical form of v's JSON encoding (encoding/json).
func Marshal(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cannot marshal %T: %w", v, err)
	}
	return Transform(data)
}

// member is one object member, kept in input order until sorted.
type member struct {
	name string
	key  []uint16 // name as UTF-16 code units, the sort key
	v    any
}

// parse reads one JSON value: nil, bool, json.Number, string, []any or
// []member.
func parse(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	return parseFrom(dec, tok)
}

func parseFrom(dec *json.Decoder, tok json.Token) (any, error) {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := parse(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return arr, nil
		case '{':
			obj := []member{}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				name, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object member name is %T", kt)
				}
				if seen[name] {
					return nil, fmt.Errorf("%w %q", ErrDuplicateName, name)
				}
				seen[name] = true
				v, err := parse(dec)
				if err != nil {
					return nil, err
				}
				obj = append(obj, member{name: name, key: utf16.Encode([]rune(name)), v: v})
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			slices.SortFunc(obj, func(a, b member) int { return slices.Compare(a.key, b.key) })
			return obj, nil
		}
		return nil, fmt.Errorf("unexpected delimiter %q", t)
	default:
		return t, nil
	}
}

func appendValue(dst []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, t), nil
	case string:
		return AppendString(dst, t), nil
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %s", ErrNumber, t)
		}
		return AppendNumber(dst, f)
	case []any:
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case []member:
		dst = append(dst, '{')
		for i, m := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, m.name)
			dst = append(dst, ':')
			var err error
			if dst, err = appendValue(dst, m.v); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	return nil, fmt.Errorf("unexpected value of type %T", v)
}

// AppendString appends s as a JSON string the way ECMAScript's
// JSON.stringify writes it: the two-character escapes for \b \t \n \f \r "
// and \, \u00XX (lowercase hex) for the other control characters, and every
// other character as itself.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}

// AppendNumber appends f as ECMAScript's Number.prototype.toString writes
// it (ECMA-262, Number::toString): the shortest decimal that reads back as
// f, in plain notation from 1e-6 up to 1e21 and in exponent notation
// outside; -0 is written 0. NaN and the infinities are an error.
func AppendNumber(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%w: %v", ErrNumber, f)
	}
	if f == 0 {
		return append(dst, '0'), nil
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest round-trip digits d1.d2d3…e±x; ECMAScript's k is the digit
	// count and n the decimal point position: f = 0.d1d2… × 10^n.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	mant, exp, _ := bytes.Cut(e, []byte{'e'})
	digits := make([]byte, 0, 17)
	digits = append(digits, mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...)
	}
	x, _ := strconv.Atoi(string(exp))
	k, n := len(digits), x+1
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst, nil
}
