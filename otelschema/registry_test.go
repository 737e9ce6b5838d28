package otelschema

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestRegistryMatchesNames checks that every Attr* constant of names.go is
// in the Registry exactly once and that the Registry holds nothing else.
func TestRegistryMatchesNames(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "names.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{} // value → constant
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if !strings.HasPrefix(id.Name, "Attr") || !id.IsExported() {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s is not a string literal", id.Name)
				}
				v, _ := strconv.Unquote(lit.Value)
				if prev, dup := consts[v]; dup {
					t.Errorf("%s and %s are both %q", prev, id.Name, v)
				}
				consts[v] = id.Name
			}
		}
	}
	if len(consts) < 40 {
		t.Fatalf("found only %d Attr constants in names.go", len(consts))
	}
	seen := map[string]int{}
	for _, a := range Registry() {
		seen[a.Name]++
		if _, ok := consts[a.Name]; !ok {
			t.Errorf("registry attribute %q has no Attr constant in names.go", a.Name)
		}
	}
	for v, name := range consts {
		if seen[v] != 1 {
			t.Errorf("%s (%q) is in the Registry %d times, want once", name, v, seen[v])
		}
	}
}

// sampleValue returns a non-zero value of a's type and what it decodes to.
func sampleValue(a *Attribute) decoded {
	switch a.Type {
	case TypeString:
		return decoded{s: "x"}
	case TypeBool:
		return decoded{b: true}
	}
	return decoded{i: 1}
}

// TestRegistrySetters checks that every setter writes its own Event field,
// that every convention field of Event has exactly one attribute, and that
// present sees what set wrote.
func TestRegistrySetters(t *testing.T) {
	notAttributes := map[string]bool{"ID": true, "Name": true, "Time": true, "TraceID": true, "SpanID": true, "Attributes": true,
		"ClientView": true} // the span kind sets it
	owner := map[string]string{}
	for _, a := range Registry() {
		if a.set == nil {
			if a.Name != AttrEventName && a.Name != AttrOtelEventName {
				t.Errorf("%s has no setter", a.Name)
			}
			continue
		}
		var e Event
		if a.present(&e) {
			t.Errorf("%s is present on a zero Event", a.Name)
		}
		a.set(&e, sampleValue(&a))
		if !a.present(&e) {
			t.Errorf("%s is not present after set", a.Name)
		}
		if a.get(&e) == reflect.Zero(reflect.TypeOf(a.get(&e))).Interface() {
			t.Errorf("%s: get returns the zero value after set", a.Name)
		}
		v := reflect.ValueOf(e)
		var set []string
		for i := 0; i < v.NumField(); i++ {
			if !v.Field(i).IsZero() {
				set = append(set, v.Type().Field(i).Name)
			}
		}
		if len(set) != 1 {
			t.Errorf("%s sets fields %v, want one", a.Name, set)
			continue
		}
		if prev, dup := owner[set[0]]; dup {
			t.Errorf("%s and %s both set Event.%s", prev, a.Name, set[0])
		}
		owner[set[0]] = a.Name
	}
	typ := reflect.TypeOf(Event{})
	for i := 0; i < typ.NumField(); i++ {
		name := typ.Field(i).Name
		if _, ok := owner[name]; !ok && !notAttributes[name] {
			t.Errorf("Event.%s has no attribute in the Registry", name)
		}
	}
}

func TestRegistryConsistency(t *testing.T) {
	for _, a := range Registry() {
		if a.Type < TypeString || a.Type > TypeTimestamp {
			t.Errorf("%s: bad type %d", a.Name, a.Type)
		}
		if (a.Type == TypeEnum) != (len(a.Values) > 0) {
			t.Errorf("%s: type %s with values %v", a.Name, a.Type, a.Values)
		}
		if len(a.Events) == 0 {
			t.Errorf("%s: applies to no event", a.Name)
		}
		for _, e := range a.Required {
			if !a.AppliesTo(e) {
				t.Errorf("%s: required on %s, which it does not apply to", a.Name, e)
			}
			if !a.RequiredOn(e) {
				t.Errorf("%s: RequiredOn(%s) is false", a.Name, e)
			}
		}
		if a.Resource && len(a.Required) > 0 {
			t.Errorf("%s: a resource attribute cannot be required", a.Name)
		}
		if a.Doc == "" || !strings.HasSuffix(a.Doc, ".") {
			t.Errorf("%s: doc %q is not a sentence", a.Name, a.Doc)
		}
		if got, ok := Lookup(a.Name); !ok || got.Name != a.Name {
			t.Errorf("Lookup(%q) = %v, %v", a.Name, got.Name, ok)
		}
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup of an unknown name succeeded")
	}
	wantRequired := map[EventName][]string{
		EventCall:       {AttrToolName, AttrOutcome},
		EventAdapter:    {AttrToolName, AttrAdapterID},
		EventRepair:     {AttrRepairAction},
		EventAdvertised: {AttrToolName, AttrRevisionServer, AttrToolDefinition},
	}
	for _, s := range Events() {
		if s.Name.String() == "" || s.Doc == "" || s.EmittedBy == "" {
			t.Errorf("event %d is not described: %+v", s.Name, s)
		}
		if got := RequiredAttributes(s.Name); !reflect.DeepEqual(got, wantRequired[s.Name]) && (len(got) != 0 || len(wantRequired[s.Name]) != 0) {
			t.Errorf("%s requires %v, want %v", s.Name, got, wantRequired[s.Name])
		}
	}
	if got := len(Events()); got != len(eventNames)-1 {
		t.Errorf("%d events described, %d named", got, len(eventNames)-1)
	}
	if RequiredAttributes(EventName(200)) != nil {
		t.Error("RequiredAttributes of an unknown event is not nil")
	}
}

// TestConventionsUpToDate fails when CONVENTIONS.md does not begin with
// what the Registry generates (gendoc appends the section on instrumenting
// an SDK, and its own test checks the whole file).
func TestConventionsUpToDate(t *testing.T) {
	var want bytes.Buffer
	if err := WriteConventions(&want); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("CONVENTIONS.md")
	if err != nil {
		t.Fatalf("%v: run go generate ./otelschema", err)
	}
	if bytes.HasPrefix(got, want.Bytes()) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(want.String(), "\n")
	for i := 0; i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("CONVENTIONS.md is out of date (run go generate ./otelschema); first difference at line %d:\n file: %s\n want: %s", i+1, g, w)
		}
	}
}

func TestConventionsContent(t *testing.T) {
	var b bytes.Buffer
	if err := WriteConventions(&b); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	for _, a := range Registry() {
		if !strings.Contains(doc, "| `"+a.Name+"` |") {
			t.Errorf("CONVENTIONS.md has no row for %s", a.Name)
		}
	}
	for _, s := range Events() {
		if !strings.Contains(doc, "| `"+s.Name.String()+"` |") {
			t.Errorf("CONVENTIONS.md has no row for %s", s.Name)
		}
	}
	for _, want := range []string{
		"| `dev.mcpdrift.call` | server (authoritative) or client | `gen_ai.tool.name`, `dev.mcpdrift.outcome` |",
		"| `dev.mcpdrift.outcome` | enum | `current`, `normalized`, `rejected_stale`, `rejected_incompatible`, `rejected_invalid`, `removed`, `failed` | call | call |",
		"| int | int; string of base-10 digits; double with an integral value — 0 or more: every integer is a count or a duration |",
		"| `service.name` | string (resource) |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("CONVENTIONS.md lacks %q", want)
		}
	}
}

func TestTypeString(t *testing.T) {
	for ty, want := range map[Type]string{TypeString: "string", TypeInt: "int", TypeBool: "bool", TypeEnum: "enum", TypeTimestamp: "timestamp", 0: "", 99: ""} {
		if got := ty.String(); got != want {
			t.Errorf("Type(%d).String() = %q, want %q", ty, got, want)
		}
		if (ty.Accepts() == "") != (want == "") {
			t.Errorf("Type(%d).Accepts() = %q", ty, ty.Accepts())
		}
	}
}

func TestEnumsRoundTrip(t *testing.T) {
	check := func(name string, values []string, parse func(string) (uint8, string, bool)) {
		t.Helper()
		for i, v := range values {
			n, back, ok := parse(v)
			if !ok || int(n) != i+1 || back != v {
				t.Errorf("%s: %q parses to %d (%v), back to %q", name, v, n, ok, back)
			}
		}
		if _, _, ok := parse(""); ok {
			t.Errorf("%s: the empty string parses", name)
		}
		if _, _, ok := parse("nope"); ok {
			t.Errorf("%s: an unknown value parses", name)
		}
	}
	check("Outcome", outcomeNames[1:], func(s string) (uint8, string, bool) { v, ok := ParseOutcome(s); return uint8(v), v.String(), ok })
	check("ChangeClass", changeClassNames[1:], func(s string) (uint8, string, bool) { v, ok := ParseChangeClass(s); return uint8(v), v.String(), ok })
	check("RepairAction", repairActionNames[1:], func(s string) (uint8, string, bool) { v, ok := ParseRepairAction(s); return uint8(v), v.String(), ok })
	check("RepairResult", repairResultNames[1:], func(s string) (uint8, string, bool) { v, ok := ParseRepairResult(s); return uint8(v), v.String(), ok })
	check("Approval", approvalNames[1:], func(s string) (uint8, string, bool) { v, ok := ParseApproval(s); return uint8(v), v.String(), ok })
	check("Privilege", privilegeNames[1:], func(s string) (uint8, string, bool) { v, ok := ParsePrivilege(s); return uint8(v), v.String(), ok })
	check("RefreshResult", refreshResultNames[1:], func(s string) (uint8, string, bool) { v, ok := ParseRefreshResult(s); return uint8(v), v.String(), ok })
	check("EventName", eventNames[1:], func(s string) (uint8, string, bool) { v, ok := ParseEventName(s); return uint8(v), v.String(), ok })
	if Outcome(200).String() != "" || EventName(200).String() != "" {
		t.Error("an out-of-range value has a name")
	}
}
