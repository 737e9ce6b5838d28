package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
	"github.com/mcpdrift/mcpdrift/store"
)

// The client's duties, run for real: the SDK's client and server connected
// in memory and over streamable HTTP on loopback (with sessions, and
// without on protocol 2026-07-28), the drift events exported by the
// OpenTelemetry SDK's OTLP/gRPC exporter to the shared mcpdrift serve's
// ingester, stored in its embedded store and read back.

// clientTransports are the transports every client test runs on.
var clientTransports = []string{"memory", "http/2025-11-25", "http/2026-07-28"}

// startIngest returns the store and the OTLP/gRPC address of the shared
// mcpdrift serve.
func startIngest(t *testing.T) (store.Querier, string) {
	t.Helper()
	p := serve(t)
	return p.Store(), p.Ingester().GRPCAddr().String()
}

// rig is an instrumented server and client, connected over one transport,
// each exporting its events to the ingester under the rig's environment.
type rig struct {
	env   string
	srv   *mcp.Server
	drift *mcpgo.Server
	agent *mcpgo.Client
	cs    *mcp.ClientSession

	// calls and lists count the tools/call and tools/list requests that
	// reached the server, before any of its middleware; failing makes it
	// answer tools/list pages after the first with an error, and failures
	// counts those answers.
	calls, lists, failures atomic.Int64
	failing                atomic.Bool
	// probe, when set, runs on every tools/list the server receives.
	probe atomic.Pointer[func(cursor string)]
	// changed receives a value per notifications/tools/list_changed the
	// client's own handler sees.
	changed chan struct{}

	serverLP, clientLP *sdklog.LoggerProvider
	closers            []func()
}

type rigOptions struct {
	transport string
	pageSize  int
	manual    bool
}

func newRig(t *testing.T, ingestAddr, env string, o rigOptions, setup func(*mcpgo.Server)) *rig {
	t.Helper()
	ctx := context.Background()
	r := &rig{env: env, changed: make(chan struct{}, 16)}
	r.serverLP = newProvider(t, ingestAddr, "issues-mcp", env)
	r.clientLP = newProvider(t, ingestAddr, "agent-host", env)
	r.srv = mcp.NewServer(&mcp.Implementation{Name: "issues", Version: "3.1.0"}, &mcp.ServerOptions{PageSize: o.pageSize})
	// Added before the drift middleware, so outside it: it sees every
	// request that reaches the server.
	r.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/call":
				r.calls.Add(1)
			case "tools/list":
				r.lists.Add(1)
				var cursor string
				if p, ok := req.GetParams().(*mcp.ListToolsParams); ok && p != nil {
					cursor = p.Cursor
				}
				if f := r.probe.Load(); f != nil {
					(*f)(cursor)
				}
				if cursor != "" && r.failing.Load() {
					r.failures.Add(1)
					return nil, errors.New("tools backend unavailable")
				}
			}
			return next(ctx, method, req)
		}
	})
	r.drift = mcpgo.NewServer(r.srv, &mcpgo.ServerOptions{LoggerProvider: r.serverLP})
	setup(r.drift)

	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0.9.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case r.changed <- struct{}{}:
			default:
			}
		},
	})
	r.agent = mcpgo.NewClient(client, &mcpgo.ClientOptions{LoggerProvider: r.clientLP, RunID: "run-" + env, ManualRefresh: o.manual})
	var err error
	switch o.transport {
	case "memory":
		st, ct := mcp.NewInMemoryTransports()
		ss, err := r.srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.closers = append(r.closers, func() { ss.Close() })
		r.cs, err = client.Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
	default:
		_, protocol, _ := strings.Cut(o.transport, "/")
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return r.srv },
			&mcp.StreamableHTTPOptions{Stateless: protocol >= "2026-07-28"}))
		r.closers = append(r.closers, hs.Close)
		r.cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.cs.InitializeResult().ProtocolVersion; got != protocol {
			t.Fatalf("negotiated protocol %s, want %s", got, protocol)
		}
	}
	t.Cleanup(r.close)
	// The tests' changes come after the server has registered the
	// session's subscription (see Client.Subscribed).
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := r.agent.Subscribed(sctx, r.cs); err != nil {
		t.Fatal(err)
	}
	return r
}

// close closes the session and the servers; it may run twice.
func (r *rig) close() {
	if r.cs != nil {
		r.cs.Close()
	}
	for _, c := range slices.Backward(r.closers) {
		c()
	}
	r.closers = nil
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.serverLP.Shutdown(ctx)
	r.clientLP.Shutdown(ctx)
}

// flush closes the rig, which exports every event.
func (r *rig) flush(t *testing.T) {
	t.Helper()
	if err := r.cs.Close(); err != nil {
		t.Errorf("closing the client session: %v", err)
	}
	r.cs = nil
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, lp := range []*sdklog.LoggerProvider{r.serverLP, r.clientLP} {
		if err := lp.ForceFlush(ctx); err != nil {
			t.Fatalf("flushing drift events: %v", err)
		}
	}
	r.close()
}

// snapshot renders the client's snapshot of the named tools: "a@1 b@-".
func (r *rig) snapshot(names ...string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		rev, ok := r.agent.Revision(r.cs, n)
		if !ok {
			rev = "-"
		}
		parts[i] = n + "@" + rev
	}
	return strings.Join(parts, " ")
}

// waitSnapshot waits until the client's snapshot of names is want,
// without listing.
func (r *rig) waitSnapshot(t *testing.T, want string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for r.snapshot(names...) != want {
		if time.Now().After(deadline) {
			t.Fatalf("client snapshot %q, want %q", r.snapshot(names...), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitChanged waits for the client's list_changed handler to run. The SDK
// sends the notification from a timer 10 ms after the change; the wait is
// long because a CI machine running every package at once can stall a
// process for seconds.
func (r *rig) waitChanged(t *testing.T) {
	t.Helper()
	select {
	case <-r.changed:
	case <-time.After(30 * time.Second):
		n := 0
		for range r.srv.Sessions() {
			n++
		}
		t.Fatalf("no notifications/tools/list_changed received in 30 s (server sessions %d, tools/list answered %d)", n, r.lists.Load())
	}
}

// clientEvent is one stored event, as the client tests read it.
type clientEvent struct {
	EventName            string `json:"event_name"`
	Service              string `json:"service"`
	Tool                 string `json:"tool"`
	RequestID            string `json:"request_id"`
	Outcome              string `json:"outcome"`
	ChangeClass          string `json:"change_class"`
	AdapterID            string `json:"adapter_id"`
	ErrorCode            string `json:"error_code"`
	RequiredAction       string `json:"required_action"`
	SideEffectStarted    bool   `json:"side_effect_started"`
	ExternalRequests     int64  `json:"external_requests"`
	RevisionClient       string `json:"revision_client"`
	RevisionClientSource string `json:"revision_client_source"`
	RevisionServer       string `json:"revision_server"`
	RevisionBefore       string `json:"revision_before"`
	RevisionAfter        string `json:"revision_after"`
	RefreshResult        string `json:"refresh_result"`
	ContractField        string `json:"contract_field"`
	RetryOf              string `json:"retry_of"`
	RepairAction         string `json:"repair_action"`
	RepairResult         string `json:"repair_result"`
	SessionID            string `json:"session_id"`
	RunID                string `json:"run_id"`
	ClientName           string `json:"client_name"`
}

func clientEvents(t *testing.T, st store.Querier, env string) []clientEvent {
	t.Helper()
	q := store.Query{Name: "mcpgo_client_e2e", SQL: `SELECT toString(event_name) AS event_name, service, tool, request_id,
		toString(outcome) AS outcome, toString(change_class) AS change_class, adapter_id, error_code, required_action,
		side_effect_started, external_requests, revision_client, toString(revision_client_source) AS revision_client_source,
		revision_server, revision_before, revision_after, toString(refresh_result) AS refresh_result, contract_field,
		retry_of, toString(repair_action) AS repair_action, toString(repair_result) AS repair_result,
		session_id, run_id, client_name
		FROM mcpdrift.events WHERE environment = {env:String} AND event_name != 'mcp.drift.advertised' ORDER BY time, event_name, tool`}
	var rows []clientEvent
	if err := st.Query(context.Background(), q, store.Params{}.String("env", env), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// waitEvents returns the events stored for env once n are, checking that
// no more arrive shortly after.
func waitEvents(t *testing.T, st store.Querier, env string, n int) []clientEvent {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		evs := clientEvents(t, st, env)
		if len(evs) >= n || time.Now().After(deadline) {
			time.Sleep(100 * time.Millisecond)
			evs = clientEvents(t, st, env)
			if len(evs) != n {
				t.Errorf("stored %d events, want %d:\n%s", len(evs), n, describe(evs))
			}
			return evs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func describe(evs []clientEvent) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "  %s@%s tool=%s outcome=%s refresh=%s %s→%s field=%s\n", e.EventName, e.Service, e.Tool, e.Outcome,
			e.RefreshResult, e.RevisionBefore, e.RevisionAfter, e.ContractField)
	}
	return b.String()
}

func pick(evs []clientEvent, name, service string) []clientEvent {
	var out []clientEvent
	for _, e := range evs {
		if e.EventName == name && (service == "" || e.Service == service) {
			out = append(out, e)
		}
	}
	return out
}

// refreshes renders the stored refresh events: "tool before→after result".
func refreshes(evs []clientEvent) []string {
	var out []string
	for _, e := range pick(evs, "mcp.drift.refresh", "agent-host") {
		out = append(out, fmt.Sprintf("%s %s→%s %s", e.Tool, e.RevisionBefore, e.RevisionAfter, e.RefreshResult))
	}
	return out
}

// objectSchema is an object input schema with string properties, the
// required ones listed, and no others allowed.
func objectSchema(props string, required ...string) json.RawMessage {
	var ps []string
	for _, p := range strings.Split(props, ",") {
		name, def, _ := strings.Cut(p, "=")
		s := `"` + name + `":{"type":"string"`
		if def != "" {
			s += `,"default":"` + def + `"`
		}
		ps = append(ps, s+"}")
	}
	req := ""
	if len(required) > 0 {
		req = `"required":["` + strings.Join(required, `","`) + `"],`
	}
	return json.RawMessage(`{"type":"object","properties":{` + strings.Join(ps, ",") + `},` + req + `"additionalProperties":false}`)
}

// counted returns a handler that counts its runs and answers text.
func counted(n *atomic.Int64) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Params.Name + " done"}}}, nil
	}
}

func mustAdd(t *testing.T, d *mcpgo.Server, tool *mcp.Tool, h mcp.ToolHandler, c mcpgo.Contract) {
	t.Helper()
	if err := d.AddTool(tool, h, c); err != nil {
		t.Fatal(err)
	}
}

// TestClientAutoRefresh checks that after notifications/tools/list_changed
// the client lists again by itself: the snapshot's revision changes
// without the caller listing, with one refresh event per changed tool.
func TestClientAutoRefresh(t *testing.T) {
	st, addr := startIngest(t)
	runTag := fmt.Sprintf("%x", time.Now().UnixNano())
	for _, tr := range clientTransports {
		t.Run(tr, func(t *testing.T) {
			ctx := context.Background()
			env := "client/" + runTag + "/" + tr + "/auto-refresh"
			var ran atomic.Int64
			r := newRig(t, addr, env, rigOptions{transport: tr}, func(d *mcpgo.Server) {
				mustAdd(t, d, &mcp.Tool{Name: "deploy_preview", InputSchema: objectSchema("branch", "branch")}, counted(&ran), mcpgo.Contract{Revision: "1"})
				mustAdd(t, d, &mcp.Tool{Name: "create_issue", InputSchema: objectSchema("title", "title")}, counted(&ran), mcpgo.Contract{Revision: "1"})
			})
			if _, err := r.cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if got := r.snapshot("deploy_preview", "create_issue"); got != "deploy_preview@1 create_issue@1" {
				t.Fatalf("snapshot %q after the first list", got)
			}
			mustAdd(t, r.drift, &mcp.Tool{Name: "deploy_preview", InputSchema: objectSchema("branch,region", "branch", "region")},
				counted(&ran), mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassBoundedMigration})
			r.waitSnapshot(t, "deploy_preview@2 create_issue@1", "deploy_preview", "create_issue")
			if n := r.lists.Load(); n != 2 {
				t.Errorf("the server answered %d tools/list, want 2: the caller's and the automatic one", n)
			}
			r.flush(t)

			// Server: list_changed. Client: list_changed, the caller's
			// refresh (two tools), the automatic one (one changed tool).
			evs := waitEvents(t, st, env, 5)
			if got, want := refreshes(evs), []string{"create_issue →1 ok", "deploy_preview →1 ok", "deploy_preview 1→2 ok"}; !slices.Equal(got, want) {
				t.Errorf("stored refreshes %q, want %q", got, want)
			}
			if n := len(pick(evs, "mcp.drift.list_changed", "agent-host")); n != 1 {
				t.Errorf("stored %d client list_changed, want 1", n)
			}
			for _, e := range evs {
				if e.Service == "agent-host" && (e.RunID != "run-"+env || e.ClientName != "agent") {
					t.Errorf("stored %s with run %q, client %q", e.EventName, e.RunID, e.ClientName)
				}
			}
		})
	}
}

// TestClientPlannedCallAfterChange checks the calls planned before a
// list_changed and sent after it: still valid against the new definition,
// the call goes as planned and only the server records it; refused, or its
// tool gone, no request reaches the server, the caller gets a
// StalePlanError, and the client's call event is the only one.
func TestClientPlannedCallAfterChange(t *testing.T) {
	st, addr := startIngest(t)
	runTag := fmt.Sprintf("%x", time.Now().UnixNano())
	v1 := &mcp.Tool{Name: "deploy_preview", InputSchema: objectSchema("branch", "branch")}
	for _, tr := range clientTransports {
		t.Run(tr, func(t *testing.T) {
			// setup lists deploy_preview at revision 1, plans
			// {"branch":"fix-login"} against it, applies change on the
			// server and waits for the client's list_changed handler:
			// the planned call is sent right after, while the automatic
			// refresh may still be under way.
			setup := func(t *testing.T, scenario string, ran *atomic.Int64, change func(*mcpgo.Server)) (*rig, *mcp.CallToolParams) {
				t.Helper()
				r := newRig(t, addr, "client/"+runTag+"/"+tr+"/"+scenario, rigOptions{transport: tr}, func(d *mcpgo.Server) {
					mustAdd(t, d, v1, counted(ran), mcpgo.Contract{Revision: "1", Privilege: otelschema.PrivilegeWrite})
				})
				if _, err := r.cs.ListTools(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
				planned := r.agent.Plan(r.cs, &mcp.CallToolParams{Name: "deploy_preview", Arguments: map[string]any{"branch": "fix-login"}})
				if planned.Meta[mcpgo.MetaRevision] != "1" {
					t.Fatalf("planned with revision %v, want 1", planned.Meta[mcpgo.MetaRevision])
				}
				change(r.drift)
				r.waitChanged(t)
				return r, planned
			}

			t.Run("still_valid", func(t *testing.T) {
				var ran atomic.Int64
				r, planned := setup(t, "still-valid", &ran, func(d *mcpgo.Server) {
					if err := d.AddAdapter(context.Background(), mcpgo.Adapter{ID: "deploy_preview-1-to-2", Tool: "deploy_preview",
						From: "1", To: "2", Class: otelschema.ChangeClassAdditive}); err != nil {
						t.Fatal(err)
					}
					mustAdd(t, d, &mcp.Tool{Name: "deploy_preview", InputSchema: objectSchema("branch,label", "branch")},
						counted(&ran), mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassAdditive, Privilege: otelschema.PrivilegeWrite})
				})
				res, err := r.cs.CallTool(context.Background(), planned)
				if err != nil || res.IsError {
					t.Fatalf("CallTool = %+v, %v: want the planned call to run", res, err)
				}
				if got := r.snapshot("deploy_preview"); got != "deploy_preview@2" {
					t.Errorf("snapshot %q when the call returned, want revision 2: the call waits for the refresh", got)
				}
				if ran.Load() != 1 || r.calls.Load() != 1 {
					t.Errorf("handler ran %d times, the server received %d calls: want 1 and 1", ran.Load(), r.calls.Load())
				}
				r.flush(t)

				// Server: adapter, list_changed, call. Client: list_changed,
				// two refreshes.
				evs := waitEvents(t, st, r.env, 6)
				if n := len(pick(evs, "mcp.drift.call", "agent-host")); n != 0 {
					t.Errorf("stored %d client call events, want none: the server records the call it received", n)
				}
				calls := pick(evs, "mcp.drift.call", "issues-mcp")
				if len(calls) != 1 {
					t.Fatalf("stored server calls %+v, want 1", calls)
				}
				if c := calls[0]; c.RequestID != planned.Meta[mcpgo.MetaRequestID] || c.RevisionClient != "1" || c.RevisionServer != "2" ||
					c.Outcome != "normalized" || c.AdapterID != "deploy_preview-1-to-2" {
					t.Errorf("stored server call %+v: want the planned call, revision 1 on 2, through the additive adapter", c)
				}
				if got, want := refreshes(evs), []string{"deploy_preview →1 ok", "deploy_preview 1→2 ok"}; !slices.Equal(got, want) {
					t.Errorf("stored refreshes %q, want %q", got, want)
				}
			})

			t.Run("refused", func(t *testing.T) {
				var ran atomic.Int64
				r, planned := setup(t, "refused", &ran, func(d *mcpgo.Server) {
					mustAdd(t, d, &mcp.Tool{Name: "deploy_preview", InputSchema: objectSchema("branch,region=us-east-preview", "branch", "region")},
						counted(&ran), mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassBoundedMigration, Privilege: otelschema.PrivilegeWrite})
				})
				ctx := context.Background()
				res, err := r.cs.CallTool(ctx, planned)
				var se *mcpgo.StalePlanError
				if !errors.Is(err, mcpgo.ErrStalePlan) || !errors.As(err, &se) || res != nil {
					t.Fatalf("CallTool = %+v, %v: want a StalePlanError", res, err)
				}
				if se.Tool != "deploy_preview" || se.PlannedRevision != "1" || se.CurrentRevision != "2" || se.Removed ||
					!slices.Equal(se.Missing, []string{"region"}) || len(se.Invalid) != 0 || se.RequestID != planned.Meta[mcpgo.MetaRequestID] ||
					se.RequiredAction != mcpgo.ActionRefreshTools || se.Planned == nil || se.Current == nil {
					t.Errorf("stale plan error %+v", se)
				}
				if s, _ := json.Marshal(se.Planned.InputSchema); !strings.Contains(string(s), `"required":["branch"]`) {
					t.Errorf("the planned definition %s is not revision 1's", s)
				}
				for _, want := range []string{"deploy_preview", "revision 1", "revision 2", "missing region", "no request was sent"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
				if ran.Load() != 0 || r.calls.Load() != 0 {
					t.Fatalf("handler ran %d times, the server received %d calls: want none", ran.Load(), r.calls.Load())
				}

				// The repairable error, given to the repair policy. Only
				// the server knows the change's class, so the client's own
				// rejection states none, and SafeRetry does not retry it by
				// itself: a person approves the retry with the default
				// region.
				rej, ok := mcpgo.ParseRejection(se.Result())
				if !ok || rej.ErrorCode != mcpgo.CodeStaleToolSchema || rej.SideEffectStarted || rej.CurrentRevision != "2" ||
					!slices.Equal(rej.MissingFields, []string{"region"}) || rej.ChangeClass != otelschema.ChangeClassUnspecified {
					t.Errorf("rejection %+v (%v)", rej, ok)
				}
				if _, err := r.agent.Repair(ctx, r.cs, planned, se.Result(), mcpgo.SafeRetry(nil)); !errors.Is(err, mcpgo.ErrNoRetry) || ran.Load() != 0 {
					t.Fatalf("SafeRetry without a person: %v, handler ran %d times: want no automatic retry of a change of unknown class", err, ran.Load())
				}
				asked := 0
				approve := func(_ context.Context, rr mcpgo.RepairRequest) (any, otelschema.Approval, error) {
					asked++
					return map[string]any{"branch": "fix-login", "region": "us-east-preview"}, otelschema.ApprovalPerCall, nil
				}
				final, err := r.agent.Repair(ctx, r.cs, planned, se.Result(), mcpgo.SafeRetry(approve))
				if err != nil || final.IsError || asked != 1 || ran.Load() != 1 || r.calls.Load() != 1 {
					t.Fatalf("Repair = %+v, %v; asked %d, handler ran %d times: want one approved retry", final, err, asked, ran.Load())
				}
				r.flush(t)

				// Server: list_changed, the retry. Client: list_changed,
				// refreshes (first list, automatic, both Repairs'), the
				// held-back call, the two repairs.
				evs := waitEvents(t, st, r.env, 10)
				held := pick(evs, "mcp.drift.call", "agent-host")
				if len(held) != 1 {
					t.Fatalf("stored client calls %+v, want the held-back call", held)
				}
				if c := held[0]; c.Outcome != "rejected_stale" || c.ErrorCode != mcpgo.CodeStaleToolSchema || c.SideEffectStarted ||
					c.ExternalRequests != 0 || c.RevisionClient != "1" || c.RevisionClientSource != "declared" || c.RevisionServer != "2" ||
					c.RequestID != planned.Meta[mcpgo.MetaRequestID] || c.RequiredAction != mcpgo.ActionRefreshTools || c.Tool != "deploy_preview" {
					t.Errorf("stored client call %+v", c)
				}
				calls := pick(evs, "mcp.drift.call", "issues-mcp")
				if len(calls) != 1 || calls[0].RetryOf != planned.Meta[mcpgo.MetaRequestID] || calls[0].Outcome != "current" ||
					calls[0].RequestID == planned.Meta[mcpgo.MetaRequestID] {
					t.Errorf("stored server calls %+v: want only the retry", calls)
				}
				repairs := pick(evs, "mcp.drift.repair", "agent-host")
				if len(repairs) != 2 || repairs[0].RepairAction != "abandon" || repairs[0].RepairResult != "failure" ||
					repairs[1].RepairAction != "human_approval" || repairs[1].RepairResult != "success" ||
					repairs[1].RetryOf != planned.Meta[mcpgo.MetaRequestID] {
					t.Errorf("stored repairs %+v: want an abandon, then an approved retry", repairs)
				}
				if got, want := refreshes(evs), []string{"deploy_preview →1 ok", "deploy_preview 1→2 ok", " → ok", " → ok"}; !slices.Equal(got, want) {
					t.Errorf("stored refreshes %q, want %q", got, want)
				}
			})

			t.Run("removed", func(t *testing.T) {
				var ran atomic.Int64
				r, planned := setup(t, "removed", &ran, func(d *mcpgo.Server) { d.RemoveTool("deploy_preview", "") })
				_, err := r.cs.CallTool(context.Background(), planned)
				var se *mcpgo.StalePlanError
				if !errors.As(err, &se) || !se.Removed || se.CurrentRevision != "" || se.Current != nil || se.Planned == nil {
					t.Fatalf("CallTool error %v (%+v): want a StalePlanError for a removed tool", err, se)
				}
				if rej, ok := mcpgo.ParseRejection(se.Result()); !ok || rej.ErrorCode != mcpgo.CodeToolRemoved {
					t.Errorf("rejection %+v (%v), want TOOL_REMOVED", rej, ok)
				}
				if ran.Load() != 0 || r.calls.Load() != 0 {
					t.Fatalf("handler ran %d times, the server received %d calls: want none", ran.Load(), r.calls.Load())
				}
				r.flush(t)
				evs := waitEvents(t, st, r.env, 5)
				held := pick(evs, "mcp.drift.call", "")
				if len(held) != 1 || held[0].Service != "agent-host" || held[0].Outcome != "removed" || held[0].ErrorCode != mcpgo.CodeToolRemoved ||
					held[0].ChangeClass != "removal" || held[0].RevisionClient != "1" || held[0].RevisionServer != "" {
					t.Errorf("stored calls %+v: want the client's removed call only", held)
				}
				if got, want := refreshes(evs), []string{"deploy_preview →1 ok", "deploy_preview 1→ ok"}; !slices.Equal(got, want) {
					t.Errorf("stored refreshes %q, want %q", got, want)
				}
			})
		})
	}
}

// TestClientMultiPageSwap checks that a list of several pages replaces the
// snapshot once, when its last page is in: while the server answers any
// page after the first, the client's snapshot is still the one it held
// when that list began — for the caller's own list and the automatic one.
func TestClientMultiPageSwap(t *testing.T) {
	st, addr := startIngest(t)
	runTag := fmt.Sprintf("%x", time.Now().UnixNano())
	names := []string{"a", "b", "c", "d"}
	for _, tr := range clientTransports {
		t.Run(tr, func(t *testing.T) {
			ctx := context.Background()
			env := "client/" + runTag + "/" + tr + "/multi-page"
			var ran atomic.Int64
			r := newRig(t, addr, env, rigOptions{transport: tr, pageSize: 1}, func(d *mcpgo.Server) {
				for _, n := range names[:3] {
					mustAdd(t, d, &mcp.Tool{Name: n, InputSchema: objectSchema("x")}, counted(&ran), mcpgo.Contract{Revision: "1"})
				}
			})
			var mu sync.Mutex
			var atStart string
			var checked int
			var torn []string
			probe := func(cursor string) {
				snap := r.snapshot(names...)
				mu.Lock()
				defer mu.Unlock()
				if cursor == "" {
					atStart = snap
					return
				}
				checked++
				if snap != atStart {
					torn = append(torn, fmt.Sprintf("%q at a later page of a list begun at %q", snap, atStart))
				}
			}
			r.probe.Store(&probe)

			var listed []string
			for tool, err := range r.cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				listed = append(listed, tool.Name)
			}
			if !slices.Equal(listed, names[:3]) || r.lists.Load() != 3 {
				t.Fatalf("listed %v in %d pages, want a, b, c in 3", listed, r.lists.Load())
			}
			if got := r.snapshot(names...); got != "a@1 b@1 c@1 d@-" {
				t.Fatalf("snapshot %q after the caller's list", got)
			}
			mustAdd(t, r.drift, &mcp.Tool{Name: "a", InputSchema: objectSchema("x,y")}, counted(&ran), mcpgo.Contract{Revision: "2"})
			r.drift.RemoveTool("c", "")
			mustAdd(t, r.drift, &mcp.Tool{Name: "d", InputSchema: objectSchema("x")}, counted(&ran), mcpgo.Contract{Revision: "1"})
			r.waitSnapshot(t, "a@2 b@1 c@- d@1", names...)
			mu.Lock()
			if len(torn) > 0 || checked < 4 {
				t.Errorf("snapshot changed within a list: %v (%d later pages checked, want at least 4)", torn, checked)
			}
			mu.Unlock()
			r.flush(t)

			// Each changed tool has one refresh event, whether the server's
			// changes came in one notification or more; a refresh that found
			// nothing new has one without a tool.
			deadline := time.Now().Add(15 * time.Second)
			want := []string{" → ok", "a →1 ok", "a 1→2 ok", "b →1 ok", "c →1 ok", "c 1→ ok", "d →1 ok"}
			slices.Sort(want)
			for {
				got := refreshes(clientEvents(t, st, env))
				slices.Sort(got)
				got = slices.Compact(got) // the tool-less ones: as many as refreshes that found nothing
				if slices.Equal(got, want) || slices.Equal(got, want[1:]) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("stored refreshes %q, want %q", got, want[1:])
				}
				time.Sleep(20 * time.Millisecond)
			}
			var perTool []string
			for _, e := range refreshes(clientEvents(t, st, env)) {
				if !strings.HasPrefix(e, " ") {
					perTool = append(perTool, e)
				}
			}
			if len(perTool) != 6 {
				t.Errorf("stored refreshes per tool %q, want each change once", perTool)
			}
		})
	}
}

// TestClientFailedRefresh checks that an automatic refresh that fails is
// counted, leaves the snapshot whole (its first page changed a tool, its
// second failed), and is retried by the next planned call, which waits for
// it.
func TestClientFailedRefresh(t *testing.T) {
	st, addr := startIngest(t)
	runTag := fmt.Sprintf("%x", time.Now().UnixNano())
	for _, tr := range clientTransports {
		t.Run(tr, func(t *testing.T) {
			ctx := context.Background()
			env := "client/" + runTag + "/" + tr + "/failed-refresh"
			var ran atomic.Int64
			r := newRig(t, addr, env, rigOptions{transport: tr, pageSize: 1}, func(d *mcpgo.Server) {
				mustAdd(t, d, &mcp.Tool{Name: "a", InputSchema: objectSchema("x")}, counted(&ran), mcpgo.Contract{Revision: "1"})
				mustAdd(t, d, &mcp.Tool{Name: "b", InputSchema: objectSchema("x")}, counted(&ran), mcpgo.Contract{Revision: "1"})
			})
			if err := r.agent.Refresh(ctx, r.cs); err != nil {
				t.Fatal(err)
			}
			if got := r.snapshot("a", "b"); got != "a@1 b@1" || r.lists.Load() != 2 {
				t.Fatalf("snapshot %q after %d pages", got, r.lists.Load())
			}
			r.failing.Store(true)
			if err := r.drift.AddAdapter(ctx, mcpgo.Adapter{ID: "a-1-to-2", Tool: "a", From: "1", To: "2", Class: otelschema.ChangeClassAdditive}); err != nil {
				t.Fatal(err)
			}
			mustAdd(t, r.drift, &mcp.Tool{Name: "a", InputSchema: objectSchema("x,y")}, counted(&ran), mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassAdditive})
			deadline := time.Now().Add(10 * time.Second)
			for r.failures.Load() == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the automatic refresh did not reach the second page")
				}
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond) // the client handles the failed page
			if got := r.snapshot("a", "b"); got != "a@1 b@1" {
				t.Fatalf("snapshot %q after a failed refresh whose first page listed a@2: want the old one whole", got)
			}

			// The next planned call retries the refresh and waits for it.
			r.failing.Store(false)
			planned := r.agent.Plan(r.cs, &mcp.CallToolParams{Name: "a", Arguments: map[string]any{"x": "1"}})
			if res, err := r.cs.CallTool(ctx, planned); err != nil || res.IsError {
				t.Fatalf("CallTool = %+v, %v", res, err)
			}
			if got := r.snapshot("a", "b"); got != "a@2 b@1" {
				t.Errorf("snapshot %q when the call returned: want the retried refresh's", got)
			}
			if r.failures.Load() != 1 || r.lists.Load() != 6 {
				t.Errorf("%d failed pages of %d listed, want 1 of 6 (2 first, 2 failed refresh, 2 retry)", r.failures.Load(), r.lists.Load())
			}
			r.flush(t)

			// Server: adapter, list_changed, call. Client: list_changed, two
			// refresh events for the first list, the failed refresh, the
			// retried one.
			evs := waitEvents(t, st, env, 8)
			if got, want := refreshes(evs), []string{"a →1 ok", "b →1 ok", " → failed", "a 1→2 ok"}; !slices.Equal(got, want) {
				t.Errorf("stored refreshes %q, want %q", got, want)
			}
			if calls := pick(evs, "mcp.drift.call", ""); len(calls) != 1 || calls[0].Service != "issues-mcp" || calls[0].Outcome != "normalized" {
				t.Errorf("stored calls %+v: want the server's only", calls)
			}
		})
	}
}

// issue is create_issue's result: revision 1 has issue.id, revision 2
// renamed it issue.issueId (the seed's example of a result-shape change).
func issueResult(rev string) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		idKey := "id"
		if rev == "2" {
			idKey = "issueId"
		}
		issue := map[string]any{idKey: "I-482", "url": "https://tracker.example/issues/I-482", "state": "open"}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "Created issue I-482."}},
			StructuredContent: map[string]any{"issue": issue},
			Meta:              mcp.Meta{mcpgo.MetaRevision: rev},
		}, nil
	}
}

// TestClientContractError runs the seed's result-shape change: the agent
// creates an issue and comments on it with the id it read from the result.
// Revision 2 of create_issue renamed issue.id: the client stops before the
// dependent call, the caller gets a ContractError with the result, and a
// contract_error event names the field. A result with every needed field
// emits nothing.
func TestClientContractError(t *testing.T) {
	st, addr := startIngest(t)
	runTag := fmt.Sprintf("%x", time.Now().UnixNano())
	issueV1 := &mcp.Tool{Name: "create_issue", InputSchema: objectSchema("title", "title"),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"issue":{"type":"object"}}}`)}
	for _, tr := range clientTransports {
		t.Run(tr, func(t *testing.T) {
			ctx := context.Background()
			env := "client/" + runTag + "/" + tr + "/contract"
			var comments atomic.Int64
			r := newRig(t, addr, env, rigOptions{transport: tr}, func(d *mcpgo.Server) {
				mustAdd(t, d, issueV1, issueResult("1"), mcpgo.Contract{Revision: "1", Privilege: otelschema.PrivilegeWrite})
				mustAdd(t, d, &mcp.Tool{Name: "add_comment", InputSchema: objectSchema("issue_id,body", "issue_id", "body")},
					counted(&comments), mcpgo.Contract{Revision: "1", Privilege: otelschema.PrivilegeWrite})
			})
			if err := r.agent.Refresh(ctx, r.cs); err != nil {
				t.Fatal(err)
			}
			// step creates an issue, and comments on it when the result
			// has its id.
			step := func() (*mcp.CallToolParams, error) {
				planned := r.agent.Plan(r.cs, &mcp.CallToolParams{Name: "create_issue", Arguments: map[string]any{"title": "Login fails"}},
					mcpgo.Needs("issue.id", "issue.state"))
				res, err := r.cs.CallTool(ctx, planned)
				if err != nil {
					return planned, err
				}
				id, _ := mcpgo.LookupPath(res.StructuredContent, "issue.id")
				_, err = r.cs.CallTool(ctx, r.agent.Plan(r.cs, &mcp.CallToolParams{Name: "add_comment",
					Arguments: map[string]any{"issue_id": id, "body": "Reproduced on build 42."}}))
				return planned, err
			}
			if _, err := step(); err != nil || comments.Load() != 1 {
				t.Fatalf("step on revision 1: %v, %d comments", err, comments.Load())
			}

			issueV2 := *issueV1
			mustAdd(t, r.drift, &issueV2, issueResult("2"), mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassSemantic, Privilege: otelschema.PrivilegeWrite})
			r.waitSnapshot(t, "create_issue@2", "create_issue")
			planned, err := step()
			var ce *mcpgo.ContractError
			if !errors.Is(err, mcpgo.ErrContract) || !errors.As(err, &ce) {
				t.Fatalf("step on revision 2: %v, want a ContractError", err)
			}
			if ce.Tool != "create_issue" || !slices.Equal(ce.Missing, []string{"issue.id"}) || ce.PlannedRevision != "2" || ce.ServerRevision != "2" ||
				ce.RequestID != planned.Meta[mcpgo.MetaRequestID] || ce.Result == nil || ce.Result.IsError {
				t.Errorf("contract error %+v", ce)
			}
			if v, ok := mcpgo.LookupPath(ce.Result.StructuredContent, "issue.issueId"); !ok || v != "I-482" {
				t.Errorf("the error's result lacks the renamed id: %v", ce.Result.StructuredContent)
			}
			if comments.Load() != 1 {
				t.Errorf("%d comments: the dependent call ran after the contract error", comments.Load())
			}
			session := r.cs.ID()
			r.flush(t)

			// Server: list_changed, three calls. Client: list_changed, the
			// first refresh (two tools), the automatic one, the contract
			// error.
			evs := waitEvents(t, st, env, 9)
			ces := pick(evs, "mcp.drift.contract_error", "")
			if len(ces) != 1 {
				t.Fatalf("stored contract errors %+v, want 1", ces)
			}
			if c := ces[0]; c.Service != "agent-host" || c.Tool != "create_issue" || c.ContractField != "issue.id" ||
				c.RequestID != planned.Meta[mcpgo.MetaRequestID] || c.RevisionClient != "2" || c.RevisionServer != "2" ||
				c.RevisionClientSource != "declared" || c.RunID != "run-"+env || c.SessionID != session {
				t.Errorf("stored contract error %+v", c)
			}
			calls := pick(evs, "mcp.drift.call", "")
			var tools []string
			for _, c := range calls {
				tools = append(tools, c.Service+":"+c.Tool+":"+c.Outcome)
			}
			if want := []string{"issues-mcp:create_issue:current", "issues-mcp:add_comment:current", "issues-mcp:create_issue:current"}; !slices.Equal(tools, want) {
				t.Errorf("stored calls %q, want %q", tools, want)
			}
		})
	}
}

// TestClientSubscribed checks Client.Subscribed on the 2026-07-28
// protocol: with the server slow to register the session's
// subscriptions/listen (300 ms), Subscribed returns only once it has, and
// a change made right after is announced to the session.
func TestClientSubscribed(t *testing.T) {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow-listen", Version: "1"}, nil)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "subscriptions/listen" {
				time.Sleep(300 * time.Millisecond)
			}
			return next(ctx, method, req)
		}
	})
	drift := mcpgo.NewServer(srv, nil)
	mustAdd(t, drift, &mcp.Tool{Name: "deploy_preview", InputSchema: objectSchema("branch", "branch")}, counted(new(atomic.Int64)), mcpgo.Contract{Revision: "1"})
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	agent := mcpgo.NewClient(client, nil)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	start := time.Now()
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if p := cs.InitializeResult().ProtocolVersion; p < "2026-07-28" {
		t.Fatalf("negotiated protocol %s: the test needs subscriptions/listen", p)
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := agent.Subscribed(sctx, cs); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("Subscribed returned %v after Connect, before the server could have registered the subscription", d)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, drift, &mcp.Tool{Name: "deploy_preview", InputSchema: objectSchema("branch,region", "branch", "region")}, counted(new(atomic.Int64)),
		mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassBoundedMigration})
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("the change made after Subscribed was not announced")
	}
}
