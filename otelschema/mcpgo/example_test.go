package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// lines is an OpenTelemetry log exporter that keeps one line per drift
// event: its name and the attributes listed in show.
type lines struct {
	mu  sync.Mutex
	out []string
}

var show = []string{otelschema.AttrToolName, otelschema.AttrOutcome, otelschema.AttrRevisionClient,
	otelschema.AttrRevisionServer, otelschema.AttrRevisionBefore, otelschema.AttrRevisionAfter,
	otelschema.AttrAdapterID, otelschema.AttrArgsNormalized}

func (l *lines) Export(_ context.Context, records []sdklog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range records {
		kv := map[string]string{}
		r.WalkAttributes(func(a attribute.KeyValue) bool { kv[string(a.Key)] = a.Value.Emit(); return true })
		s := r.EventName()
		for _, k := range show {
			if v, ok := kv[k]; ok {
				s += " " + strings.TrimPrefix(k, "mcp.drift.") + "=" + v
			}
		}
		l.out = append(l.out, s)
	}
	return nil
}
func (l *lines) Shutdown(context.Context) error   { return nil }
func (l *lines) ForceFlush(context.Context) error { return nil }

// Example runs the seed's drift test in memory: a client lists
// deploy_preview at revision 1 and prepares a call; the server moves to
// revision 2, where region is required, with an adapter that keeps the old
// call's meaning; the prepared call still runs, normalised.
func Example() {
	ctx := context.Background()
	exp := &lines{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	defer lp.Shutdown(ctx)

	type args struct{ Branch, Region string }
	deploy := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a args
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return nil, err
		}
		if a.Region == "" {
			a.Region = "us-east-preview" // revision 1 always deployed there
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deployed " + a.Branch + " to " + a.Region}}}, nil
	}
	schema := func(required ...string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{"branch":{"type":"string"},"region":{"enum":["us-east-preview","eu-preview"]}},` +
			`"required":["` + strings.Join(required, `","`) + `"],"additionalProperties":false}`)
	}

	// 1-2. The server advertises revision 1; the client lists it.
	srv := mcp.NewServer(&mcp.Implementation{Name: "deploy", Version: "1.0.0"}, nil)
	drift := mcpgo.NewServer(srv, &mcpgo.ServerOptions{LoggerProvider: lp})
	if err := drift.AddTool(&mcp.Tool{Name: "deploy_preview", InputSchema: schema("branch")}, deploy,
		mcpgo.Contract{Revision: "1", Privilege: otelschema.PrivilegeWrite}); err != nil {
		panic(err)
	}
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0.9.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
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
	if _, err := cs.ListTools(ctx, nil); err != nil {
		panic(err)
	}

	// 3. The client prepares a call from its snapshot.
	planned := agent.Plan(cs, &mcp.CallToolParams{Name: "deploy_preview", Arguments: map[string]any{"branch": "fix-login"}})

	// 4-5. The server switches to revision 2 and announces it.
	if err := drift.AddAdapter(ctx, mcpgo.Adapter{ID: "deploy_preview-1-to-2", Tool: "deploy_preview", From: "1", To: "2",
		Class: otelschema.ChangeClassBoundedMigration,
		Normalize: func(_ context.Context, raw json.RawMessage) (json.RawMessage, error) {
			var a map[string]any
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, err
			}
			if b, _ := a["branch"].(string); b == "" {
				return nil, errors.New("the branch field must be a non-empty string")
			}
			a["region"] = "us-east-preview"
			return json.Marshal(a)
		}}); err != nil {
		panic(err)
	}
	if err := drift.AddTool(&mcp.Tool{Name: "deploy_preview", InputSchema: schema("branch", "region")}, deploy,
		mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassBoundedMigration, Privilege: otelschema.PrivilegeWrite}); err != nil {
		panic(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		panic("no list_changed")
	}

	// 6. The prepared revision-1 call is sent anyway.
	res, err := cs.CallTool(ctx, planned)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)

	// 7. The client refreshes.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		panic(err)
	}
	rev, _ := agent.Revision(cs, "deploy_preview")
	fmt.Println("snapshot revision:", rev)

	exp.mu.Lock()
	events := slices.Clone(exp.out)
	exp.mu.Unlock()
	slices.Sort(events)
	for _, e := range events {
		fmt.Println(e)
	}
	// Output:
	// deployed fix-login to us-east-preview
	// snapshot revision: 2
	// mcp.drift.adapter gen_ai.tool.name=deploy_preview adapter.id=deploy_preview-1-to-2
	// mcp.drift.call gen_ai.tool.name=deploy_preview outcome=normalized revision.client=1 revision.server=2 adapter.id=deploy_preview-1-to-2 args.normalized={"branch":"fix-login","region":"us-east-preview"}
	// mcp.drift.list_changed
	// mcp.drift.list_changed gen_ai.tool.name=deploy_preview revision.server=2 revision.before=1 revision.after=2
	// mcp.drift.refresh gen_ai.tool.name=deploy_preview revision.after=1
	// mcp.drift.refresh gen_ai.tool.name=deploy_preview revision.before=1 revision.after=2
}
