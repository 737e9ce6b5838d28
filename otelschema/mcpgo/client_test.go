package mcpgo_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// TestDigest checks that the revision digest ignores presentation and key
// order, changes with the contract, and that a client computes the same
// digest from the listed definition as the server from its own.
func TestDigest(t *testing.T) {
	a := &mcp.Tool{Name: "deploy_preview", Description: "one", InputSchema: json.RawMessage(`{"type":"object","required":["branch"],"properties":{"branch":{"type":"string"}}}`)}
	b := &mcp.Tool{Name: "deploy_preview", Description: "two", Title: "Deploy", InputSchema: map[string]any{
		"properties": map[string]any{"branch": map[string]any{"type": "string"}}, "type": "object", "required": []any{"branch"}}}
	c := &mcp.Tool{Name: "deploy_preview", InputSchema: json.RawMessage(`{"type":"object","required":["branch","region"],"properties":{"branch":{"type":"string"}}}`)}
	da, err := mcpgo.Digest(a)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := mcpgo.Digest(b)
	dc, _ := mcpgo.Digest(c)
	if da != db || da == dc || !strings.HasPrefix(da, mcpgo.DigestPrefix) || len(da) != len(mcpgo.DigestPrefix)+64 {
		t.Errorf("digests %s %s %s", da, db, dc)
	}
	if s := mcpgo.Short(da); len(s) != 12 || !strings.HasPrefix(da, mcpgo.DigestPrefix+s) || mcpgo.Short("7") != "7" {
		t.Errorf("Short(%s) = %s", da, s)
	}

	// Without an explicit revision, the server advertises the digest and
	// the client's snapshot holds the same one.
	f := newFixture(t)
	ro := true
	tool := &mcp.Tool{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","maxLength":1e3}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &ro}}
	if err := f.drift.AddTool(tool, okHandler, mcpgo.Contract{}); err != nil {
		t.Fatal(err)
	}
	want, _ := mcpgo.Digest(tool)
	if got, _ := f.drift.Revision("lookup"); got != want {
		t.Errorf("server revision %s, want %s", got, want)
	}
	lr, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := *lr.Tools[0]
	listed.Meta = nil // recompute from the definition alone
	if got, _ := mcpgo.Digest(&listed); got != want {
		t.Errorf("client digest %s, want the server's %s", got, want)
	}
	if got, _ := f.agent.Revision(f.cs, "lookup"); got != want {
		t.Errorf("snapshot revision %s, want %s", got, want)
	}
}

func TestSafeRetry(t *testing.T) {
	ctx := context.Background()
	tool := func(props string, required ...string) *mcp.Tool {
		return &mcp.Tool{Name: "deploy", InputSchema: json.RawMessage(`{"type":"object","properties":{` + props +
			`},"required":["` + strings.Join(required, `","`) + `"],"additionalProperties":false}`)}
	}
	stale := mcpgo.Rejection{ErrorCode: mcpgo.CodeStaleToolSchema, ChangeClass: otelschema.ChangeClassBoundedMigration}
	call := &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"branch": "x"}}
	f := func(name string, r mcpgo.RepairRequest, want otelschema.RepairAction, wantArgs string) {
		t.Helper()
		d, err := mcpgo.SafeRetry(nil)(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(d.Arguments)
		if d.Action != want || (wantArgs != "" && string(args) != wantArgs) {
			t.Errorf("%s: decision %v %s, want %v %s", name, d.Action, args, want, wantArgs)
		}
	}
	f("default filled", mcpgo.RepairRequest{Call: call, Rejection: stale,
		Tool: tool(`"branch":{},"region":{"default":"us-east-preview"}`, "branch", "region")},
		otelschema.RepairActionRefreshRetry, `{"branch":"x","region":"us-east-preview"}`)
	f("no default", mcpgo.RepairRequest{Call: call, Rejection: stale, Tool: tool(`"branch":{},"region":{}`, "branch", "region")},
		otelschema.RepairActionAbandon, "")
	f("sensitive default", mcpgo.RepairRequest{Call: call, Rejection: stale,
		Tool: tool(`"branch":{},"environment":{"default":"production"}`, "branch", "environment")}, otelschema.RepairActionAbandon, "")
	sideEffect := stale
	sideEffect.SideEffectStarted = true
	f("side effect", mcpgo.RepairRequest{Call: call, Rejection: sideEffect, Tool: tool(`"branch":{}`, "branch")}, otelschema.RepairActionAbandon, "")
	authority := stale
	authority.ChangeClass = otelschema.ChangeClassAuthority
	f("authority", mcpgo.RepairRequest{Call: call, Rejection: authority, Tool: tool(`"branch":{}`, "branch")}, otelschema.RepairActionAbandon, "")
	unstated := stale
	unstated.ChangeClass = otelschema.ChangeClassUnspecified
	f("class unknown", mcpgo.RepairRequest{Call: call, Rejection: unstated,
		Tool: tool(`"branch":{},"region":{"default":"us-east-preview"}`, "branch", "region")}, otelschema.RepairActionAbandon, "")
	additive := stale
	additive.ChangeClass = otelschema.ChangeClassAdditive
	f("additive", mcpgo.RepairRequest{Call: call, Rejection: additive, Tool: tool(`"branch":{}`, "branch")},
		otelschema.RepairActionRefreshRetry, `{"branch":"x"}`)
	f("field dropped", mcpgo.RepairRequest{Call: call, Rejection: stale, Tool: tool(`"ref":{}`, "ref")}, otelschema.RepairActionAbandon, "")
	f("tool gone", mcpgo.RepairRequest{Call: call, Rejection: stale}, otelschema.RepairActionAbandon, "")

	asked := mcpgo.SafeRetry(func(context.Context, mcpgo.RepairRequest) (any, otelschema.Approval, error) {
		return nil, otelschema.ApprovalDenied, nil
	})
	d, err := asked(ctx, mcpgo.RepairRequest{Call: call, Rejection: authority, Tool: tool(`"branch":{}`, "branch")})
	if err != nil || d.Action != otelschema.RepairActionHumanApproval || d.Approval != otelschema.ApprovalDenied {
		t.Errorf("asked decision %+v %v", d, err)
	}
}

// TestRepairAbandon checks that a call the policy will not retry is not
// retried, and that the repair event says so.
func TestRepairAbandon(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	if err := fx.drift.AddTool(&mcp.Tool{Name: "deploy", InputSchema: schema("team")}, okHandler, mcpgo.Contract{Revision: "1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	call := &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"team": "a"}}
	ran := 0
	if err := fx.drift.AddTool(&mcp.Tool{Name: "deploy", InputSchema: schema("project")},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ran++
			return okHandler(nil, nil)
		},
		mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassAuthority}); err != nil {
		t.Fatal(err)
	}
	res := fx.call(t, call) // sent without Plan: stamped when sent
	out, err := fx.agent.Repair(ctx, fx.cs, call, res, mcpgo.SafeRetry(nil))
	if out != res || err == nil || !strings.Contains(err.Error(), "abandon") || ran != 0 {
		t.Fatalf("Repair = %v, %v (handler ran %d times): want the rejection, ErrNoRetry", out, err, ran)
	}
	calls := fx.rec.named("dev.mcpdrift.call")
	repairs := fx.rec.named("dev.mcpdrift.repair")
	if len(calls) != 1 || len(repairs) != 1 {
		t.Fatalf("calls %v repairs %v", calls, repairs)
	}
	checkAttrs(t, repairs[0], map[string]string{"dev.mcpdrift.repair.action": "abandon", "dev.mcpdrift.repair.result": "failure",
		"dev.mcpdrift.repair.automatic": "false", "dev.mcpdrift.retry.of": calls[0]["jsonrpc.request.id"], "dev.mcpdrift.revision.client": "1",
		"dev.mcpdrift.error.code": mcpgo.CodeStaleToolSchema, "dev.mcpdrift.change.class": "authority", "dev.mcpdrift.run.id": "run-test"})
	if repairs[0]["dev.mcpdrift.retry.of"] == "" {
		t.Error("the repair does not name the rejected call")
	}
}
