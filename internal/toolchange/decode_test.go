package toolchange

import (
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

func TestDecode(t *testing.T) {
	const tool = `{"name":"deploy_preview","inputSchema":{"type":"object","properties":{"branch":{"type":"string"}}}}`
	for _, doc := range []string{
		`{"tools":[` + tool + `]}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tool + `]}}`,
		`[` + tool + `]`,
	} {
		l, err := Decode([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if len(l.Tools) != 1 || l.Tools[0].Name != "deploy_preview" {
			t.Fatalf("%s: decoded %+v", doc, l)
		}
	}

	bad := []struct{ doc, want string }{
		{`{}`, `no "tools" array`},
		{`{"tools":[{"inputSchema":{}}]}`, "tool 0: no name"},
		{`{"tools":[{"name":"a"}]}`, `tool "a": no inputSchema`},
		{`{"tools":[{"name":"a","inputSchema":[]}]}`, "inputSchema: a array, not an object"},
		{`{"tools":[{"name":"a","inputSchema":{}},{"name":"a","inputSchema":{}}]}`, `tools 0 and 1 are both named "a"`},
		{`{"tools":[],"nextCursor":"p2"}`, "more pages"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`, "JSON-RPC error"},
		{"{\"tools\":[{\"name\":\"\xff\"}]}", "UTF-8"},
	}
	for _, b := range bad {
		_, err := Decode([]byte(b.doc))
		if !errors.Is(err, ErrInvalidList) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Decode(%s) = %v, want ErrInvalidList with %q", b.doc, err, b.want)
		}
	}
}

// TestDecodeRevision checks that the revision is the one the
// instrumentation advertises: the explicit _meta revision, else the digest.
func TestDecodeRevision(t *testing.T) {
	l, err := Decode([]byte(`{"tools":[
		{"name":"a","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
		{"name":"b","inputSchema":{"type":"object"},"_meta":{"` + mcpgo.MetaRevision + `":"7"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want, err := mcpgo.Digest(&mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}})
	if err != nil {
		t.Fatal(err)
	}
	if l.Tools[0].Revision != want {
		t.Errorf("revision of a = %s, want the digest %s", l.Tools[0].Revision, want)
	}
	if l.Tools[1].Revision != "7" {
		t.Errorf("revision of b = %s, want the explicit 7", l.Tools[1].Revision)
	}
}

// FuzzDecode decodes arbitrary documents; whatever decodes compares
// unchanged with itself and removed against an empty list, without
// panicking.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"b":{"type":"string","enum":["x"]}},"required":["b"]}}]}`,
		`{"result":{"tools":[{"name":"a","inputSchema":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/x"}],"$defs":{"x":{"type":"integer","minimum":1}}},"outputSchema":{"type":"object","properties":{"id":{"type":"string"}}},"annotations":{"readOnlyHint":true}}]}}`,
		`[{"name":"a","inputSchema":{"type":"object","additionalProperties":false,"properties":{"o":{"type":"array","items":{"type":"number","multipleOf":0.5}}}}}]`,
		`[{"name":"a","inputSchema":{"type":"object","properties":{"x":{"type":"string","maxLength":5}},"required":["x"]}},` +
			`{"name":"b","inputSchema":{"type":"object","properties":{"x":{"type":["string","null"]},"y":{"type":"integer","minimum":0}},"additionalProperties":false}}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidList) {
				t.Fatalf("error %v is not ErrInvalidList", err)
			}
			return
		}
		for _, c := range Compare(l, l, Options{}).Tools {
			if c.Status != StatusUnchanged || c.Verdict != VerdictSafe {
				t.Fatalf("%s compared with itself: %s, %s (%s)", c.Tool, c.Status, c.Verdict, c.Reason)
			}
		}
		r := Compare(l, List{}, Options{})
		if len(r.Tools) != len(l.Tools) {
			t.Fatalf("%d tools removed, want %d", len(r.Tools), len(l.Tools))
		}
		// Each tool's definition against the next one's, under its name:
		// the prover and the witness search on arbitrary pairs.
		rotated := List{Tools: make([]Tool, len(l.Tools))}
		for i, tl := range l.Tools {
			next := l.Tools[(i+1)%len(l.Tools)]
			next.Name = tl.Name
			rotated.Tools[i] = next
		}
		r = Compare(l, rotated, Options{})
		var sb strings.Builder
		if err := r.Markdown(&sb); err != nil {
			t.Fatal(err)
		}
		// A proof is checked against the validator: no sample of the old
		// schema it accepts may be refused by the new one.
		for i, c := range r.Tools {
			if c.OldArguments == nil || c.OldArguments.Answer != AnswerYes {
				continue
			}
			from, to := l.Tools[i].Input, rotated.Tools[i].Input
			vf, errF := compile(from)
			vt, errT := compile(to)
			if errF != nil || errT != nil {
				continue
			}
			for _, x := range candidates(from, 0) {
				if vf.ValidateValue(x) == nil && vt.ValidateValue(x) != nil {
					t.Fatalf("%s: proved compatible, but %s passes the old schema and not the new one", c.Tool, show(x))
				}
			}
		}
	})
}

// TestAnnotationDefaults: a hint spelled out at its default is no change
// (the Go SDK lists idempotentHint false where the document had none).
func TestAnnotationDefaults(t *testing.T) {
	old, err := Decode([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	new, err := Decode([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"idempotentHint":false,"openWorldHint":true}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := Compare(old, new, Options{}).Tools[0]; c.Status != StatusUnchanged {
		t.Errorf("defaults spelled out: %s (%+v)", c.Status, c.Findings)
	}
}
