package toolchange

import (
	"regexp"
	"slices"
	"strings"
)

// resultVersionFields are the output fields the seed names for telling
// several interpretations of a result apart.
var resultVersionFields = []string{"schema_revision", "result_version"}

// stableField matches the fields whose meaning the seed asks to keep
// stable above all: identifiers, states and timestamps.
var stableField = regexp.MustCompile(`(?i)(^id$|_id$|[a-z]Id$|^uuid$|^state$|^status$|_at$|[a-z]At$|time|date|^timestamp$)`)

// output compares the output schemas. A result is read by clients that
// planned with the old snapshot, so the direction is the reverse of the
// input's: what matters is whether a new result is still a valid old one.
func (c *comparer) output(ch *Change, o, n any) {
	if o == nil && n == nil {
		return
	}
	if n != nil {
		ch.ResultVersionField = versionField(n)
	}
	switch {
	case o == nil:
		c.add(AreaOutput, "output_schema_added", "", classAdditive, "an outputSchema was added")
		return
	case n == nil:
		c.add(AreaOutput, "output_schema_removed", "", classSemantic,
			"the outputSchema was removed: clients lose the machine contract of the result and may read the text instead")
		return
	}
	readers := compatible(n, o, "the result", "the new output schema", "the old one")
	ch.OldReaders = &readers
	before := len(c.findings)
	c.outputObject("", o, n)
	if len(c.findings) == before && !equal(o, n) {
		class := classAdditive
		if readers.Answer != AnswerYes {
			class = classSemantic
		}
		c.add(AreaOutput, "output_schema_changed", "", class, "the output schema changed in keywords mcpdrift does not classify")
	}
}

// versionField returns the result-version field of an output schema, at
// the top level or one object below it.
func versionField(s any) string {
	m, _ := obj(s)
	props := properties(m)
	for _, f := range resultVersionFields {
		if _, ok := props[f]; ok {
			return f
		}
	}
	for _, k := range sortedKeys(props) {
		inner := properties(asMap(props[k]))
		for _, f := range resultVersionFields {
			if _, ok := inner[f]; ok {
				return join(k, f)
			}
		}
	}
	return ""
}

func (c *comparer) outputObject(path string, o, n any) {
	om, nm := asMap(o), asMap(n)
	ot, nt := possibleTypes(om), possibleTypes(nm)
	if !equalSets(ot, nt) {
		if path == "" {
			c.add(AreaOutput, "output_reshaped", path, classSemantic,
				"the result changed shape from %s to %s", typeList(ot), typeList(nt))
			return
		}
		if !typesWithin(nt, ot) {
			what := "`" + path + "` changed type"
			if stableField.MatchString(lastName(path)) {
				what = "`" + path + "`, an identifier, state or timestamp, changed type"
			}
			c.add(AreaOutput, "output_type_changed", path, classSemantic,
				"%s from %s to %s: a client reading it by the old schema misreads it", what, typeList(ot), typeList(nt))
			return
		}
	}
	if ov, ok := values(om); ok {
		if nv, ok := values(nm); ok {
			if gained := missing(nv, ov); len(gained) > 0 {
				c.add(AreaOutput, "output_enum_widened", path, classSemantic,
					"`%s` may now be %s, which a client on the old schema does not know", path, showList(gained))
			}
		} else {
			c.add(AreaOutput, "output_enum_widened", path, classSemantic,
				"`%s` is no longer limited to %s", path, showList(ov))
		}
	}
	op, np := properties(om), properties(nm)
	if op == nil || np == nil {
		if oi, ok := om["items"]; ok {
			if ni, ok := nm["items"]; ok {
				c.outputObject(path+"[]", oi, ni)
			}
		}
		return
	}
	gone, fresh := keysApart(op, np)
	if w := wrapper(op, np, gone, fresh); w != "" {
		c.add(AreaOutput, "output_wrapped", join(path, w), classSemantic,
			"the result fields %s moved inside `%s`: a client reading them where they were finds nothing", fieldList(path, gone), join(path, w))
		c.outputObject(join(path, w), map[string]any{"type": "object", "properties": op, "required": om["required"]}, np[w])
		return
	}
	renamed := renames(op, np, gone, fresh, nil, nil)
	oreq, nreq := required(om), required(nm)
	for _, g := range gone {
		from := join(path, g)
		if f, ok := renamed[g]; ok {
			what := "`" + from + "`"
			if stableField.MatchString(g) {
				what = "the identifier, state or timestamp `" + from + "`"
			}
			c.add(AreaOutput, "output_field_renamed", join(path, f), classSemantic,
				"%s became `%s`: a client that reads `%s` for its next call finds nothing", what, join(path, f), from)
			continue
		}
		c.add(AreaOutput, "output_field_removed", from, classSemantic,
			"`%s` was removed from the result: a client that reads it for its next call finds nothing", from)
	}
	for _, f := range fresh {
		if slices.Contains(renamedTargets(renamed), f) {
			continue
		}
		c.add(AreaOutput, "output_field_added", join(path, f), classAdditive, "`%s` was added to the result", join(path, f))
	}
	for _, k := range sortedKeys(op) {
		nv, ok := np[k]
		if !ok {
			continue
		}
		p := join(path, k)
		if slices.Contains(oreq, k) && !slices.Contains(nreq, k) {
			c.add(AreaOutput, "output_field_optional", p, classSemantic,
				"`%s` may now be absent from the result", p)
		}
		if od, nd := description(op[k]), description(nv); od != "" && nd != "" && od != nd && stableField.MatchString(k) {
			c.add(AreaOutput, "output_description_changed", p, classSemantic,
				"`%s` keeps its name but its description changed: a possible change of meaning", p)
		}
		c.outputObject(p, op[k], nv)
	}
}

// wrapper returns the added object property that now holds most of the
// removed fields, "" when the result was not wrapped.
func wrapper(op, np map[string]any, gone, fresh []string) string {
	if len(gone) == 0 {
		return ""
	}
	for _, f := range fresh {
		inner := properties(asMap(np[f]))
		in := 0
		for _, g := range gone {
			if _, ok := inner[g]; ok {
				in++
			}
		}
		if 2*in > len(gone) {
			return f
		}
	}
	return ""
}

func fieldList(path string, names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = "`" + join(path, n) + "`"
	}
	return strings.Join(parts, ", ")
}

func lastName(path string) string {
	path = strings.TrimSuffix(path, "[]")
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}
