package toolchange

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// comparer compares the definitions of one tool.
type comparer struct {
	// authority holds the authority field names, folded by normalName.
	authority map[string]bool
	findings  []Finding
}

func (c *comparer) add(area Area, kind, path, class, format string, args ...any) {
	c.findings = append(c.findings, Finding{Area: area, Kind: kind, Path: path, Class: class, Detail: fmt.Sprintf(format, args...)})
}

func (c *comparer) isAuthority(name string) bool { return c.authority[normalName(name)] }

// tool checks one tool present in both lists.
func (c comparer) tool(o, n Tool) Change {
	c.findings = nil
	ch := Change{Tool: o.Name, OldRevision: o.Revision, NewRevision: n.Revision}
	if equal(o.Input, n.Input) && equal(o.Output, n.Output) && equal(effective(o.Annotations), effective(n.Annotations)) && o.Description == n.Description {
		ch.Status, ch.Verdict = StatusUnchanged, VerdictSafe
		ch.Reason = "the definition did not change"
		return ch
	}
	ch.Status = StatusChanged
	if o.Description != n.Description && o.Description != "" && n.Description != "" {
		c.add(AreaTool, "description_changed", "", classSemantic,
			"the tool's description changed: review whether the action still means what it meant (was %q)", o.Description)
	}
	args := compatible(o.Input, n.Input, "the arguments", "the old input schema", "the new one")
	ch.OldArguments = &args
	c.object(AreaInput, "", o.Input, n.Input)
	if !equal(o.Input, n.Input) && !slices.ContainsFunc(c.findings, func(f Finding) bool { return f.Area == AreaInput }) {
		class := classAdditive
		if args.Answer != AnswerYes {
			class = classMigration
		}
		c.add(AreaInput, "input_schema_changed", "", class, "the input schema changed in keywords mcpdrift does not classify")
	}
	if args.Answer == AnswerNo && !slices.ContainsFunc(c.findings, func(f Finding) bool {
		return f.Area == AreaInput && classRank[f.Class] >= classRank[classMigration]
	}) {
		c.add(AreaInput, "old_arguments_rejected", "", classMigration, "%s", args.Reason)
	}
	c.annotations(o.Annotations, n.Annotations)
	c.output(&ch, o.Output, n.Output)

	ch.Findings = c.findings
	for _, f := range ch.Findings {
		if classRank[f.Class] > classRank[ch.Class] {
			ch.Class = f.Class
		}
	}
	c.judge(&ch, n)
	return ch
}

// judge applies the seed's rules to a changed tool: its verdict, the
// reason and the path.
func (c *comparer) judge(ch *Change, n Tool) {
	worst := func(class string) Finding {
		for _, f := range ch.Findings {
			if f.Class == class {
				return f
			}
		}
		return Finding{}
	}
	old := "`" + shortRev(ch.OldRevision) + "`"
	switch ch.Class {
	case classAuthority, classSemantic:
		f := worst(ch.Class)
		ch.Verdict = VerdictViolation
		kind := "a semantic"
		if ch.Class == classAuthority {
			kind = "an authority"
		}
		ch.Reason = fmt.Sprintf("%s change keeps the name `%s`: %s", kind, ch.Tool, f.Detail)
		switch {
		case ch.Class == classAuthority:
			ch.Path = fmt.Sprintf("publish the wider action under a new tool name (as the seed's `deploy_preview` and `deploy_environment`), or reject calls planned with revision %s with STALE_TOOL_SCHEMA (required_action refresh_tools) before any side effect, and ask for a new approval; never fill the new authority in for an old call", old)
		case f.Area == AreaOutput:
			ch.Path = "keep the old result fields beside the new ones until the sessions that planned with revision " + old + " have ended (add before renaming or removing" + resultVersionHint(ch.ResultVersionField) + "), or publish the new result under a new tool name"
		default:
			ch.Path = fmt.Sprintf("publish the new meaning under a new tool name, or reject calls planned with revision %s with STALE_TOOL_SCHEMA (INCOMPATIBLE_TOOL_SCHEMA) before any side effect; never reinterpret an old call", old)
		}
	case classMigration:
		f := worst(classMigration)
		ch.Verdict = VerdictNeedsDecision
		ch.Reason = "the old shape no longer validates: " + f.Detail
		ch.Path = fmt.Sprintf("either normalise calls planned with revision %s with an adapter whose transformation is deterministic and keeps the old target, logged and with a declared window end, or reject them with STALE_TOOL_SCHEMA (required_action refresh_tools, side_effect_started false)", old)
		if f.Kind == "required_added_with_default" {
			ch.Path += "; the default may fill old calls only if it has always been the intended value"
		}
	case classAdditive, "":
		if ch.OldArguments != nil && ch.OldArguments.Answer != AnswerYes {
			ch.Verdict = VerdictNeedsDecision
			ch.Reason = "could not prove that old arguments stay valid: " + ch.OldArguments.Reason
			ch.Path = fmt.Sprintf("test a call planned with revision %s against the new server before the deploy", old)
			return
		}
		ch.Verdict = VerdictSafe
		ch.Reason = "additive: every old call stays valid and keeps its meaning"
		if f := worst(classAdditive); f.Detail != "" {
			ch.Reason += " (" + f.Detail + ")"
		}
		ch.Path = "keep the name, accept both shapes while old sessions end, and send notifications/tools/list_changed only once the new list is served"
	}
}

func resultVersionHint(field string) string {
	if field != "" {
		return fmt.Sprintf("; `%s` tells the interpretations apart", field)
	}
	return "; a `result_version` field lets both interpretations coexist"
}

// shortRev shortens a digest revision of either form (v1, or a SEP-2636
// tool digest) to its first 12 hex digits for display, as mcpgo.Short.
func shortRev(rev string) string {
	for _, p := range [...]string{otelschema.DigestPrefixV1, otelschema.DigestPrefixTool} {
		if strings.HasPrefix(rev, p) && len(rev) > len(p)+12 {
			return rev[len(p) : len(p)+12]
		}
	}
	return rev
}

// object compares two object schemas of the input, field by field.
func (c *comparer) object(area Area, path string, o, n any) {
	om, _ := obj(o)
	nm, _ := obj(n)
	if om == nil || nm == nil {
		return
	}
	op, np := properties(om), properties(nm)
	oreq, nreq := required(om), required(nm)
	gone, fresh := keysApart(op, np)
	renamed := renames(op, np, gone, fresh, oreq, nreq)
	for _, g := range gone {
		f, ok := renamed[g]
		if !ok {
			continue
		}
		from, to := join(path, g), join(path, f)
		same := equal(without(asMap(op[g]), "description"), without(asMap(np[f]), "description"))
		sameDesc := strings.EqualFold(strings.ReplaceAll(description(op[g]), g, f), description(np[f]))
		switch {
		case c.isAuthority(g) || c.isAuthority(f):
			c.add(area, "authority_field_renamed", to, classAuthority,
				"`%s` became `%s`, a field that selects what the action may reach", from, to)
		case same && sameDesc:
			c.add(area, "field_renamed", to, classMigration,
				"`%s` became `%s` with the same schema: moving the value is a deterministic transformation", from, to)
		default:
			c.add(area, "field_renamed", to, classSemantic,
				"`%s` became `%s`, whose schema or description differs (%s): an old value moved across may designate something else", from, to, describeDiff(op[g], np[f]))
		}
	}
	openNew := !isFalse(additional(nm))
	for _, g := range gone {
		if _, ok := renamed[g]; ok {
			continue
		}
		p := join(path, g)
		switch {
		case c.isAuthority(g):
			c.add(area, "authority_field_removed", p, classAuthority,
				"`%s` was removed: an action it used to narrow or confirm may now reach more", p)
		case openNew:
			c.add(area, "field_removed_silent", p, classSemantic,
				"`%s` was removed and the new schema still accepts it (additionalProperties): an old call that sets it succeeds with the field ignored", p)
		default:
			c.add(area, "field_removed_visible", p, classMigration,
				"`%s` was removed and additionalProperties is false: an old call that sets it is rejected", p)
		}
	}
	for _, f := range fresh {
		if slices.Contains(renamedTargets(renamed), f) {
			continue
		}
		p := join(path, f)
		req := slices.Contains(nreq, f)
		def, hasDef := asMap(np[f])["default"]
		switch {
		case c.isAuthority(f):
			how := "optional"
			if req {
				how = "required"
			}
			c.add(area, "authority_field_added", p, classAuthority,
				"%s `%s` was added: it can widen or redirect what the action reaches, so an old call cannot be completed without a new decision", how, p)
		case req && hasDef:
			c.add(area, "required_added_with_default", p, classMigration,
				"required `%s` was added, with default %s: old calls omit it", p, show(def))
		case req:
			c.add(area, "required_added", p, classMigration,
				"required `%s` was added without a default: old calls omit it and are rejected", p)
		default:
			c.add(area, "optional_added", p, classAdditive, "optional `%s` was added", p)
		}
	}
	for _, k := range sortedKeys(op) {
		nv, ok := np[k]
		if !ok {
			continue
		}
		p := join(path, k)
		wasReq, isReq := slices.Contains(oreq, k), slices.Contains(nreq, k)
		switch {
		case !wasReq && isReq:
			c.add(area, "now_required", p, classMigration, "`%s` is now required: old calls that omit it are rejected", p)
		case wasReq && !isReq:
			c.add(area, "now_optional", p, classAdditive, "`%s` is now optional", p)
		}
		c.field(area, p, k, op[k], nv)
	}
	switch oa, na := additional(om), additional(nm); {
	case equal(oa, na):
	case isFalse(oa) && !isFalse(na):
		c.add(area, "additional_properties_widened", path, classAdditive,
			"%s now accept fields the schema does not name (additionalProperties is no longer false)", c.subject(area, path))
	case !isFalse(oa) && isFalse(na):
		c.add(area, "additional_properties_narrowed", path, classMigration,
			"%s no longer accept fields the schema does not name (additionalProperties is false): an old call with such a field is rejected", c.subject(area, path))
	default:
		c.add(area, "additional_properties_changed", path, classMigration,
			"the additionalProperties schema of %s changed", c.subject(area, path))
	}
}

func (c *comparer) subject(area Area, path string) string {
	if path != "" {
		return "`" + path + "`"
	}
	if area == AreaOutput {
		return "results"
	}
	return "arguments"
}

// field compares one input field present in both schemas.
func (c *comparer) field(area Area, path, name string, o, n any) {
	om, _ := obj(o)
	nm, _ := obj(n)
	if om == nil || nm == nil || equal(om, nm) {
		return
	}
	auth := c.isAuthority(name)
	widened := func(kind, format string, args ...any) {
		if auth {
			c.add(area, "authority_field_widened", path, classAuthority,
				"`%s`, which selects what the action may reach, accepts more: "+format, append([]any{path}, args...)...)
			return
		}
		c.add(area, kind, path, classAdditive, format, args...)
	}
	ot, nt := possibleTypes(om), possibleTypes(nm)
	if _, e := values(om); e {
		ot = declaredTypes(om)
	}
	if _, e := values(nm); e {
		nt = declaredTypes(nm)
	}
	switch {
	case equalSets(ot, nt):
	case typesWithin(ot, nt):
		widened("type_widened", "`%s` accepts the types %s (was %s)", path, typeList(nt), typeList(ot))
	case typesWithin(nt, ot):
		c.add(area, "type_narrowed", path, classMigration, "`%s` accepts only %s (was %s)", path, typeList(nt), typeList(ot))
	default:
		kind, class := "type_changed", classSemantic
		if auth {
			kind, class = "authority_field_changed", classAuthority
		}
		c.add(area, kind, path, class, "`%s` keeps its name but changed type from %s to %s: a possible change of meaning", path, typeList(ot), typeList(nt))
	}
	ov, oHas := values(om)
	nv, nHas := values(nm)
	switch {
	case oHas && nHas:
		lost := missing(ov, nv)
		gained := missing(nv, ov)
		if len(lost) > 0 {
			c.add(area, "enum_narrowed", path, classMigration, "`%s` no longer accepts %s", path, showList(lost))
		}
		if len(gained) > 0 {
			widened("enum_widened", "`%s` now also accepts %s", path, showList(gained))
		}
	case oHas:
		widened("enum_widened", "`%s` is no longer limited to %s", path, showList(ov))
	case nHas:
		c.add(area, "enum_narrowed", path, classMigration, "`%s` is now limited to %s", path, showList(nv))
	}
	of, _ := om["format"].(string)
	nf, _ := nm["format"].(string)
	switch {
	case of == nf:
	case of == "":
		c.add(area, "format_narrowed", path, classMigration, "`%s` must now be a %s", path, nf)
	case nf == "":
		widened("format_widened", "`%s` is no longer required to be a %s", path, of)
	default:
		kind, class := "format_changed", classSemantic
		if auth {
			kind, class = "authority_field_changed", classAuthority
		}
		c.add(area, kind, path, class, "`%s` changed format from %s to %s: a possible change of meaning", path, of, nf)
	}
	c.bounds(area, path, om, nm, widened)
	od, nd := description(om), description(nm)
	if od != "" && nd != "" && od != nd {
		kind, class := "description_changed", classSemantic
		if auth {
			kind, class = "authority_field_changed", classAuthority
		}
		c.add(area, kind, path, class, "`%s` keeps its name but its description changed from %q to %q: a possible change of meaning", path, od, nd)
	}
	odef, oHasDef := om["default"]
	ndef, nHasDef := nm["default"]
	if oHasDef && nHasDef && !equal(odef, ndef) {
		c.add(area, "default_changed", path, classSemantic,
			"`%s`'s default changed from %s to %s: an old call that omits it now does something else", path, show(odef), show(ndef))
	}
	if mayBe(om, typeObject) && mayBe(nm, typeObject) {
		if _, ok := om["properties"]; ok {
			c.object(area, path, om, nm)
		}
	}
	if oi, ok := om["items"]; ok {
		if ni, ok := nm["items"]; ok {
			c.field(area, path+"[]", name, oi, ni)
		}
	}
}

// bounds compares the length, range, size and pattern constraints.
func (c *comparer) bounds(area Area, path string, o, n map[string]any, widened func(kind, format string, args ...any)) {
	type limit struct {
		key   string
		lower bool
	}
	for _, l := range []limit{
		{"minLength", true}, {"maxLength", false}, {"minimum", true}, {"maximum", false},
		{"exclusiveMinimum", true}, {"exclusiveMaximum", false}, {"minItems", true}, {"maxItems", false},
	} {
		ov, oHas := number(o, l.key)
		nv, nHas := number(n, l.key)
		narrower := (nHas && !oHas) || (oHas && nHas && ((l.lower && nv > ov) || (!l.lower && nv < ov)))
		wider := (oHas && !nHas) || (oHas && nHas && ((l.lower && nv < ov) || (!l.lower && nv > ov)))
		switch {
		case narrower:
			c.add(area, "constraint_narrowed", path, classMigration, "`%s`: %s is now %s (was %s)", path, l.key, show(nv), bound(ov, oHas))
		case wider:
			widened("constraint_widened", "`%s`: %s is now %s (was %s)", path, l.key, bound(nv, nHas), show(ov))
		}
	}
	op, _ := o["pattern"].(string)
	np, _ := n["pattern"].(string)
	switch {
	case op == np:
	case np == "":
		widened("constraint_widened", "`%s` no longer has to match %q", path, op)
	default:
		c.add(area, "constraint_narrowed", path, classMigration, "`%s` must now match %q (was %s)", path, np, quoteOr(op, "any string"))
	}
}

// annotations compares the behaviour hints, by their effective values
// (the MCP defaults when absent).
func (c *comparer) annotations(o, n map[string]any) {
	type hint struct {
		name string
		def  bool
		// wider is the value that lets the tool do more.
		wider bool
		what  string
	}
	for _, h := range []hint{
		{"readOnlyHint", false, false, "it may modify its environment"},
		{"destructiveHint", true, true, "its updates may be destructive"},
		{"idempotentHint", false, false, "repeating a call may have further effects"},
		{"openWorldHint", true, true, "it may reach an open world of external entities"},
	} {
		ov, nv := hintValue(o, h.name, h.def), hintValue(n, h.name, h.def)
		if ov == nv {
			continue
		}
		if nv == h.wider {
			c.add(AreaAnnotations, "annotation_widened", h.name, classAuthority, "%s became %v: %s", h.name, nv, h.what)
		} else {
			c.add(AreaAnnotations, "annotation_narrowed", h.name, classAdditive, "%s became %v", h.name, nv)
		}
	}
}

// hintDefaults are the MCP defaults of the behaviour hints.
var hintDefaults = map[string]bool{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}

// effective returns annotations with every behaviour hint at its effective
// value, so that an absent hint equals its default spelled out (the Go SDK
// writes idempotentHint false, for one).
func effective(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+len(hintDefaults))
	for k, v := range m {
		out[k] = v
	}
	for name, def := range hintDefaults {
		out[name] = hintValue(m, name, def)
	}
	return out
}

func hintValue(m map[string]any, name string, def bool) bool {
	if v, ok := m[name].(bool); ok {
		return v
	}
	return def
}

// renames pairs removed fields with added ones of the same type: a field
// renamed. Each added field is used once; required-ness must match.
func renames(op, np map[string]any, gone, fresh, oreq, nreq []string) map[string]string {
	out := map[string]string{}
	used := map[string]bool{}
	for _, g := range gone {
		gt := possibleTypes(asMap(op[g]))
		for _, f := range fresh {
			if used[f] || slices.Contains(oreq, g) != slices.Contains(nreq, f) {
				continue
			}
			if ft := possibleTypes(asMap(np[f])); gt != nil && equalSets(gt, ft) {
				out[g] = f
				used[f] = true
				break
			}
		}
	}
	return out
}

func renamedTargets(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// describeDiff says how two field schemas differ, briefly.
func describeDiff(o, n any) string {
	om, nm := asMap(o), asMap(n)
	var parts []string
	if od, nd := description(om), description(nm); od != nd {
		parts = append(parts, fmt.Sprintf("description %s → %s", quoteOr(od, "none"), quoteOr(nd, "none")))
	}
	for _, k := range sortedKeys(union(om, nm)) {
		if k == "description" || k == "title" {
			continue
		}
		if !equal(om[k], nm[k]) {
			parts = append(parts, k)
		}
	}
	return strings.Join(parts, "; ")
}

func union(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func asMap(s any) map[string]any {
	m, _ := obj(s)
	if m == nil {
		return map[string]any{}
	}
	return m
}

func equalSets(a, b []string) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	return typesWithin(a, b) && typesWithin(b, a) && slices.Contains(a, typeInteger) == slices.Contains(b, typeInteger)
}

func typeList(t []string) string {
	if t == nil {
		return "any type"
	}
	return strings.Join(t, "|")
}

// missing returns the values of a that b lacks.
func missing(a, b []any) []any {
	var out []any
	for _, v := range a {
		if !slices.ContainsFunc(b, func(x any) bool { return equal(x, v) }) {
			out = append(out, v)
		}
	}
	return out
}

func showList(v []any) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = show(x)
	}
	return strings.Join(parts, ", ")
}

func quoteOr(s, none string) string {
	if s == "" {
		return none
	}
	return fmt.Sprintf("%q", s)
}
