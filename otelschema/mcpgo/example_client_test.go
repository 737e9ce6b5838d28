package mcpgo_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// Example_stalePlan runs the seed's client duties in memory. The client
// lists deploy_preview at revision 1 and prepares {"branch":"fix-login"};
// the server moves to revision 2, where region is required, and notifies.
// The client lists again by itself; the prepared call, sent right after
// the notification, waits for that list, fails revision 2's schema and is
// held back: no request reaches the server, the caller gets a repairable
// StalePlanError, and the client's call event is the call's only one.
func Example_stalePlan() {
	ctx := context.Background()
	out := &lines{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(out)))
	defer lp.Shutdown(ctx)

	var runs atomic.Int64
	deploy := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		runs.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deploying"}}}, nil
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "deploy", Version: "1.0.0"}, nil)
	drift := mcpgo.NewServer(srv, &mcpgo.ServerOptions{LoggerProvider: lp})
	if err := drift.AddTool(&mcp.Tool{Name: "deploy_preview", InputSchema: deploySchema("", "branch")}, deploy,
		mcpgo.Contract{Revision: "1", Privilege: otelschema.PrivilegeWrite}); err != nil {
		panic(err)
	}
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0.9.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	agent := mcpgo.NewClient(client, &mcpgo.ClientOptions{LoggerProvider: lp, RunID: "run-1"})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		panic(err)
	}
	defer ss.Close()
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	// Changes are announced to this session once the server has
	// registered its subscription.
	if err := agent.Subscribed(ctx, cs); err != nil {
		panic(err)
	}

	if _, err := cs.ListTools(ctx, nil); err != nil {
		panic(err)
	}
	planned := agent.Plan(cs, &mcp.CallToolParams{Name: "deploy_preview", Arguments: map[string]any{"branch": "fix-login"}})
	if err := drift.AddTool(&mcp.Tool{Name: "deploy_preview", InputSchema: deploySchema("", "branch", "region")}, deploy,
		mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassBoundedMigration, Privilege: otelschema.PrivilegeWrite}); err != nil {
		panic(err)
	}
	<-changed

	_, err = cs.CallTool(ctx, planned)
	var stale *mcpgo.StalePlanError
	if !errors.As(err, &stale) {
		panic(err)
	}
	fmt.Printf("held back: %s planned with %s, now %s, missing %v\n", stale.Tool, stale.PlannedRevision, stale.CurrentRevision, stale.Missing)
	fmt.Println("handler runs:", runs.Load())
	fmt.Println("for the model:", stale.Result().Content[0].(*mcp.TextContent).Text)
	out.print()
	// Output:
	// held back: deploy_preview planned with 1, now 2, missing [region]
	// handler runs: 0
	// for the model: deploy_preview changed since this call was planned (revision 1, now 2); the call was not sent. Refresh tools before retrying. The current schema requires branch and region. Missing: region. No side effect was started.
	// dev.mcpdrift.advertised gen_ai.tool.name=deploy_preview revision.server=1
	// dev.mcpdrift.advertised gen_ai.tool.name=deploy_preview revision.server=2
	// dev.mcpdrift.call gen_ai.tool.name=deploy_preview outcome=rejected_stale revision.client=1 revision.server=2 error.code=STALE_TOOL_SCHEMA external.requests=0
	// dev.mcpdrift.list_changed
	// dev.mcpdrift.list_changed gen_ai.tool.name=deploy_preview revision.server=2 revision.before=1 revision.after=2
	// dev.mcpdrift.refresh gen_ai.tool.name=deploy_preview revision.after=1
	// dev.mcpdrift.refresh gen_ai.tool.name=deploy_preview revision.before=1 revision.after=2
}
