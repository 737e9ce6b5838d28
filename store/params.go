package store

import (
	"strconv"
	"strings"
	"time"
)

// Params are the values bound to a query's {name:Type} placeholders, in the
// text form the engine parses for each type. Build them with the typed
// setters so that the text form is always right.
type Params map[string]string

// String binds a String parameter. The engine parses parameter values in
// its escaped text form, so the value is escaped: unescaped, a backslash,
// tab or newline would fail to parse, and a sequence such as \' would
// silently bind another value.
func (p Params) String(name, v string) Params { p[name] = escaper.Replace(v); return p }

var escaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`, "\r", `\r`, "\x00", `\0`)

// Int binds an integer parameter.
func (p Params) Int(name string, v int64) Params { p[name] = strconv.FormatInt(v, 10); return p }

// Time binds a DateTime64(9) parameter.
func (p Params) Time(name string, t time.Time) Params {
	p[name] = t.UTC().Format("2006-01-02 15:04:05.999999999")
	return p
}

// Strings binds an Array(String) parameter.
func (p Params) Strings(name string, vs []string) Params {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		quote(&b, v)
	}
	b.WriteByte(']')
	p[name] = b.String()
	return p
}

// Tuples binds an Array(Tuple(String, ...)) parameter: one tuple per
// element of ts, each of the same length, the tuple's type's arity.
func (p Params) Tuples(name string, ts [][]string) Params {
	var b strings.Builder
	b.WriteByte('[')
	for i, t := range ts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j, v := range t {
			if j > 0 {
				b.WriteByte(',')
			}
			quote(&b, v)
		}
		b.WriteByte(')')
	}
	b.WriteByte(']')
	p[name] = b.String()
	return p
}

// quote writes v as a quoted String literal of a composite parameter's
// text form.
func quote(b *strings.Builder, v string) {
	b.WriteByte('\'')
	for _, r := range v {
		switch r {
		case '\'', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case 0:
			b.WriteString(`\0`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
}
