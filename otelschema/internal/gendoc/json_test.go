package main

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/mcpdrift/mcpdrift/otelschema"
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
