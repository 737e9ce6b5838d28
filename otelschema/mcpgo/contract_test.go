package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

func TestLookupPath(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{
		"issue": {"id": "I-482", "state": {"name": "open"}, "labels": ["bug", "login"], "closed": null, "count": 0, "draft": false},
		"items": [{"id": 1}, {"id": 2}],
		"a.b": {"c": "dotted"},
		"back\\slash": "bs",
		"0": "zero key",
		"": {"": "empty keys"}
	}`), &doc); err != nil {
		t.Fatal(err)
	}
	type issue struct {
		ID    string `json:"id"`
		State string `json:"state,omitempty"`
	}
	f := func(v any, path string, want any, wantOK bool) {
		t.Helper()
		got, ok := mcpgo.LookupPath(v, path)
		if ok != wantOK || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("LookupPath(%q) = %v, %v; want %v, %v", path, got, ok, want, wantOK)
		}
	}
	f(doc, "issue.id", "I-482", true)
	f(doc, "issue.state.name", "open", true)
	f(doc, "issue.state", map[string]any{"name": "open"}, true)
	f(doc, "issue.issueId", nil, false)     // renamed
	f(doc, "issue.id.value", nil, false)    // through a string
	f(doc, "issue.closed", nil, false)      // null counts as absent
	f(doc, "issue.count", 0, true)          // zero is a value
	f(doc, "issue.draft", false, true)      // so is false
	f(doc, "issue.labels.1", "login", true) // an array index
	f(doc, "issue.labels.2", nil, false)    // out of range
	f(doc, "issue.labels.01", nil, false)   // not an index: leading zero
	f(doc, "issue.labels.-1", nil, false)
	f(doc, "issue.labels.x", nil, false)
	f(doc, "items.1.id", 2, true)
	f(doc, "0", "zero key", true) // digits on an object are a key
	f(doc, `a\.b.c`, "dotted", true)
	f(doc, "a.b.c", nil, false) // unescaped: key "a", then "b"
	f(doc, `back\\slash`, "bs", true)
	f(doc, ".", "empty keys", true) // the key "" of the key ""
	f(doc, "", doc, true)           // the structured content itself
	f(nil, "", nil, false)          // no structured content
	f(nil, "issue.id", nil, false)
	f([]any{"x"}, "0", "x", true)
	// Values that are not decoded JSON are read as their JSON.
	f(map[string]any{"issue": issue{ID: "I-7"}}, "issue.id", "I-7", true)
	f(issue{ID: "I-7"}, "state", nil, false)
	f(json.RawMessage(`{"issue":{"id":"I-9"}}`), "issue.id", "I-9", true)
}

// TestContractTextOnly checks that a result with text only lacks every
// needed field (text is no contract), that the event per field carries the
// revisions, and that an error result or a result with every field is left
// alone.
func TestContractTextOnly(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	var structured any
	isError := false
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: "Created issue I-482 (open)."}},
			StructuredContent: structured, Meta: mcp.Meta{mcpgo.MetaRevision: "4"}}, nil
	}
	if err := f.drift.AddTool(&mcp.Tool{Name: "create_issue", InputSchema: schema()}, handler, mcpgo.Contract{Revision: "4"}); err != nil {
		t.Fatal(err)
	}
	if err := f.agent.Refresh(ctx, f.cs); err != nil {
		t.Fatal(err)
	}
	call := func() (*mcp.CallToolParams, *mcp.CallToolResult, error) {
		p := f.agent.Plan(f.cs, &mcp.CallToolParams{Name: "create_issue", Arguments: map[string]any{}}, mcpgo.Needs("issue.id"), mcpgo.Needs("issue.state"))
		res, err := f.cs.CallTool(ctx, p)
		return p, res, err
	}

	p, res, err := call()
	var ce *mcpgo.ContractError
	if !errors.As(err, &ce) || res != nil {
		t.Fatalf("CallTool = %v, %v: want a ContractError", res, err)
	}
	if !slices.Equal(ce.Missing, []string{"issue.id", "issue.state"}) || ce.Result == nil || ce.ServerRevision != "4" || ce.PlannedRevision != "4" {
		t.Errorf("contract error %+v", ce)
	}
	if want := `create_issue result (request ` + ce.RequestID + `, planned with revision 4, server revision 4) has no structured content, so it lacks "issue.id" and "issue.state", which the plan needs`; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("error %q, want it to start %q", err, want)
	}
	evs := f.rec.named("dev.mcpdrift.contract_error")
	if len(evs) != 2 {
		t.Fatalf("contract errors %v, want one per missing field", evs)
	}
	for i, field := range []string{"issue.id", "issue.state"} {
		checkAttrs(t, evs[i], map[string]string{"dev.mcpdrift.contract.field": field, "gen_ai.tool.name": "create_issue",
			"jsonrpc.request.id": p.Meta[mcpgo.MetaRequestID].(string), "dev.mcpdrift.revision.client": "4", "dev.mcpdrift.revision.server": "4",
			"dev.mcpdrift.revision.client.source": "declared", "dev.mcpdrift.run.id": "run-test", "dev.mcpdrift.client.name": "agent"})
	}

	// Every field there: no error, no event.
	structured = map[string]any{"issue": map[string]any{"id": "I-482", "state": "open"}}
	if _, res, err = call(); err != nil || res == nil {
		t.Errorf("CallTool = %v, %v: want the result", res, err)
	}
	// An error result: the plan's next step does not run anyway.
	structured, isError = nil, true
	if _, res, err = call(); err != nil || res == nil || !res.IsError {
		t.Errorf("CallTool = %v, %v: want the error result", res, err)
	}
	if n := len(f.rec.named("dev.mcpdrift.contract_error")); n != 2 {
		t.Errorf("%d contract errors, want still 2", n)
	}
	// A call planned without Needs is not checked.
	isError = false
	if _, err := f.cs.CallTool(ctx, f.agent.Plan(f.cs, &mcp.CallToolParams{Name: "create_issue", Arguments: map[string]any{}})); err != nil {
		t.Errorf("CallTool without needs: %v", err)
	}
	if n := len(f.rec.named("dev.mcpdrift.contract_error")); n != 2 {
		t.Errorf("%d contract errors, want still 2", n)
	}

	// A retry needs what the call it retries needed: the server rejects
	// the planned call as stale, Repair retries it, and the retry's
	// result is checked.
	if err := f.drift.AddTool(&mcp.Tool{Name: "create_issue", InputSchema: schema()}, handler,
		mcpgo.Contract{Revision: "5", Change: otelschema.ChangeClassAdditive}); err != nil {
		t.Fatal(err)
	}
	p, res, err = call()
	if _, ok := mcpgo.ParseRejection(res); !ok || err != nil {
		t.Fatalf("CallTool = %v, %v: want the server's stale rejection", res, err)
	}
	retry := func(context.Context, mcpgo.RepairRequest) (mcpgo.Decision, error) {
		return mcpgo.Decision{Action: otelschema.RepairActionRefreshRetry, Arguments: map[string]any{}}, nil
	}
	_, err = f.agent.Repair(ctx, f.cs, p, res, retry)
	if !errors.As(err, &ce) || !slices.Equal(ce.Missing, []string{"issue.id", "issue.state"}) || ce.RequestID == p.Meta[mcpgo.MetaRequestID] {
		t.Errorf("Repair error %v (%+v): want the retry's ContractError", err, ce)
	}
	if evs := f.rec.named("dev.mcpdrift.contract_error"); len(evs) != 4 || evs[3]["jsonrpc.request.id"] != ce.RequestID {
		t.Errorf("contract errors %v, want the retry's two more", evs)
	}
}
