package toolchange

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
)

// The prover decides, for the JSON Schema 2020-12 subset tool schemas use,
// whether every instance valid under schema a is valid under schema b. It
// is sound and incomplete: true is a proof; false means "not proved", with
// the first obstacle met, and the caller looks for a counterexample before
// it says "no".
//
// Dropping a keyword of a only widens a, so a keyword of a the prover does
// not know is ignored, except where its meaning depends on its siblings
// (additionalProperties with patternProperties, items with prefixItems).
// Every keyword of b must be implied by a; a keyword of b the prover does not
// know is implied only when a has the same keyword with the same value.

// annotationKeywords never change which instances are valid.
var annotationKeywords = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$comment": true, "$schema": true, "$id": true, "$anchor": true,
	"$defs": true, "definitions": true, "contentMediaType": true, "contentEncoding": true, "contentSchema": true,
}

// knownKeywords are the assertions the prover reasons about.
var knownKeywords = map[string]bool{
	"type": true, "enum": true, "const": true,
	"minLength": true, "maxLength": true, "pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"items": true, "minItems": true, "maxItems": true, "uniqueItems": true,
	"properties": true, "required": true, "additionalProperties": true, "minProperties": true, "maxProperties": true,
	"anyOf": true, "allOf": true, "oneOf": true,
}

// prover carries the two root schemas, which a $ref resolves against.
type prover struct {
	rootA, rootB map[string]any
	// subject names the root instance in reasons: "the arguments".
	subject string
	depth   int
}

// maxDepth bounds the prover's recursion; deeper schemas are not decided.
const maxDepth = 64

// implies reports whether every instance valid under a (at instance path
// path) is valid under b, or why it could not prove it.
func (p *prover) implies(path string, a, b any) (bool, string) {
	if p.depth > maxDepth {
		return false, fmt.Sprintf("%s: schemas nested deeper than %d", p.where(path), maxDepth)
	}
	p.depth++
	defer func() { p.depth-- }()

	if isFalse(a) {
		return true, ""
	}
	am, aok := obj(a)
	bm, bok := obj(b)
	if !aok || !bok {
		return false, fmt.Sprintf("%s: a schema is neither an object nor a boolean", p.where(path))
	}
	if bm == nil {
		return false, fmt.Sprintf("%s: the new schema is false", p.where(path))
	}
	if equal(am, bm) && (!hasRef(am) || p.sameDefs()) {
		return true, ""
	}
	// A schema whose instances are a known list: check each.
	if vals, ok := values(am); ok && len(vals) <= 1024 {
		return p.valuesMeet(path, vals, bm)
	}
	// Keywords of a that combine: a anyOf (or oneOf, whose instances meet
	// one branch) holds when each branch, with a's other keywords, holds.
	for _, k := range []string{"anyOf", "oneOf"} {
		branches, ok := am[k].([]any)
		if !ok {
			continue
		}
		rest := without(am, k)
		if ok, _ := p.implies(path, rest, bm); ok {
			return true, ""
		}
		for _, br := range branches {
			merged, ok := merge(rest, br)
			if !ok {
				return false, fmt.Sprintf("%s: the old %s branches overlap its other keywords", p.where(path), k)
			}
			if ok, why := p.implies(path, merged, bm); !ok {
				return false, why
			}
		}
		return true, ""
	}
	if branches, ok := am["allOf"].([]any); ok {
		merged := without(am, "allOf")
		for _, br := range branches {
			m, ok := merge(merged, br)
			if !ok {
				return p.implies(path, without(am, "allOf"), bm)
			}
			merged = m
		}
		return p.implies(path, merged, bm)
	}
	if _, ok := am["patternProperties"]; ok {
		if _, add := am["additionalProperties"]; add {
			return false, fmt.Sprintf("%s: the old schema has patternProperties", p.where(path))
		}
	}
	if _, ok := am["prefixItems"]; ok {
		if _, items := am["items"]; items {
			return false, fmt.Sprintf("%s: the old schema has prefixItems", p.where(path))
		}
	}
	if _, ok := am["$ref"]; ok {
		if r, ok := p.resolve(p.rootA, am); ok {
			return p.implies(path, r, bm)
		}
	}

	for _, k := range sortedKeys(bm) {
		if annotationKeywords[k] {
			continue
		}
		if !knownKeywords[k] {
			if k == "$ref" {
				if r, ok := p.resolve(p.rootB, bm); ok {
					if ok, why := p.implies(path, am, r); !ok {
						return false, why
					}
					continue
				}
			}
			if v, ok := am[k]; ok && equal(v, bm[k]) && (!hasRef(bm[k]) || p.sameDefs()) {
				continue
			}
			return false, fmt.Sprintf("%s: the new schema has %s, which mcpdrift does not reason about", p.where(path), k)
		}
	}
	checks := []func(string, map[string]any, map[string]any) (bool, string){
		p.valuesImplied, p.typeImplied, p.stringImplied, p.numberImplied, p.arrayImplied, p.objectImplied, p.combinersImplied,
	}
	for _, c := range checks {
		if ok, why := c(path, am, bm); !ok {
			return false, why
		}
	}
	return true, ""
}

// valuesImplied: a new const or enum allows finitely many instances, and
// a, which reaches here only when it is not a list of values itself,
// allows infinitely many (or more than valuesMeet checks).
func (p *prover) valuesImplied(path string, a, b map[string]any) (bool, string) {
	for _, k := range []string{"const", "enum"} {
		if _, has := b[k]; has {
			return false, fmt.Sprintf("%s: the new schema allows only the values of its %s, the old one others", p.where(path), k)
		}
	}
	return true, ""
}

// valuesMeet checks a finite list of instances against b.
func (p *prover) valuesMeet(path string, vals []any, b map[string]any) (bool, string) {
	for _, v := range vals {
		ok, decided := meets(v, b)
		if !decided {
			return false, fmt.Sprintf("%s: cannot check the old value %s against the new schema", p.where(path), show(v))
		}
		if !ok {
			return false, fmt.Sprintf("%s: the old value %s is not valid under the new schema", p.where(path), show(v))
		}
	}
	return true, ""
}

func (p *prover) typeImplied(path string, a, b map[string]any) (bool, string) {
	bt := declaredTypes(b)
	if bt == nil {
		return true, ""
	}
	at := possibleTypes(a)
	if at == nil {
		return false, fmt.Sprintf("%s: the old schema allows any type, the new one only %s", p.where(path), strings.Join(bt, ", "))
	}
	for _, t := range at {
		if !typeAllowed(t, bt) {
			return false, fmt.Sprintf("%s: type %s was allowed and is not any more (now %s)", p.where(path), t, strings.Join(bt, ", "))
		}
	}
	return true, ""
}

func (p *prover) stringImplied(path string, a, b map[string]any) (bool, string) {
	if !mayBe(a, typeString) {
		return true, ""
	}
	if n, ok := number(b, "minLength"); ok && n > 0 {
		if o, _ := number(a, "minLength"); o < n {
			return false, fmt.Sprintf("%s: minLength rose from %s to %s", p.where(path), show(o), show(n))
		}
	}
	if n, ok := number(b, "maxLength"); ok {
		if o, has := number(a, "maxLength"); !has || o > n {
			return false, fmt.Sprintf("%s: maxLength fell to %s (was %s)", p.where(path), show(n), bound(o, has))
		}
	}
	if pat, ok := b["pattern"]; ok && !equal(pat, a["pattern"]) {
		return false, fmt.Sprintf("%s: pattern %s is new or changed", p.where(path), show(pat))
	}
	if f, ok := b["format"]; ok && !equal(f, a["format"]) {
		return false, fmt.Sprintf("%s: format %s is new or changed", p.where(path), show(f))
	}
	return true, ""
}

func (p *prover) numberImplied(path string, a, b map[string]any) (bool, string) {
	if !mayBe(a, typeNumber) {
		return true, ""
	}
	aLo, aLoEx, aHasLo := lower(a)
	bLo, bLoEx, bHasLo := lower(b)
	if bHasLo && (!aHasLo || aLo < bLo || (aLo == bLo && bLoEx && !aLoEx)) {
		return false, fmt.Sprintf("%s: the lower bound rose to %s (was %s)", p.where(path), show(bLo), bound(aLo, aHasLo))
	}
	aHi, aHiEx, aHasHi := upper(a)
	bHi, bHiEx, bHasHi := upper(b)
	if bHasHi && (!aHasHi || aHi > bHi || (aHi == bHi && bHiEx && !aHiEx)) {
		return false, fmt.Sprintf("%s: the upper bound fell to %s (was %s)", p.where(path), show(bHi), bound(aHi, aHasHi))
	}
	if k, ok := number(b, "multipleOf"); ok && k > 0 {
		j, has := number(a, "multipleOf")
		intOnly := slices.Equal(possibleTypes(a), []string{typeInteger})
		switch {
		case has && j > 0 && math.Mod(j, k) == 0:
		case k == 1 && intOnly:
		default:
			return false, fmt.Sprintf("%s: multipleOf %s is new or stricter", p.where(path), show(k))
		}
	}
	return true, ""
}

// lower returns the lower bound of a number schema.
func lower(m map[string]any) (v float64, exclusive, ok bool) {
	mi, hasMin := number(m, "minimum")
	ex, hasEx := number(m, "exclusiveMinimum")
	switch {
	case hasMin && hasEx:
		if ex >= mi {
			return ex, true, true
		}
		return mi, false, true
	case hasEx:
		return ex, true, true
	case hasMin:
		return mi, false, true
	}
	return 0, false, false
}

// upper returns the upper bound of a number schema.
func upper(m map[string]any) (v float64, exclusive, ok bool) {
	ma, hasMax := number(m, "maximum")
	ex, hasEx := number(m, "exclusiveMaximum")
	switch {
	case hasMax && hasEx:
		if ex <= ma {
			return ex, true, true
		}
		return ma, false, true
	case hasEx:
		return ex, true, true
	case hasMax:
		return ma, false, true
	}
	return 0, false, false
}

func (p *prover) arrayImplied(path string, a, b map[string]any) (bool, string) {
	if !mayBe(a, typeArray) {
		return true, ""
	}
	if _, ok := b["prefixItems"]; ok {
		return false, fmt.Sprintf("%s: the new schema has prefixItems", p.where(path))
	}
	if n, ok := number(b, "minItems"); ok && n > 0 {
		if o, _ := number(a, "minItems"); o < n {
			return false, fmt.Sprintf("%s: minItems rose from %s to %s", p.where(path), show(o), show(n))
		}
	}
	aMax, aHasMax := number(a, "maxItems")
	if n, ok := number(b, "maxItems"); ok && (!aHasMax || aMax > n) {
		return false, fmt.Sprintf("%s: maxItems fell to %s (was %s)", p.where(path), show(n), bound(aMax, aHasMax))
	}
	if u, _ := b["uniqueItems"].(bool); u {
		if au, _ := a["uniqueItems"].(bool); !au && !(aHasMax && aMax <= 1) {
			return false, fmt.Sprintf("%s: items must now be unique", p.where(path))
		}
	}
	if bi, ok := b["items"]; ok {
		if _, arr := bi.([]any); arr {
			return false, fmt.Sprintf("%s: the new schema has items as an array (draft 2019-09 or earlier)", p.where(path))
		}
		ai, has := a["items"]
		if !has {
			ai = true
		}
		if _, arr := ai.([]any); arr {
			return false, fmt.Sprintf("%s: the old schema has items as an array (draft 2019-09 or earlier)", p.where(path))
		}
		if ok, why := p.implies(path+"[]", ai, bi); !ok {
			return false, why
		}
	}
	return true, ""
}

func (p *prover) objectImplied(path string, a, b map[string]any) (bool, string) {
	if !mayBe(a, typeObject) {
		return true, ""
	}
	if _, ok := b["patternProperties"]; ok {
		return false, fmt.Sprintf("%s: the new schema has patternProperties", p.where(path))
	}
	areq := required(a)
	for _, r := range required(b) {
		if !slices.Contains(areq, r) {
			return false, fmt.Sprintf("%s: is required by the new schema and not by the old", p.where(join(path, r)))
		}
	}
	if n, ok := number(b, "minProperties"); ok && n > 0 {
		if o, _ := number(a, "minProperties"); o < n && float64(len(areq)) < n {
			return false, fmt.Sprintf("%s: minProperties rose to %s", p.where(path), show(n))
		}
	}
	if n, ok := number(b, "maxProperties"); ok {
		o, has := number(a, "maxProperties")
		closed := isFalse(additional(a)) && float64(len(properties(a))) <= n
		if !(has && o <= n) && !closed {
			return false, fmt.Sprintf("%s: maxProperties fell to %s", p.where(path), show(n))
		}
	}
	_, bProps := b["properties"]
	_, bAdd := b["additionalProperties"]
	if !bProps && !bAdd {
		return true, ""
	}
	ap, bp := properties(a), properties(b)
	names := sortedKeys(ap)
	for _, n := range sortedKeys(bp) {
		if _, ok := ap[n]; !ok {
			names = append(names, n)
		}
	}
	for _, n := range names {
		as, ok := ap[n]
		if !ok {
			as = additional(a)
		}
		bs, ok := bp[n]
		if !ok {
			bs = additional(b)
		}
		if ok, why := p.implies(join(path, n), as, bs); !ok {
			if isFalse(bs) {
				return false, fmt.Sprintf("%s: was accepted and is not any more (additionalProperties is false)", p.where(join(path, n)))
			}
			return false, why
		}
	}
	if ok, why := p.implies(join(path, "*"), additional(a), additional(b)); !ok {
		if isFalse(additional(b)) {
			return false, fmt.Sprintf("%s: fields the old schema did not name were accepted and are not any more (additionalProperties is false)", p.where(path))
		}
		return false, why
	}
	return true, ""
}

func (p *prover) combinersImplied(path string, a, b map[string]any) (bool, string) {
	if branches, ok := b["anyOf"].([]any); ok {
		found := false
		for _, br := range branches {
			if ok, _ := p.implies(path, a, br); ok {
				found = true
				break
			}
		}
		if !found {
			return false, fmt.Sprintf("%s: no branch of the new anyOf accepts every old instance", p.where(path))
		}
	}
	if branches, ok := b["allOf"].([]any); ok {
		for _, br := range branches {
			if ok, why := p.implies(path, a, br); !ok {
				return false, why
			}
		}
	}
	if v, ok := b["oneOf"]; ok && !equal(v, a["oneOf"]) {
		return false, fmt.Sprintf("%s: the new schema has a oneOf the old one does not", p.where(path))
	}
	return true, ""
}

// resolve follows a local $ref ("#/$defs/name" or "#/definitions/name")
// of m against root; other references are not followed.
func (p *prover) resolve(root, m map[string]any) (any, bool) {
	ref, _ := m["$ref"].(string)
	var defs map[string]any
	var name string
	switch {
	case strings.HasPrefix(ref, "#/$defs/"):
		defs, _ = root["$defs"].(map[string]any)
		name = ref[len("#/$defs/"):]
	case strings.HasPrefix(ref, "#/definitions/"):
		defs, _ = root["definitions"].(map[string]any)
		name = ref[len("#/definitions/"):]
	default:
		return nil, false
	}
	if strings.ContainsAny(name, "/~%") {
		return nil, false
	}
	target, ok := defs[name]
	if !ok {
		return nil, false
	}
	rest := without(m, "$ref")
	merged, ok := merge(rest, target)
	return merged, ok
}

// sameDefs reports whether both roots define the same $defs, so that an
// identical $ref means the same in both.
func (p *prover) sameDefs() bool {
	return equal(p.rootA["$defs"], p.rootB["$defs"]) && equal(p.rootA["definitions"], p.rootB["definitions"])
}

// hasRef reports whether a schema holds a $ref anywhere.
func hasRef(s any) bool {
	switch v := s.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "$ref" || k == "$dynamicRef" || hasRef(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hasRef(x) {
				return true
			}
		}
	}
	return false
}

// without returns m without keyword k.
func without(m map[string]any, k string) map[string]any {
	out := make(map[string]any, len(m))
	for key, v := range m {
		if key != k {
			out[key] = v
		}
	}
	return out
}

// merge returns the conjunction of two schemas as one keyword map, when
// they share no assertion keyword.
func merge(a map[string]any, b any) (map[string]any, bool) {
	bm, ok := obj(b)
	if !ok || bm == nil {
		return nil, false
	}
	out := make(map[string]any, len(a)+len(bm))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range bm {
		if old, dup := out[k]; dup && !annotationKeywords[k] && !equal(old, v) {
			return nil, false
		}
		out[k] = v
	}
	return out, true
}

// meets reports whether instance v is valid under schema m, for the
// keywords the prover knows; decided is false when m has others.
func meets(v any, m map[string]any) (ok, decided bool) {
	for k := range m {
		if !annotationKeywords[k] && !knownKeywords[k] {
			return false, false
		}
	}
	if t := declaredTypes(m); t != nil && !typeAllowed(instanceType(v), t) {
		return false, true
	}
	// const and enum both hold when a schema has both.
	if c, has := m["const"]; has && !equal(c, v) {
		return false, true
	}
	if e, has := m["enum"]; has {
		vals, ok := e.([]any)
		if !ok {
			return false, false
		}
		if !slices.ContainsFunc(vals, func(x any) bool { return equal(x, v) }) {
			return false, true
		}
	}
	switch x := v.(type) {
	case string:
		n := float64(len([]rune(x)))
		if lo, ok := number(m, "minLength"); ok && n < lo {
			return false, true
		}
		if hi, ok := number(m, "maxLength"); ok && n > hi {
			return false, true
		}
		if pat, ok := m["pattern"].(string); ok {
			re, err := regexp.Compile(pat)
			if err != nil {
				return false, false
			}
			if !re.MatchString(x) {
				return false, true
			}
		}
		if _, ok := m["format"]; ok {
			return false, false
		}
	case float64:
		if lo, ex, ok := lower(m); ok && (x < lo || (ex && x == lo)) {
			return false, true
		}
		if hi, ex, ok := upper(m); ok && (x > hi || (ex && x == hi)) {
			return false, true
		}
		if k, ok := number(m, "multipleOf"); ok && k > 0 && math.Mod(x, k) != 0 {
			return false, true
		}
	case []any, map[string]any:
		for _, k := range []string{"items", "minItems", "maxItems", "uniqueItems", "properties", "required",
			"additionalProperties", "minProperties", "maxProperties"} {
			if _, has := m[k]; has {
				return false, false
			}
		}
	}
	for _, k := range []string{"anyOf", "allOf", "oneOf"} {
		if _, has := m[k]; has {
			return false, false
		}
	}
	return true, true
}

// join appends a property name to an instance path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// where names an instance path for people.
func (p *prover) where(path string) string {
	if path == "" {
		return p.subject
	}
	return "`" + path + "`"
}

func bound(v float64, ok bool) string {
	if !ok {
		return "none"
	}
	return show(v)
}
