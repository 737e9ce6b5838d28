package toolchange

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The prover's claim is soundness: a "yes" means every instance the old
// schema accepts, the new one accepts. These tests check the claim as a
// property, on pairs of schemas generated from the keywords the prover
// reasons about (knownKeywords, and $ref into $defs): every "yes" against
// the real validator (internal/argschema) on generated instances, every
// "no" by its witness. FuzzProver explores with the fuzzer's bytes;
// TestProverProperty runs a fixed number of pairs in every `make test`.

// choices draws decisions from bytes; past their end every choice is 0, so
// that any input, even empty, gives a schema.
type choices struct {
	b []byte
	i int
}

// n returns a choice in [0, k).
func (c *choices) n(k int) int {
	if k <= 1 || c.i >= len(c.b) {
		return 0
	}
	v := int(c.b[c.i])
	c.i++
	return v % k
}

func (c *choices) pick(vals ...any) any { return vals[c.n(len(vals))] }

// The pools the generator draws from: few names and values, so that the
// two schemas of a pair and the instances meet often.
var (
	propNames  = []string{"a", "b", "c"}
	typeNames  = []string{typeString, typeInteger, typeNumber, typeBoolean, typeNull, typeArray, typeObject}
	patterns   = []string{"^a", "^[0-9]+$", "b$", "^.{0,3}$"}
	formats    = []string{"uuid", "email", "date", "date-time", "ipv4"}
	enumValues = []any{"a", "b", "", "0", 0.0, 1.0, 2.5, true, nil}
	bounds     = []any{-1.0, 0.0, 1.0, 2.0, 5.0}
)

// schema returns a schema of the subset, at most depth levels deep.
func (c *choices) schema(depth int) map[string]any {
	kinds := 12
	if depth <= 0 {
		kinds = 6 // scalars only
	}
	switch c.n(kinds) {
	case 0:
		m := map[string]any{"type": typeString}
		if c.n(2) == 1 {
			m["minLength"] = float64(c.n(3))
		}
		if c.n(2) == 1 {
			m["maxLength"] = float64(1 + c.n(4))
		}
		if c.n(3) == 1 {
			m["pattern"] = patterns[c.n(len(patterns))]
		}
		if c.n(4) == 1 {
			m["format"] = formats[c.n(len(formats))]
		}
		return m
	case 1, 2:
		m := map[string]any{"type": []string{typeInteger, typeNumber}[c.n(2)]}
		for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
			if c.n(3) == 1 {
				m[k] = c.pick(bounds...)
			}
		}
		if c.n(4) == 1 {
			m["multipleOf"] = c.pick(0.5, 1.0, 2.0, 3.0)
		}
		return m
	case 3:
		return map[string]any{"type": c.pick(typeBoolean, typeNull)}
	case 4:
		vals := []any{}
		for range 1 + c.n(3) {
			vals = append(vals, enumValues[c.n(len(enumValues))])
		}
		if c.n(3) == 1 {
			return map[string]any{"const": vals[0]}
		}
		return map[string]any{"enum": vals}
	case 5:
		return map[string]any{"type": []any{typeNames[c.n(len(typeNames))], typeNull}}
	case 6, 7, 8:
		return c.object(depth)
	case 9:
		m := map[string]any{"type": typeArray, "items": c.schema(depth - 1)}
		if c.n(2) == 1 {
			m["minItems"] = float64(c.n(3))
		}
		if c.n(2) == 1 {
			m["maxItems"] = float64(1 + c.n(3))
		}
		if c.n(4) == 1 {
			m["uniqueItems"] = true
		}
		return m
	case 10:
		k := []string{"anyOf", "oneOf", "allOf"}[c.n(3)]
		return map[string]any{k: []any{c.schema(depth - 1), c.schema(depth - 1)}}
	default:
		return map[string]any{"$defs": map[string]any{"d": c.schema(depth - 1)}, "type": typeObject,
			"properties": map[string]any{propNames[c.n(len(propNames))]: map[string]any{"$ref": "#/$defs/d"}}}
	}
}

func (c *choices) object(depth int) map[string]any {
	props := map[string]any{}
	var req []any
	for _, p := range propNames {
		if c.n(2) == 1 {
			props[p] = c.schema(depth - 1)
			if c.n(3) == 1 {
				req = append(req, p)
			}
		}
	}
	m := map[string]any{"type": typeObject, "properties": props}
	if len(req) > 0 {
		m["required"] = req
	}
	switch c.n(4) {
	case 1:
		m["additionalProperties"] = false
	case 2:
		m["additionalProperties"] = c.schema(0)
	}
	if c.n(5) == 1 {
		m["minProperties"] = float64(c.n(3))
	}
	if c.n(5) == 1 {
		m["maxProperties"] = float64(1 + c.n(3))
	}
	return m
}

// mutate changes one keyword somewhere in s, in place: the small edits a
// release makes, so that pairs are often compatible and often close.
func (c *choices) mutate(s map[string]any) {
	// Walk down into a subschema now and then.
	if props, ok := s["properties"].(map[string]any); ok && len(props) > 0 && c.n(3) == 1 {
		for _, p := range propNames {
			if sub, ok := props[p].(map[string]any); ok && c.n(2) == 1 {
				c.mutate(sub)
				return
			}
		}
	}
	if sub, ok := s["items"].(map[string]any); ok && c.n(2) == 1 {
		c.mutate(sub)
		return
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if br, ok := s[k].([]any); ok && c.n(2) == 1 {
			if sub, ok := br[c.n(len(br))].(map[string]any); ok {
				c.mutate(sub)
				return
			}
		}
	}
	toggle := func(k string, v any) {
		if _, ok := s[k]; ok && c.n(2) == 1 {
			delete(s, k)
		} else {
			s[k] = v
		}
	}
	switch c.n(13) {
	case 0:
		if c.n(2) == 1 {
			s["type"] = typeNames[c.n(len(typeNames))]
		} else {
			s["type"] = []any{typeNames[c.n(len(typeNames))], typeNames[c.n(len(typeNames))]}
		}
	case 1:
		toggle([]string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}[c.n(4)], c.pick(bounds...))
	case 2:
		toggle([]string{"minLength", "maxLength"}[c.n(2)], float64(c.n(4)))
	case 3:
		toggle("pattern", patterns[c.n(len(patterns))])
	case 4:
		toggle("format", formats[c.n(len(formats))])
	case 5:
		vals, _ := s["enum"].([]any)
		if len(vals) > 1 && c.n(2) == 1 {
			i := c.n(len(vals))
			s["enum"] = append(append([]any{}, vals[:i]...), vals[i+1:]...)
		} else {
			s["enum"] = append(append([]any{}, vals...), enumValues[c.n(len(enumValues))])
		}
	case 6:
		req, _ := s["required"].([]any)
		if len(req) > 0 && c.n(2) == 1 {
			s["required"] = req[1:]
		} else {
			s["required"] = append(append([]any{}, req...), propNames[c.n(len(propNames))])
		}
	case 7:
		props, _ := s["properties"].(map[string]any)
		np := map[string]any{}
		for k, v := range props {
			np[k] = v
		}
		p := propNames[c.n(len(propNames))]
		if _, ok := np[p]; ok && c.n(2) == 1 {
			delete(np, p)
		} else {
			np[p] = c.schema(1)
		}
		s["properties"] = np
	case 8:
		if c.n(3) == 0 {
			delete(s, "additionalProperties")
		} else {
			s["additionalProperties"] = c.pick(false, true, map[string]any{"type": typeString})
		}
	case 9:
		toggle([]string{"minItems", "maxItems", "minProperties", "maxProperties"}[c.n(4)], float64(c.n(4)))
	case 10:
		toggle("uniqueItems", true)
	case 11:
		toggle("multipleOf", c.pick(0.5, 1.0, 2.0, 3.0))
	default:
		cp := clone(s)
		for k := range s {
			delete(s, k)
		}
		s["anyOf"] = []any{cp, c.schema(1)}
	}
}

// clone deep-copies a schema through JSON.
func clone(s map[string]any) map[string]any {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// instance returns a JSON value drawn from the pools.
func (c *choices) instance(depth int) any {
	k := 7
	if depth <= 0 {
		k = 5
	}
	switch c.n(k) {
	case 0:
		return c.pick("", "a", "ab", "abc", "abcd", "b", "0", "123", "ba", "x@y.z", "2024-01-01", "1.2.3.4",
			"123e4567-e89b-12d3-a456-426614174000")
	case 1:
		return c.pick(-1.0, 0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0)
	case 2:
		return c.pick(true, false)
	case 3:
		return nil
	case 4:
		return enumValues[c.n(len(enumValues))]
	case 5:
		var a []any
		for range c.n(4) {
			a = append(a, c.instance(depth-1))
		}
		if a == nil {
			a = []any{}
		}
		return a
	default:
		o := map[string]any{}
		for _, p := range append(propNames, "z") {
			if c.n(2) == 1 {
				o[p] = c.instance(depth - 1)
			}
		}
		return o
	}
}

// perturb returns v changed a little: a property added or dropped, a
// number moved, an item appended. Instances near the ones the witness
// search tries find the boundaries it misses.
func (c *choices) perturb(v any) any {
	switch x := v.(type) {
	case map[string]any:
		o := map[string]any{}
		for k, e := range x {
			o[k] = e
		}
		p := append(propNames, "z")[c.n(len(propNames)+1)]
		if _, ok := o[p]; ok && c.n(2) == 1 {
			delete(o, p)
		} else if ok {
			o[p] = c.perturb(o[p])
		} else {
			o[p] = c.instance(1)
		}
		return o
	case []any:
		if len(x) > 0 && c.n(2) == 1 {
			return append(append([]any{}, x[1:]...), c.perturb(x[0]))
		}
		return append(append([]any{}, x...), c.instance(1))
	case float64:
		return x + c.pick(-1.0, -0.5, 0.5, 1.0).(float64)
	case string:
		return c.pick(x+"a", x+"b", "a"+x, "").(string)
	}
	return c.instance(1)
}

// pairOutcome is what checkPair found.
type pairOutcome struct {
	answer    Answer
	instances int // instances valid under the old schema, checked
}

// checkPair asks the prover about one pair and checks its answer against
// the validator. It returns an error that describes a counterexample to
// the prover's claim.
func checkPair(c *choices, old, new map[string]any) (pairOutcome, error) {
	got := compatible(old, new, "the instance", "the old schema", "the new one")
	out := pairOutcome{answer: got.Answer}
	vo, errO := compile(old)
	vn, errN := compile(new)
	if errO != nil || errN != nil {
		// A pair the validator refuses is not a pair of the subset; the
		// prover may still answer yes on it (it reasons about keywords),
		// but there is nothing to check its answer against.
		return out, nil
	}
	show := func() string {
		o, _ := json.Marshal(old)
		n, _ := json.Marshal(new)
		return fmt.Sprintf("old %s\nnew %s", o, n)
	}
	switch got.Answer {
	case AnswerNo:
		var w any
		if err := json.Unmarshal(got.Witness, &w); err != nil {
			return out, fmt.Errorf("witness %q is not JSON: %w\n%s", got.Witness, err, show())
		}
		if vo.ValidateValue(w) != nil || vn.ValidateValue(w) == nil {
			return out, fmt.Errorf("witness %s does not pass the old schema and fail the new one\n%s", got.Witness, show())
		}
	case AnswerYes:
		pool := append(candidates(old, 0), candidates(new, 0)...)
		for range 48 {
			pool = append(pool, c.instance(3))
		}
		for i, n := 0, len(pool); i < n; i++ {
			pool = append(pool, c.perturb(pool[i]))
		}
		for _, x := range pool {
			if vo.ValidateValue(x) != nil {
				continue
			}
			out.instances++
			if err := vn.ValidateValue(x); err != nil {
				b, _ := json.Marshal(x)
				return out, fmt.Errorf("proved compatible, but %s passes the old schema and the new one rejects it (%v)\n%s", b, err, show())
			}
		}
	}
	return out, nil
}

// pair builds a pair of schemas from c: the old one generated, the new one
// a few edits of it, or now and then a schema of its own.
func pair(c *choices) (old, new map[string]any) {
	old = c.schema(3)
	if c.n(5) == 0 {
		return old, c.schema(3)
	}
	new = clone(old)
	for range 1 + c.n(3) {
		c.mutate(new)
	}
	return old, new
}

// FuzzProver checks the prover's answer on pairs of schemas built from
// the fuzzer's bytes.
func FuzzProver(f *testing.F) {
	for _, s := range []string{"", "\x06\x01\x01\x00\x02", "\x09\x00\x06\x01\x06", "\x0a\x01\x00\x03\x04\x05\x06\x07"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &choices{b: data}
		old, new := pair(c)
		// What remains of the bytes, and then a fixed stream, drives the
		// instances.
		c.b = append(c.b[c.i:], data...)
		c.i = 0
		if _, err := checkPair(c, old, new); err != nil {
			t.Fatal(err)
		}
	})
}

// TestProverProperty runs the property on pairs drawn from a fixed seed,
// so that `make test` checks thousands of them every time, and logs how
// they were answered.
func TestProverProperty(t *testing.T) {
	pairs := 4000
	if testing.Short() {
		pairs = 400
	}
	r := rand.New(rand.NewPCG(2026, 12))
	counts := map[Answer]int{}
	checked := 0
	for i := range pairs {
		b := make([]byte, 512)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		c := &choices{b: b}
		old, new := pair(c)
		out, err := checkPair(c, old, new)
		if err != nil {
			t.Fatalf("pair %d: %v", i, err)
		}
		counts[out.answer]++
		checked += out.instances
	}
	t.Logf("%d pairs: %d yes (%d instances of the old schema checked against the new), %d no (each witness checked), %d cannot_decide",
		pairs, counts[AnswerYes], checked, counts[AnswerNo], counts[AnswerCannotDecide])
	// The generator must exercise every answer, or the property says little.
	for _, a := range []Answer{AnswerYes, AnswerNo, AnswerCannotDecide} {
		if counts[a] == 0 {
			t.Errorf("no pair answered %s", a)
		}
	}
}
