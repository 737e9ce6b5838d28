package mcpgo_test

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/otelschema"
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
	// Algorithm is the advertised revision's, as its form says
	// (otelschema.AlgorithmOf).
	Algorithm string `json:"algorithm"`
	// ToolDigest is the SEP-2636 digest of the tool object as given
	// (ToolDigestJSON): the whole object, without MetaRevision.
	ToolDigest string `json:"tool_digest"`
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
	// SEP-2636's tool digest covers the whole object: a description, a
	// title, icons and _meta change it; key order does not; MetaRevision
	// in _meta does not, because it carries the revision.
	{"whole tool: seed revision 1 with a title", `{"name":"deploy_preview","title":"Deploy a preview","description":"Deploy the current branch to a preview environment.","inputSchema":{"type":"object","properties":{"branch":{"type":"string"}},"required":["branch"],"additionalProperties":false}}`},
	{"whole tool: icons and vendor _meta", `{"name":"run_report","icons":[{"src":"https://example.com/i.png"}],"_meta":{"vendor/x":1},"inputSchema":{"type":"object","properties":{"team":{"type":"string"}},"required":["team"]}}`},
	{"whole tool: the same, its revision the tool digest", `{"_meta":{"vendor/x":1,"dev.mcpdrift/revision":"sha256-jcs-tool:e5e05f866be87a79412880f97e5b181a5009defc49d534d730f8756fe58990dc"},"inputSchema":{"required":["team"],"type":"object","properties":{"team":{"type":"string"}}},"icons":[{"src":"https://example.com/i.png"}],"name":"run_report"}`},
	{"whole tool: a declared revision only in _meta", `{"name":"notify","inputSchema":{"type":"object"},"_meta":{"dev.mcpdrift/revision":"v2"}}`},
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
		td, err := mcpgo.ToolDigestJSON([]byte(v.tool))
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		want.Vectors = append(want.Vectors, digestVector{Name: v.name, Tool: json.RawMessage(v.tool), Digest: d, Advertised: a,
			Algorithm: string(otelschema.AlgorithmOf(a)), ToolDigest: td})
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
		if h := have.Vectors[i]; h.Name != v.Name || h.Digest != v.Digest || h.Advertised != v.Advertised || h.Algorithm != v.Algorithm || h.ToolDigest != v.ToolDigest {
			t.Errorf("vector %q: file says %s / %s / %s / %s, mcpgo computes %s / %s / %s / %s", v.Name,
				h.Digest, h.Advertised, h.Algorithm, h.ToolDigest, v.Digest, v.Advertised, v.Algorithm, v.ToolDigest)
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
	// The whole-tool digest, case by case.
	td := func(i int) string { return want.Vectors[i].ToolDigest }
	if td(0) == td(1) || td(0) == td(14) || td(1) == td(2) {
		t.Error("a description or a title did not change the tool digest")
	}
	if td(15) != td(16) {
		t.Error("key order or mcpdrift's revision key in _meta changed the tool digest")
	}
	if td(8) == td(7) || td(8) != td(15) {
		t.Error("icons and vendor _meta did not change the tool digest")
	}
	if td(13) != td(17) {
		t.Error("a _meta holding only the revision changed the tool digest")
	}
	if r, err := mcpgo.ToolRevision(td(15)); err != nil || want.Vectors[16].Advertised != r {
		t.Errorf("vector 16 advertises %s; its tool digest's revision is %s (%v)", want.Vectors[16].Advertised, r, err)
	}
	for i, alg := range map[int]otelschema.RevisionAlgorithm{0: otelschema.AlgorithmV1, 7: otelschema.AlgorithmDeclared, 16: otelschema.AlgorithmTool, 17: otelschema.AlgorithmDeclared} {
		if got := want.Vectors[i].Algorithm; got != string(alg) {
			t.Errorf("vector %q: algorithm %s, want %s", want.Vectors[i].Name, got, alg)
		}
	}
	// Served by the Go SDK, a tool that round-trips unchanged has the
	// digest of its object as given.
	for _, i := range []int{0, 14, 15} {
		var tool mcp.Tool
		if err := json.Unmarshal([]byte(vectorTools[i].tool), &tool); err != nil {
			t.Fatal(err)
		}
		if got, err := mcpgo.ToolDigest(&tool); err != nil || got != td(i) {
			t.Errorf("vector %q: ToolDigest %s (%v), of the object as given %s", vectorTools[i].name, got, err, td(i))
		}
	}
}

func TestToolRevision(t *testing.T) {
	const hex = "615fd8f5d62bd3b04da6e6d665be42d48c0b3aeb51f5184674cf5a598a86db9d"
	if r, err := mcpgo.ToolRevision("sha256:" + hex); err != nil || r != "sha256-jcs-tool:"+hex {
		t.Errorf("ToolRevision = %q, %v", r, err)
	}
	for _, bad := range []string{"", "2", "sha256:" + hex[:10], "sha256-jcs-tool:" + hex, "SHA256:" + hex} {
		if r, err := mcpgo.ToolRevision(bad); err == nil {
			t.Errorf("ToolRevision(%q) = %q, want an error", bad, r)
		}
	}
	if s := mcpgo.Short("sha256-jcs-tool:" + hex); s != hex[:12] {
		t.Errorf("Short = %q", s)
	}
	for _, bad := range []string{`[]`, `null`, `"x"`, `{"name":1e400}`} {
		if d, err := mcpgo.ToolDigestJSON([]byte(bad)); err == nil {
			t.Errorf("ToolDigestJSON(%s) = %s, want an error", bad, d)
		}
	}
}
