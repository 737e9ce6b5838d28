package otelschema

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeAdvertised checks the advertised event's definition: kept as
// it came when it is a JSON object of the event's tool, refused with a
// message naming the attribute otherwise.
func TestDecodeAdvertised(t *testing.T) {
	big := `{"name":"deploy_preview","description":"` + strings.Repeat("x", DefaultLimits().MaxDefinitionBytes) + `"}`
	for _, c := range []struct {
		name, def string
		kind      error
		msg       string // a part of the rejection's message
	}{
		{"valid", `{"name":"deploy_preview","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`, nil, ""},
		{"name only", `{"name":"deploy_preview"}`, nil, ""},
		{"null output schema", `{"name":"deploy_preview","outputSchema":null}`, nil, ""},
		{"not JSON", `{"name":`, ErrMalformedDefinition, "dev.mcpdrift.tool.definition: value of 8 bytes is not a JSON object: unexpected end of JSON input"},
		{"an array", `[1]`, ErrMalformedDefinition, "is not a JSON object"},
		{"no name", `{"inputSchema":{}}`, ErrMalformedDefinition, "want a string name, got nothing"},
		{"numeric name", `{"name":7}`, ErrMalformedDefinition, "want a string name, got 7"},
		{"another tool", `{"name":"deploy"}`, ErrMalformedDefinition, `name "deploy" differs from gen_ai.tool.name "deploy_preview"`},
		{"schema not an object", `{"name":"deploy_preview","inputSchema":"object"}`, ErrMalformedDefinition, `inputSchema must be an object, got "object"`},
		{"oversized", big, ErrTooLong, "dev.mcpdrift.tool.definition: value of 65578 bytes exceeds MaxDefinitionBytes 65536"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ld := logsWith(t, testResource, "dev.mcpdrift.advertised", []kv{
				{AttrToolName, "deploy_preview"}, {AttrRevisionServer, "2"}, {AttrToolDefinition, c.def},
			})
			got, err, _ := decodeOne(t, testDecoder(), ld)
			if c.kind == nil {
				if err != nil {
					t.Fatal(err)
				}
				if got.Name != EventAdvertised || got.Definition != c.def || got.RevisionServer != "2" {
					t.Errorf("decoded %s %q revision %q", got.Name, got.Definition, got.RevisionServer)
				}
				return
			}
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %v, want %v containing %q", err, c.kind, c.msg)
			}
		})
	}
}
