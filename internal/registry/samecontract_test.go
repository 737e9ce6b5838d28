package registry_test

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
	"github.com/mcpdrift/mcpdrift/queries"
)

// TestSameContract checks which pairs of stored revisions are one
// contract under two names: only a v1 digest followed by a declared tool
// digest whose stored definition has that v1 digest, as mcpgo's server
// admits a call (its sameContract). The reports (ChangeOf) take the pair
// for not stale only when the registry also finds no change: a new
// description keeps the v1 digest, and the server runs the call, but the
// check reads it as a semantic change. The revisions are computed by
// mcpgo from real SDK tools, the definitions stored as mcpgo.Definition
// writes them.
func TestSameContract(t *testing.T) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Deploy"}
	tool := func(desc string, schema json.RawMessage, ann *mcp.ToolAnnotations) *mcp.Tool {
		return &mcp.Tool{Name: "deploy_preview", Description: desc, InputSchema: schema, Annotations: ann}
	}
	base := tool("Deploy a branch.", deploySchema("", "branch"), readOnly)
	row := func(tl *mcp.Tool, form string) queries.ToolRevisionRow {
		t.Helper()
		def, err := mcpgo.Definition(tl)
		if err != nil {
			t.Fatal(err)
		}
		var rev string
		switch form {
		case "v1":
			rev, err = mcpgo.Digest(tl)
		case "tool":
			var td string
			if td, err = mcpgo.ToolDigest(tl); err == nil {
				rev, err = mcpgo.ToolRevision(td)
			}
		default:
			rev = form
		}
		if err != nil {
			t.Fatal(err)
		}
		return queries.ToolRevisionRow{Tool: tl.Name, Revision: rev, Definition: def}
	}
	for _, c := range []struct {
		name     string
		old, new queries.ToolRevisionRow
		want     bool
		notStale bool // ChangeOf's SameContract
	}{
		{"v1 then the tool digest of the same definition", row(base, "v1"), row(base, "tool"), true, true},
		{"only the description differs, which v1 does not read", row(base, "v1"), row(tool("Deploy any branch.", deploySchema("", "branch"), readOnly), "tool"), true, false},
		{"the tool digest then v1: never the server's case", row(base, "tool"), row(base, "v1"), false, false},
		{"a required argument added", row(base, "v1"), row(tool("Deploy a branch.", deploySchema(`,"region":{"type":"string"}`, "branch", "region"), readOnly), "tool"), false, false},
		{"annotations differ", row(base, "v1"), row(tool("Deploy a branch.", deploySchema("", "branch"), nil), "tool"), false, false},
		{"two v1 digests", row(base, "v1"), row(tool("Deploy a branch.", deploySchema(`,"region":{"type":"string"}`, "branch"), readOnly), "v1"), false, false},
		{"an explicit name", row(base, "v1"), row(base, "2"), false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := registry.SameContract(c.old, c.new); got != c.want {
				t.Errorf("SameContract(%s, %s) = %t, want %t", c.old.Revision, c.new.Revision, got, c.want)
			}
			ch, err := registry.ChangeOf(c.old, c.new)
			if err != nil {
				t.Fatal(err)
			}
			if ch.SameContract != c.notStale {
				t.Errorf("ChangeOf: %+v, want SameContract %t", ch, c.notStale)
			}
		})
	}
}
