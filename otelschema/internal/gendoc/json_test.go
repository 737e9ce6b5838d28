package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// TestConventionsJSONUpToDate fails when otelschema/conventions.json is not
// what the registry and mcpgo generate: the other languages read it.
func TestConventionsJSONUpToDate(t *testing.T) {
	want, err := conventionsJSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../conventions.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("otelschema/conventions.json is out of date: run go generate ./otelschema")
	}
	var c conventions
	if err := json.Unmarshal(got, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Attributes) != len(otelschema.Registry()) || len(c.Events) != len(otelschema.Events()) {
		t.Errorf("%d attributes and %d events, want every one of the registry", len(c.Attributes), len(c.Events))
	}
	if c.Meta["revision"] == "" || c.ErrorCodes["stale_tool_schema"] != "STALE_TOOL_SCHEMA" || c.Enums[otelschema.AttrOutcome] == nil {
		t.Errorf("conventions.json lacks the keys other languages need: %+v", c.Meta)
	}
}

// TestAttributeKeys checks that every attribute of the Registry has a key,
// that no two share one, and that attributeKeys names no attribute the
// Registry lacks: other languages find attributes by key.
func TestAttributeKeys(t *testing.T) {
	seen := map[string]string{}
	for _, a := range otelschema.Registry() {
		k := attributeKeys[a.Name]
		if k == "" {
			t.Errorf("attribute %s has no key", a.Name)
			continue
		}
		if other, dup := seen[k]; dup {
			t.Errorf("attributes %s and %s share the key %q", other, a.Name, k)
		}
		seen[k] = a.Name
	}
	if len(attributeKeys) != len(seen) {
		t.Errorf("attributeKeys has %d entries, the Registry %d attributes", len(attributeKeys), len(seen))
	}
}

// TestDigestAnnotations checks the annotation rule read from the Go SDK,
// which mcpgo.Digest follows: members in the SDK's order, the two hints
// without omitempty as defaults.
func TestDigestAnnotations(t *testing.T) {
	a, err := sdkAnnotations()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint", "title"}
	if len(a.Members) != len(want) {
		t.Fatalf("members %v, want %v", a.Members, want)
	}
	for i := range want {
		if a.Members[i] != want[i] {
			t.Fatalf("members %v, want %v", a.Members, want)
		}
	}
	if len(a.Defaults) != 2 || a.Defaults["idempotentHint"] != false || a.Defaults["readOnlyHint"] != false {
		t.Errorf("defaults %v, want idempotentHint and readOnlyHint false", a.Defaults)
	}
}

// TestConventionsMarkdownUpToDate fails when otelschema/CONVENTIONS.md is
// not what gendoc writes: the registry's reference, then the section on
// instrumenting an SDK (whose names are mcpgo's).
func TestConventionsMarkdownUpToDate(t *testing.T) {
	var want bytes.Buffer
	if err := conventionsMarkdown(&want); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../CONVENTIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("otelschema/CONVENTIONS.md is out of date: run go generate ./otelschema")
	}
	for _, s := range []string{"## Instrumenting an MCP SDK, in any language", mcpgo.MetaRetryAfter, mcpgo.CodeToolRemoved, "digests.json", "validation.json"} {
		if !strings.Contains(want.String(), s) {
			t.Errorf("CONVENTIONS.md does not mention %s", s)
		}
	}
}
