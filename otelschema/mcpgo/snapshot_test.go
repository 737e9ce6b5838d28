package mcpgo_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// seedV1 and seedV2 are the seed's deploy_preview before and after region
// became required.
var (
	seedV1 = &mcp.Tool{Name: "deploy_preview", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"branch":{"type":"string","minLength":1}},"required":["branch"],"additionalProperties":false}`)}
	seedV2 = &mcp.Tool{Name: "deploy_preview", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"branch":{"type":"string","minLength":1},` +
			`"region":{"type":"string","enum":["us-east-preview","eu-preview"]}},"required":["branch","region"],"additionalProperties":false}`)}
	// seedV2Optional adds region as an optional field: an additive change.
	seedV2Optional = &mcp.Tool{Name: "deploy_preview", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"branch":{"type":"string","minLength":1},` +
			`"region":{"type":"string","enum":["us-east-preview","eu-preview"]}},"required":["branch"],"additionalProperties":false}`)}
)

// guarded is a deploy_preview handler that records the arguments it ran
// with and fails the test when they are invalid under v2: the middleware
// must never let it run on arguments its own revision rejects.
type guarded struct {
	t    *testing.T
	mu   sync.Mutex
	runs []map[string]any
}

func (g *guarded) handler(required ...string) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a map[string]any
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			g.t.Errorf("handler ran on arguments that are not an object: %s", req.Params.Arguments)
		}
		for _, f := range required {
			if _, ok := a[f]; !ok {
				g.t.Errorf("handler ran without %s: %s", f, req.Params.Arguments)
			}
		}
		g.mu.Lock()
		g.runs = append(g.runs, a)
		g.mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deploying"}}}, nil
	}
}

func (g *guarded) ran() []map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.runs)
}

func defaultRegion(_ context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var a map[string]any
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	if _, ok := a["region"]; !ok {
		a["region"] = "us-east-preview"
	}
	return json.Marshal(a)
}

// stockServer is a server instrumented by mcpgo, its events recorded.
type stockServer struct {
	rec   *recorder
	srv   *mcp.Server
	drift *mcpgo.Server
	g     *guarded
}

func newStockServer(t *testing.T) *stockServer {
	t.Helper()
	s := &stockServer{rec: &recorder{}, g: &guarded{t: t}}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(s.rec)))
	t.Cleanup(func() { lp.Shutdown(context.Background()) })
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "deploy", Version: "1"}, nil)
	s.drift = mcpgo.NewServer(s.srv, &mcpgo.ServerOptions{LoggerProvider: lp})
	return s
}

// deploy moves the server to v2 (or the given definition), with the seed's
// adapter from 1 when adapter is set.
func (s *stockServer) deploy(t *testing.T, def *mcp.Tool, adapter bool, earlier ...*mcp.Tool) {
	t.Helper()
	if adapter {
		if err := s.drift.AddAdapter(context.Background(), mcpgo.Adapter{ID: "deploy_preview-1-to-2", Tool: "deploy_preview",
			From: "1", To: "2", Class: otelschema.ChangeClassBoundedMigration, Normalize: defaultRegion}); err != nil {
			t.Fatal(err)
		}
	}
	required := []string{"branch"}
	if def == seedV2 {
		required = append(required, "region")
	}
	if err := s.drift.AddTool(def, s.g.handler(required...), mcpgo.Contract{Revision: "2",
		Change: otelschema.ChangeClassBoundedMigration, Privilege: otelschema.PrivilegeWrite, Earlier: earlier}); err != nil {
		t.Fatal(err)
	}
}

func (s *stockServer) v1(t *testing.T) {
	t.Helper()
	if err := s.drift.AddTool(seedV1, s.g.handler("branch"), mcpgo.Contract{Revision: "1", Privilege: otelschema.PrivilegeWrite}); err != nil {
		t.Fatal(err)
	}
}

// stock connects a client of the official SDK with no mcpgo.Client, as
// every off-the-shelf agent is, over the in-memory transport.
func (s *stockServer) stock(t *testing.T) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "desktop-assistant", Version: "4.2"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callDeploy(t *testing.T, cs *mcp.ClientSession, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy_preview", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func list(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// structured returns a result's structured content as JSON, for messages.
func structured(res *mcp.CallToolResult) map[string]any {
	var m map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &m)
	return m
}

var oldCall = map[string]any{"branch": "fix-login"}

// TestStockClientListed: the case. A stock client lists revision 1,
// the server moves to 2 with an adapter, and the client sends its old call.
// The server knows what it listed to the session: the adapter runs, and
// the handler sees revision 2's arguments.
func TestStockClientListed(t *testing.T) {
	s := newStockServer(t)
	s.v1(t)
	cs := s.stock(t)
	list(t, cs)
	s.deploy(t, seedV2, true)

	res := callDeploy(t, cs, oldCall)
	if res.IsError {
		t.Fatalf("old call: %+v", structured(res))
	}
	if runs := s.g.ran(); len(runs) != 1 || runs[0]["region"] != "us-east-preview" || runs[0]["branch"] != "fix-login" {
		t.Fatalf("handler runs %v: want the normalised call once", runs)
	}
	// The result says which adapter normalised it, and the revision that ran.
	if res.Meta[mcpgo.MetaAdapterID] != "deploy_preview-1-to-2" || res.Meta[mcpgo.MetaRevision] != "2" {
		t.Fatalf("normalised result _meta %v: want the adapter and revision 2", res.Meta)
	}
	checkAttrs(t, s.rec.named("dev.mcpdrift.call")[0], map[string]string{"dev.mcpdrift.outcome": "normalized",
		"dev.mcpdrift.revision.client": "1", "dev.mcpdrift.revision.client.source": "listed", "dev.mcpdrift.revision.server": "2",
		"dev.mcpdrift.adapter.id": "deploy_preview-1-to-2", "dev.mcpdrift.client.name": "desktop-assistant",
		"dev.mcpdrift.args.normalized": `{"branch":"fix-login","region":"us-east-preview"}`})

	// A new call with revision 2's shape, after the client listed again.
	list(t, cs)
	if res := callDeploy(t, cs, map[string]any{"branch": "main", "region": "eu-preview"}); res.Meta[mcpgo.MetaAdapterID] != nil {
		t.Fatalf("current call's result _meta %v: want no adapter", res.Meta)
	}
	checkAttrs(t, s.rec.named("dev.mcpdrift.call")[1], map[string]string{"dev.mcpdrift.outcome": "current",
		"dev.mcpdrift.revision.client": "2", "dev.mcpdrift.revision.client.source": "listed"})

	// The client listed 2, but sends revision 1's shape again (a plan
	// from a cache): the arguments contradict the listing.
	callDeploy(t, cs, oldCall)
	checkAttrs(t, s.rec.named("dev.mcpdrift.call")[2], map[string]string{"dev.mcpdrift.outcome": "normalized",
		"dev.mcpdrift.revision.client": "1", "dev.mcpdrift.revision.client.source": "inferred"})
}

// TestStockClientStale: without an adapter, the old call is rejected with
// the seed's repairable error, and the handler never runs.
func TestStockClientStale(t *testing.T) {
	s := newStockServer(t)
	s.v1(t)
	cs := s.stock(t)
	list(t, cs)
	s.deploy(t, seedV2, false)

	res := callDeploy(t, cs, oldCall)
	rej, ok := mcpgo.ParseRejection(res)
	if !ok || rej.ErrorCode != mcpgo.CodeStaleToolSchema || rej.CurrentRevision != "2" || rej.ClientRevision != "1" ||
		rej.SideEffectStarted || rej.RequiredAction != mcpgo.ActionRefreshTools || !slices.Equal(rej.MissingFields, []string{"region"}) {
		t.Fatalf("result %+v: want STALE_TOOL_SCHEMA naming region", structured(res))
	}
	if sc := structured(res); sc["client_revision_source"] != "listed" {
		t.Errorf("structured content %v: want the source of the client revision", sc)
	}
	if runs := s.g.ran(); len(runs) != 0 {
		t.Fatalf("the handler ran: %v", runs)
	}
	checkAttrs(t, s.rec.named("dev.mcpdrift.call")[0], map[string]string{"dev.mcpdrift.outcome": "rejected_stale",
		"dev.mcpdrift.revision.client": "1", "dev.mcpdrift.revision.client.source": "listed", "dev.mcpdrift.error.code": "STALE_TOOL_SCHEMA"})
}

// TestStockClientInvalid: arguments that no revision accepts never reach
// the handler; the error names the field, the revision and what to do.
func TestStockClientInvalid(t *testing.T) {
	s := newStockServer(t)
	s.v1(t)
	s.deploy(t, seedV2, true)
	cs := s.stock(t)
	list(t, cs)

	for _, tc := range []struct {
		name          string
		args          map[string]any
		meta          mcp.Meta
		action, field string
		source        string
	}{
		{"listed current, bad enum", map[string]any{"branch": "b", "region": "prod-us"}, nil, mcpgo.ActionFixArguments, "region", "listed"},
		{"declared current, unknown field", map[string]any{"branch": "b", "region": "eu-preview", "force": true},
			mcp.Meta{mcpgo.MetaRevision: "2"}, mcpgo.ActionFixArguments, "force", "declared"},
		{"no revision fits", map[string]any{"branch": ""}, nil, mcpgo.ActionFixArguments, "branch", "listed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := len(s.rec.named("dev.mcpdrift.call"))
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy_preview", Arguments: tc.args, Meta: tc.meta})
			if err != nil {
				t.Fatal(err)
			}
			sc := structured(res)
			if !res.IsError || sc["error_code"] != mcpgo.CodeInvalidArguments || sc["required_action"] != tc.action ||
				sc["field"] != tc.field || sc["current_revision"] != "2" || sc["side_effect_started"] != false {
				t.Errorf("result %v: want INVALID_ARGUMENTS on %s, %s", sc, tc.field, tc.action)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "No side effect was started") ||
				!strings.Contains(text, "requires branch and region") {
				t.Errorf("text %q", text)
			}
			calls := s.rec.named("dev.mcpdrift.call")
			if len(calls) != n+1 {
				t.Fatalf("%d call events, want one more than %d", len(calls), n)
			}
			checkAttrs(t, calls[n], map[string]string{"dev.mcpdrift.outcome": "rejected_invalid",
				"dev.mcpdrift.error.code": "INVALID_ARGUMENTS", "dev.mcpdrift.required_action": tc.action,
				"dev.mcpdrift.revision.client.source": tc.source, "dev.mcpdrift.side_effect.started": "false"})
		})
	}
	if runs := s.g.ran(); len(runs) != 0 {
		t.Fatalf("the handler ran: %v", runs)
	}
}

// statelessURL serves srvs round-robin behind one URL over the stateless
// streamable HTTP transport, as replicas behind a load balancer do.
func statelessURL(t *testing.T, srvs ...*mcp.Server) string {
	t.Helper()
	var mu sync.Mutex
	next := 0
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		mu.Lock()
		defer mu.Unlock()
		s := srvs[next%len(srvs)]
		next++
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}

func stockHTTP(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ide-agent", Version: "1.0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestStockClientInferred: where the server listed nothing to the session
// (a stateless transport, a replica that never saw the session, a
// restart), the arguments tell the revision when only one known revision
// accepts them.
func TestStockClientInferred(t *testing.T) {
	t.Run("stateless", func(t *testing.T) {
		s := newStockServer(t)
		s.v1(t)
		cs := stockHTTP(t, statelessURL(t, s.srv))
		list(t, cs)
		s.deploy(t, seedV2, true)
		if res := callDeploy(t, cs, oldCall); res.IsError {
			t.Fatalf("old call: %v", structured(res))
		}
		checkAttrs(t, s.rec.named("dev.mcpdrift.call")[0], map[string]string{"dev.mcpdrift.outcome": "normalized",
			"dev.mcpdrift.revision.client": "1", "dev.mcpdrift.revision.client.source": "inferred", "dev.mcpdrift.adapter.id": "deploy_preview-1-to-2"})
		callDeploy(t, cs, map[string]any{"branch": "main", "region": "eu-preview"})
		checkAttrs(t, s.rec.named("dev.mcpdrift.call")[1], map[string]string{"dev.mcpdrift.outcome": "current",
			"dev.mcpdrift.revision.client": "2", "dev.mcpdrift.revision.client.source": "inferred"})
	})

	// Two replicas behind a round-robin balancer: A lists, B is called.
	// B started at revision 2 and knows revision 1 from Contract.Earlier.
	t.Run("two replicas", func(t *testing.T) {
		a, b := newStockServer(t), newStockServer(t)
		a.v1(t)
		b.deploy(t, seedV2, true, withRevision(seedV1, "1"))
		cs := stockHTTP(t, statelessURL(t, a.srv, b.srv))
		list(t, cs) // answered by A: revision 1
		a.deploy(t, seedV2, true)
		if res := callDeploy(t, cs, oldCall); res.IsError { // answered by B
			t.Fatalf("old call on B: %v", structured(res))
		}
		if len(a.rec.named("dev.mcpdrift.call")) != 0 {
			t.Fatal("the call reached A")
		}
		checkAttrs(t, b.rec.named("dev.mcpdrift.call")[0], map[string]string{"dev.mcpdrift.outcome": "normalized",
			"dev.mcpdrift.revision.client": "1", "dev.mcpdrift.revision.client.source": "inferred"})
		if runs := b.g.ran(); len(runs) != 1 || runs[0]["region"] != "us-east-preview" {
			t.Errorf("B's handler runs %v", runs)
		}
	})

	// A replica that knows nothing of revision 1 cannot recognise the call:
	// it rejects it as invalid, unknown, and the handler never runs.
	t.Run("replica without the earlier revision", func(t *testing.T) {
		s := newStockServer(t)
		s.deploy(t, seedV2, true)
		cs := s.stock(t)
		res := callDeploy(t, cs, oldCall)
		if sc := structured(res); !res.IsError || sc["error_code"] != mcpgo.CodeInvalidArguments ||
			sc["required_action"] != mcpgo.ActionRefreshTools || sc["field"] != "region" {
			t.Fatalf("result %v: want INVALID_ARGUMENTS asking for a refresh", sc)
		}
		checkAttrs(t, s.rec.named("dev.mcpdrift.call")[0], map[string]string{"dev.mcpdrift.outcome": "rejected_invalid",
			"dev.mcpdrift.revision.client": "", "dev.mcpdrift.revision.client.source": ""})
		if runs := s.g.ran(); len(runs) != 0 {
			t.Fatalf("the handler ran: %v", runs)
		}
	})

	// Arguments that both revisions accept tell nothing: the call runs,
	// its client revision unknown, never counted as current.
	t.Run("ambiguous", func(t *testing.T) {
		s := newStockServer(t)
		s.v1(t)
		s.deploy(t, seedV2Optional, false)
		cs := s.stock(t) // never listed
		if res := callDeploy(t, cs, oldCall); res.IsError {
			t.Fatalf("old call under an additive change: %v", structured(res))
		}
		checkAttrs(t, s.rec.named("dev.mcpdrift.call")[0], map[string]string{"dev.mcpdrift.outcome": "current",
			"dev.mcpdrift.revision.client": "", "dev.mcpdrift.revision.client.source": "", "dev.mcpdrift.revision.server": "2"})
	})
}

// TestInferOldest: when several older revisions accept the arguments and
// the current one does not, the call counts against the oldest one an
// adapter serves.
func TestInferOldest(t *testing.T) {
	s := newStockServer(t)
	v0 := withRevision(&mcp.Tool{Name: "deploy_preview", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"branch":{"type":"string"}},"required":["branch"]}`)}, "0")
	s.v1(t)
	s.deploy(t, seedV2, true, v0) // adapter 1→2 only
	cs := s.stock(t)
	callDeploy(t, cs, oldCall)
	checkAttrs(t, s.rec.named("dev.mcpdrift.call")[0], map[string]string{"dev.mcpdrift.outcome": "normalized",
		"dev.mcpdrift.revision.client": "1", "dev.mcpdrift.revision.client.source": "inferred"})

	if err := s.drift.AddAdapter(context.Background(), mcpgo.Adapter{ID: "deploy_preview-0-to-2", Tool: "deploy_preview",
		From: "0", To: "2", Class: otelschema.ChangeClassBoundedMigration, Normalize: defaultRegion}); err != nil {
		t.Fatal(err)
	}
	callDeploy(t, cs, oldCall)
	checkAttrs(t, s.rec.named("dev.mcpdrift.call")[1], map[string]string{"dev.mcpdrift.outcome": "normalized",
		"dev.mcpdrift.revision.client": "0", "dev.mcpdrift.adapter.id": "deploy_preview-0-to-2"})
}

// TestAdapterOutputValidated: an adapter whose output the current
// revision rejects never hands it to the handler.
func TestAdapterOutputValidated(t *testing.T) {
	s := newStockServer(t)
	s.v1(t)
	if err := s.drift.AddAdapter(context.Background(), mcpgo.Adapter{ID: "sloppy", Tool: "deploy_preview", From: "1", To: "2",
		Class: otelschema.ChangeClassBoundedMigration,
		Normalize: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"branch":"fix-login","region":"ap-south"}`), nil
		}}); err != nil {
		t.Fatal(err)
	}
	s.deploy(t, seedV2, false)
	res, err := s.stock(t).CallTool(context.Background(), &mcp.CallToolParams{Name: "deploy_preview", Arguments: oldCall,
		Meta: mcp.Meta{mcpgo.MetaRevision: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if sc := structured(res); !res.IsError || sc["error_code"] != mcpgo.CodeInvalidArguments || sc["field"] != "region" {
		t.Fatalf("result %v", sc)
	}
	checkAttrs(t, s.rec.named("dev.mcpdrift.call")[0], map[string]string{"dev.mcpdrift.outcome": "rejected_invalid",
		"dev.mcpdrift.adapter.id": "sloppy", "dev.mcpdrift.revision.client.source": "declared"})
	if runs := s.g.ran(); len(runs) != 0 {
		t.Fatalf("the handler ran: %v", runs)
	}
}

// TestAddToolSchemaMustCompile: a schema the validator cannot compile is
// refused, since no call to the tool could be validated.
func TestAddToolSchemaMustCompile(t *testing.T) {
	d := mcpgo.NewServer(mcp.NewServer(&mcp.Implementation{Name: "t"}, nil), nil)
	bad := &mcp.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`)}
	if err := d.AddTool(bad, okHandler, mcpgo.Contract{}); err == nil {
		t.Fatal("AddTool accepted a schema with a remote reference")
	}
	other := &mcp.Tool{Name: "y", InputSchema: json.RawMessage(`{"type":"object"}`)}
	if err := d.AddTool(&mcp.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"object"}`)}, okHandler,
		mcpgo.Contract{Earlier: []*mcp.Tool{other}}); err == nil {
		t.Fatal("AddTool accepted an earlier definition of another tool")
	}
}

// withRevision returns t advertising revision rev.
func withRevision(t *mcp.Tool, rev string) *mcp.Tool {
	c := *t
	c.Meta = mcp.Meta{mcpgo.MetaRevision: rev}
	return &c
}
