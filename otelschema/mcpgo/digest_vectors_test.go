package mcpgo_test

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

var updateVectors = flag.Bool("update-vectors", false, "rewrite otelschema/testdata/digests.json from mcpgo.Digest")

// digestVectors is otelschema/testdata/digests.json: tool definitions and
// the revisions mcpgo computes for them. Every instrumentation of the
// project reads the same file, so that a TypeScript server and a Go client
// (or the reverse) agree on every digest.
type digestVectors struct {
	Comment string         `json:"comment"`
	Vectors []digestVector `json:"vectors"`
}

type digestVector struct {
	Name string `json:"name"`
	// Tool is the definition as a tools/list result carries it.
	Tool json.RawMessage `json:"tool"`
	// Digest is its Digest; Advertised what a client plans with (its
	// explicit revision in _meta, else the digest).
	Digest     string `json:"digest"`
	Advertised string `json:"advertised"`
}

const vectorsPath = "../testdata/digests.json"

// vectorTools are the cases: what the digest covers, and what it ignores.
var vectorTools = []struct{ name, tool string }{
	{"seed deploy_preview revision 1", `{"name":"deploy_preview","description":"Deploy the current branch to a preview environment.","inputSchema":{"type":"object","properties":{"branch":{"type":"string"}},"required":["branch"],"additionalProperties":false}}`},
	{"same definition, other description and title", `{"name":"deploy_preview","title":"Deploy a preview","description":"Another text.","inputSchema":{"type":"object","properties":{"branch":{"type":"string"}},"required":["branch"],"additionalProperties":false}}`},
	{"keys in another order", `{"inputSchema":{"additionalProperties":false,"required":["branch"],"properties":{"branch":{"type":"string"}},"type":"object"},"name":"deploy_preview"}`},
	{"seed deploy_preview revision 2", `{"name":"deploy_preview","inputSchema":{"type":"object","properties":{"branch":{"type":"string"},"region":{"type":"string","enum":["us-east-preview","eu-preview"]}},"required":["branch","region"],"additionalProperties":false}}`},
	{"output schema and annotations", `{"name":"create_issue","inputSchema":{"type":"object","properties":{"title":{"type":"string"}}},"outputSchema":{"type":"object","properties":{"issue":{"type":"object","properties":{"id":{"type":"string"},"url":{"type":"string","format":"uri"},"state":{"type":"string"}}}}},"annotations":{"destructiveHint":false,"idempotentHint":true,"readOnlyHint":false}}`},
	{"numbers in canonical form", `{"name":"paginate","inputSchema":{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":1000,"default":100},"ratio":{"type":"number","multipleOf":0.25,"exclusiveMaximum":1e3}}}}`},
	{"non-ASCII and escapes", `{"name":"traducir","inputSchema":{"type":"object","properties":{"texto":{"type":"string","description":"Texto en español: ñ, ü, \u20ac, \"comillas\" y 😀"}}}}`},
	{"explicit revision in _meta", `{"name":"run_report","_meta":{"dev.mcpdrift/revision":"7"},"inputSchema":{"type":"object","properties":{"team":{"type":"string"}},"required":["team"]}}`},
	{"icons and _meta ignored", `{"name":"run_report","icons":[{"src":"https://example.com/i.png"}],"_meta":{"vendor/x":1},"inputSchema":{"type":"object","properties":{"team":{"type":"string"}},"required":["team"]}}`},
	// The annotations as the SDK encodes them: idempotentHint and
	// readOnlyHint always (false when absent), the other members when set,
	// an empty title and members the SDK does not know left out.
	{"annotations with a default left out", `{"name":"notify","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`},
	{"annotations with an empty title and an unknown member", `{"name":"notify","inputSchema":{"type":"object"},"annotations":{"idempotentHint":false,"readOnlyHint":true,"title":"","x-vendor":"a","openWorldHint":null}}`},
	{"annotations with every member", `{"name":"notify","inputSchema":{"type":"object"},"annotations":{"title":"Notify","openWorldHint":false,"destructiveHint":true,"idempotentHint":true,"readOnlyHint":false}}`},
	{"null output schema", `{"name":"notify","inputSchema":{"type":"object"},"outputSchema":null}`},
	{"no annotations", `{"name":"notify","inputSchema":{"type":"object"}}`},
}

func TestDigestVectors(t *testing.T) {
	var want digestVectors
	want.Comment = "Tool definitions and their revisions, computed by otelschema/mcpgo (go test ./otelschema/mcpgo -run TestDigestVectors -update-vectors). Every instrumentation's tests read this file."
	for _, v := range vectorTools {
		var tool mcp.Tool
		if err := json.Unmarshal([]byte(v.tool), &tool); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		d, err := mcpgo.Digest(&tool)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		a, err := mcpgo.Advertised(&tool)
		if err != nil {
			t.Fatal(err)
		}
		want.Vectors = append(want.Vectors, digestVector{Name: v.name, Tool: json.RawMessage(v.tool), Digest: d, Advertised: a})
	}
	b, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *updateVectors {
		if err := os.WriteFile(vectorsPath, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	var have digestVectors
	if err := json.Unmarshal(got, &have); err != nil {
		t.Fatal(err)
	}
	if len(have.Vectors) != len(want.Vectors) {
		t.Fatalf("%s has %d vectors, mcpgo computes %d (run with -update-vectors)", vectorsPath, len(have.Vectors), len(want.Vectors))
	}
	for i, v := range want.Vectors {
		if h := have.Vectors[i]; h.Name != v.Name || h.Digest != v.Digest || h.Advertised != v.Advertised {
			t.Errorf("vector %q: file says %s / %s, mcpgo computes %s / %s", v.Name, h.Digest, h.Advertised, v.Digest, v.Advertised)
		}
	}
	// What the digest ignores and covers, as the cases name it.
	d := func(i int) string { return want.Vectors[i].Digest }
	if d(0) != d(1) || d(0) != d(2) {
		t.Error("description, title or key order changed the digest")
	}
	if d(0) == d(3) {
		t.Error("revision 2's input schema did not change the digest")
	}
	if want.Vectors[7].Advertised != "7" || d(7) != d(8) {
		t.Error("an explicit revision is advertised; _meta and icons do not change the digest")
	}
	if d(9) != d(10) || d(9) == d(11) || d(9) == d(13) {
		t.Error("the annotations are not digested as the SDK encodes them")
	}
	if d(12) != d(13) {
		t.Error("a null output schema changed the digest")
	}
}
