package toolchange

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/argschema"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The release check's wire types are the API's (apiv1/revisions.go):
// toolchange computes them, the API and the plugin carry them.
type (
	Answer        = apiv1.Answer
	Compatibility = apiv1.Compatibility
)

// The answers.
const (
	// AnswerYes: proved for every instance.
	AnswerYes Answer = "yes"
	// AnswerNo: an instance valid under the old schema and not under the
	// new one was found, and both were checked by a JSON Schema validator.
	AnswerNo Answer = "no"
	// AnswerCannotDecide: neither proved nor disproved; Reason says what
	// stood in the way.
	AnswerCannotDecide Answer = "cannot_decide"
)

// maxCandidates bounds the instances tried as counterexamples.
const maxCandidates = 512

// compatible answers whether every instance of from is valid under to;
// subject names the instance in reasons ("the arguments", "the result"),
// fromName and toName the two schemas ("the old schema").
func compatible(from, to any, subject, fromName, toName string) Compatibility {
	fm, _ := obj(from)
	tm, _ := obj(to)
	p := &prover{rootA: fm, rootB: tm, subject: subject}
	ok, why := p.implies("", from, to)
	if ok {
		return Compatibility{Answer: AnswerYes}
	}
	vf, err := compile(from)
	if err != nil {
		return Compatibility{Answer: AnswerCannotDecide, Reason: fmt.Sprintf("the old schema does not compile: %v", err)}
	}
	vt, err := compile(to)
	if err != nil {
		return Compatibility{Answer: AnswerCannotDecide, Reason: fmt.Sprintf("the new schema does not compile: %v", err)}
	}
	for _, c := range candidates(from, 0) {
		if vf.ValidateValue(c) != nil {
			continue
		}
		if err := vt.ValidateValue(c); err != nil {
			b, _ := json.Marshal(c)
			return Compatibility{Answer: AnswerNo, Witness: b,
				Reason: fmt.Sprintf("%s passes %s and %s rejects it (%s)", inline(string(b)), fromName, toName, validationMessage(err))}
		}
	}
	return Compatibility{Answer: AnswerCannotDecide, Reason: why}
}

// compile compiles a schema with the validator servers admit calls with
// (internal/argschema).
func compile(s any) (*argschema.Schema, error) { return argschema.Compile(s) }

// candidates returns instances likely to be valid under s and to tell
// narrowings apart: each value of an enum, each type with its boundary
// values, every optional property alone, an unnamed property. They are
// checked against both schemas by a validator, never assumed valid.
func candidates(s any, depth int) []any {
	m, ok := obj(s)
	if !ok || m == nil || depth > 8 {
		return nil
	}
	if vals, ok := values(m); ok {
		return limit(slices.Clone(vals))
	}
	var out []any
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if branches, ok := m[k].([]any); ok {
			for _, br := range branches {
				if merged, ok := merge(without(m, k), br); ok {
					out = append(out, candidates(merged, depth+1)...)
				}
			}
		}
	}
	types := declaredTypes(m)
	if types == nil {
		types = inferTypes(m)
	}
	for _, t := range types {
		switch t {
		case typeNull:
			out = append(out, nil)
		case typeBoolean:
			out = append(out, true, false)
		case typeString:
			out = append(out, stringSamples(m)...)
		case typeInteger, typeNumber:
			out = append(out, numberSamples(m, t == typeInteger)...)
		case typeArray:
			out = append(out, arraySamples(m, depth)...)
		case typeObject:
			out = append(out, objectSamples(m, depth)...)
		}
	}
	return limit(out)
}

func limit(v []any) []any {
	if len(v) > maxCandidates {
		return v[:maxCandidates]
	}
	return v
}

// inferTypes guesses the types of a schema without "type" from its
// keywords; with none, every type.
func inferTypes(m map[string]any) []string {
	var out []string
	has := func(ks ...string) bool {
		return slices.ContainsFunc(ks, func(k string) bool { _, ok := m[k]; return ok })
	}
	if has("properties", "required", "additionalProperties", "minProperties", "maxProperties") {
		out = append(out, typeObject)
	}
	if has("items", "minItems", "maxItems", "uniqueItems", "prefixItems") {
		out = append(out, typeArray)
	}
	if has("minLength", "maxLength", "pattern", "format") {
		out = append(out, typeString)
	}
	if has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf") {
		out = append(out, typeNumber)
	}
	if out == nil {
		return allTypes
	}
	return out
}

var formatSamples = map[string]string{
	"date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01", "time": "00:00:00Z",
	"email": "a@example.com", "idn-email": "a@example.com", "hostname": "example.com", "idn-hostname": "example.com",
	"ipv4": "192.0.2.1", "ipv6": "2001:db8::1", "uri": "https://example.com/", "uri-reference": "/a",
	"iri": "https://example.com/", "iri-reference": "/a", "uuid": "00000000-0000-4000-8000-000000000000",
	"duration": "P1D", "regex": "a", "json-pointer": "/a", "relative-json-pointer": "0", "uri-template": "/a",
}

func stringSamples(m map[string]any) []any {
	lo, _ := number(m, "minLength")
	hi, hasHi := number(m, "maxLength")
	n := int(math.Min(math.Max(lo, 1), 4096))
	out := []any{strings.Repeat("a", n)}
	if lo == 0 {
		out = append(out, "")
	}
	if hasHi && hi <= 4096 && hi > 1 {
		out = append(out, strings.Repeat("a", int(hi)))
	} else if !hasHi {
		out = append(out, strings.Repeat("a", 300))
	}
	if f, ok := m["format"].(string); ok {
		if s, ok := formatSamples[f]; ok {
			out = append(out, s)
		}
	}
	return out
}

func numberSamples(m map[string]any, integer bool) []any {
	out := []any{0.0, 1.0, -1.0, 1e6, -1e6}
	if !integer {
		out = append(out, 0.5)
	}
	if lo, ex, ok := lower(m); ok {
		out = append(out, lo)
		if ex {
			out = append(out, lo+1, lo+0.5)
		}
	}
	if hi, ex, ok := upper(m); ok {
		out = append(out, hi)
		if ex {
			out = append(out, hi-1, hi-0.5)
		}
	}
	if k, ok := number(m, "multipleOf"); ok && k > 0 {
		out = append(out, k, 2*k, 3*k)
	}
	return out
}

func arraySamples(m map[string]any, depth int) []any {
	items := candidates(m["items"], depth+1)
	if _, ok := m["items"]; !ok {
		items = []any{"a"}
	}
	lo, _ := number(m, "minItems")
	hi, hasHi := number(m, "maxItems")
	var out []any
	if lo == 0 {
		out = append(out, []any{})
	}
	for _, it := range items[:min(len(items), 8)] {
		for _, n := range []int{max(int(lo), 1), 2} {
			if hasHi && float64(n) > hi || n > 64 {
				continue
			}
			arr := make([]any, n)
			for i := range arr {
				arr[i] = it
			}
			out = append(out, arr)
		}
	}
	if len(items) >= 2 {
		out = append(out, []any{items[0], items[1]})
	}
	return out
}

func objectSamples(m map[string]any, depth int) []any {
	props := properties(m)
	base := map[string]any{}
	for _, r := range required(m) {
		s, ok := props[r]
		if !ok {
			s = additional(m)
		}
		if c := candidates(s, depth+1); len(c) > 0 {
			base[r] = c[0]
		} else {
			base[r] = "a"
		}
	}
	out := []any{base}
	with := func(k string, v any) {
		o := make(map[string]any, len(base)+1)
		for bk, bv := range base {
			o[bk] = bv
		}
		o[k] = v
		out = append(out, o)
	}
	for _, k := range sortedKeys(props) {
		for _, v := range firstN(candidates(props[k], depth+1), 12) {
			with(k, v)
		}
	}
	if !isFalse(additional(m)) {
		for _, v := range firstN(candidates(additional(m), depth+1), 3) {
			with("x_unnamed", v)
		}
	}
	return out
}

func firstN(v []any, n int) []any { return v[:min(len(v), n)] }

// show writes a decoded JSON value compactly.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// validationMessage returns the innermost message of a validation error.
func validationMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	msg := ve.Error()
	if i := strings.Index(msg, "': "); strings.HasPrefix(msg, "at '") && i >= 0 {
		msg = msg[i+3:]
	}
	return fmt.Sprintf("at /%s: %s", strings.Join(ve.InstanceLocation, "/"), msg)
}

// inline quotes JSON as a code span when it holds no backtick.
func inline(s string) string {
	if strings.Contains(s, "`") {
		return s
	}
	return "`" + s + "`"
}

// empty reports whether v is null, "", [] or {}: a sample that carries no
// value for an adapter to keep.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// Instances returns up to n argument objects valid under schema, each
// checked by the validator servers admit calls with: first the fullest
// one (every property the schema names, each with its first sample that
// is not empty), then the samples Compatible tries as counterexamples (the
// required fields alone, each optional property alone, each enum value,
// boundary values). A schema that does not compile yields an error; one
// no sample satisfies yields none.
func Instances(schema any, n int) ([]json.RawMessage, error) {
	v, err := compile(schema)
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %w", err)
	}
	var out []json.RawMessage
	seen := map[string]bool{}
	add := func(c any) {
		if len(out) >= n || v.ValidateValue(c) != nil {
			return
		}
		b, err := json.Marshal(c)
		if err != nil || seen[string(b)] {
			return
		}
		seen[string(b)] = true
		out = append(out, b)
	}
	if m, ok := obj(schema); ok && m != nil {
		full := map[string]any{}
		props := properties(m)
		for _, k := range sortedKeys(props) {
			for _, c := range candidates(props[k], 1) {
				if !empty(c) {
					full[k] = c
					break
				}
			}
		}
		add(full)
	}
	for _, c := range candidates(schema, 0) {
		add(c)
	}
	return out, nil
}
