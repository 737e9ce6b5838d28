package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
	"github.com/mcpdrift/mcpdrift/store"
)

// The seed's story, run by every pair of a server and a client, Go or
// TypeScript: three tools at revision 1 (deploy_preview, sync_project,
// delete_branch); the client lists and plans four calls (A deploys
// fix-login, B syncs payments, C deletes old-feature, D deploys hotfix);
// mid-session the server deploys a required field with an adapter
// (deploy_preview 1→2, region required, the seed's adapter), a change of
// meaning it rejects (sync_project 1→2, semantic) and a removal
// (delete_branch), announced by one list_changed; the client sends A before
// refreshing (the adapter serves it), refreshes, sends B (still valid: the
// server rejects it as incompatible; a person approves a new call), C (held
// back: removed; abandoned) and D (held back: region missing; a person
// approves a new call). mcpts/e2e/node/story.ts is the TypeScript twin of
// the definitions below.

const (
	serverService = "story-server"
	clientService = "story-agent"
)

var storyWindowEnd = time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)

func objectSchema(props string, required ...string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":["` +
		strings.Join(required, `","`) + `"],"additionalProperties":false}`)
}

var (
	deployV1 = &mcp.Tool{Name: "deploy_preview", Description: "Deploy the current branch to a preview environment.",
		InputSchema: objectSchema(`"branch":{"type":"string","minLength":1}`, "branch")}
	deployV2 = &mcp.Tool{Name: "deploy_preview", Description: "Deploy the current branch to a preview environment in a region.",
		InputSchema: objectSchema(`"branch":{"type":"string","minLength":1},"region":{"type":"string","enum":["us-east-preview","eu-preview"]}`, "branch", "region")}
	syncV1 = &mcp.Tool{Name: "sync_project", Description: "Sync a project by its human-readable name.",
		InputSchema: objectSchema(`"project":{"type":"string"}`, "project")}
	// Same shape, another meaning: project is now an opaque organisation id.
	syncV2 = &mcp.Tool{Name: "sync_project", Description: "Sync a project by its opaque organisation id.",
		InputSchema: objectSchema(`"project":{"type":"string"}`, "project")}
	deleteV1 = &mcp.Tool{Name: "delete_branch", Description: "Delete a branch.",
		InputSchema: objectSchema(`"branch":{"type":"string"}`, "branch")}
)

// external is the seed's fake external service: an append-only log of the
// requests it received.
type external struct {
	mu  sync.Mutex
	log []externalRequest
}

type externalRequest struct {
	Path, Correlation string
	Authorized        bool
	Body              map[string]any
}

func (x *external) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	x.mu.Lock()
	x.log = append(x.log, externalRequest{r.URL.Path, r.Header.Get("X-Correlation-Id"), r.Header.Get("Authorization") != "", m})
	x.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

func (x *external) requests() []externalRequest {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.log)
}

// handler is a story tool's handler: it records its external request, then
// sends it, correlated with the call's request id.
func handler(ext, path, target string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mcpgo.ExternalRequest(ctx, target)
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, ext+path, strings.NewReader(string(req.Params.Arguments)))
		if err != nil {
			return nil, err
		}
		hr.Header.Set("Authorization", "Bearer preview-token")
		hr.Header.Set("X-Correlation-Id", fmt.Sprint(req.Params.Meta[mcpgo.MetaRequestID]))
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Params.Name + " done"}}}, nil
	}
}

func mustAdd(t *testing.T, d *mcpgo.Server, tool *mcp.Tool, h mcp.ToolHandler, c mcpgo.Contract) {
	t.Helper()
	if err := d.AddTool(tool, h, c); err != nil {
		t.Fatal(err)
	}
}

// regionDefault is the seed's adapter: revision 1's calls deployed to
// us-east-preview.
func regionDefault(_ context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var a map[string]any
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	if _, ok := a["region"]; !ok {
		a["region"] = "us-east-preview"
	}
	return json.Marshal(a)
}

func storyV1(t *testing.T, d *mcpgo.Server, ext string) {
	mustAdd(t, d, deployV1, handler(ext, "/deployments", "preview-deployer"), mcpgo.Contract{Revision: "1", Privilege: otelschema.PrivilegeWrite})
	mustAdd(t, d, syncV1, handler(ext, "/sync", "project-sync"), mcpgo.Contract{Revision: "1", Privilege: otelschema.PrivilegeWrite})
	mustAdd(t, d, deleteV1, handler(ext, "/delete", "git"), mcpgo.Contract{Revision: "1", Privilege: otelschema.PrivilegeDestructive})
}

func storyDeploy(t *testing.T, d *mcpgo.Server, ext string) {
	if err := d.AddAdapter(context.Background(), mcpgo.Adapter{ID: "deploy_preview-1-to-2", Tool: "deploy_preview", From: "1", To: "2",
		Class: otelschema.ChangeClassBoundedMigration, WindowEnd: storyWindowEnd, Normalize: regionDefault}); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, d, deployV2, handler(ext, "/deployments", "preview-deployer"),
		mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassBoundedMigration, Privilege: otelschema.PrivilegeWrite})
	mustAdd(t, d, syncV2, handler(ext, "/sync", "project-sync"),
		mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassSemantic, Privilege: otelschema.PrivilegeWrite})
	d.RemoveTool("delete_branch", "")
}

// approve is the person the repair policy asks.
func approve(_ context.Context, r mcpgo.RepairRequest) (any, otelschema.Approval, error) {
	if r.Call.Name == "sync_project" {
		return map[string]any{"project": "org-4821"}, otelschema.ApprovalPerCall, nil
	}
	return map[string]any{"branch": "hotfix", "region": "eu-preview"}, otelschema.ApprovalPerCall, nil
}

// newProvider exports to the ingester over OTLP/gRPC, batched, under the
// run's environment.
func newProvider(t *testing.T, addr, service, env string) *sdklog.LoggerProvider {
	t.Helper()
	exp, err := otlploggrpc.New(context.Background(), otlploggrpc.WithEndpoint(addr), otlploggrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithExportInterval(time.Hour))),
		sdklog.WithResource(resource.NewSchemaless(
			attribute.String(otelschema.AttrServiceName, service),
			attribute.String(otelschema.AttrServiceVersion, "build-42"),
			attribute.String(otelschema.AttrEnvironment, env))))
	t.Cleanup(func() { lp.Shutdown(context.Background()) })
	return lp
}

// streamWriter signals when the response to a session's standalone GET
// starts: the SDK writes its headers once the stream is registered (under
// the stream's lock, so a notification sent from then on is delivered).
type streamWriter struct {
	http.ResponseWriter
	once func()
}

func (w *streamWriter) WriteHeader(code int) {
	w.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK {
		w.once()
	}
}

func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// storyServer is the server side of one run: its URL, how to deploy
// revision 2 (once notifications can reach the session), and how to stop
// after exporting every event.
type storyServer struct {
	url    string
	deploy func(t *testing.T)
	stop   func(t *testing.T)
}

func goStoryServer(t *testing.T, ingest, env, ext string) *storyServer {
	lp := newProvider(t, ingest, serverService, env)
	srv := mcp.NewServer(&mcp.Implementation{Name: "story-server", Version: "1.0.0"}, nil)
	drift := mcpgo.NewServer(srv, &mcpgo.ServerOptions{LoggerProvider: lp})
	storyV1(t, drift, ext)
	stream := make(chan struct{})
	var once sync.Once
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Mcp-Session-Id") != "" {
			w = &streamWriter{ResponseWriter: w, once: func() { once.Do(func() { close(stream) }) }}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return &storyServer{
		url: hs.URL,
		deploy: func(t *testing.T) {
			select {
			case <-stream:
			case <-time.After(30 * time.Second):
				t.Fatal("the client opened no notification stream")
			}
			storyDeploy(t, drift, ext)
		},
		stop: func(t *testing.T) {
			if err := lp.Shutdown(context.Background()); err != nil {
				t.Fatalf("flushing the server's events: %v", err)
			}
		},
	}
}

func nodeEnv(ingest, env, service, ext string) map[string]string {
	return map[string]string{"MCPDRIFT_OTLP_GRPC": ingest, "MCPDRIFT_ENV": env, "MCPDRIFT_SERVICE": service, "EXTERNAL_URL": ext}
}

func tsStoryServer(t *testing.T, ingest, env, ext string, args ...string) *storyServer {
	p := startNode(t, nodeEnv(ingest, env, serverService, ext), "server.js", args...)
	ready := p.expect(t, "ready")
	return &storyServer{
		url: fmt.Sprint(ready["url"]),
		deploy: func(t *testing.T) {
			p.send(t, "deploy")
			p.expect(t, "deployed")
		},
		stop: func(t *testing.T) {
			p.send(t, "quit")
			bye := p.expect(t, "bye")
			p.wait(t)
			if tel, _ := bye["telemetry"].(map[string]any); tel["dropped"] != 0.0 || tel["failed"] != 0.0 {
				t.Errorf("the TypeScript server lost events: %v", tel)
			}
		},
	}
}

// storyRun is what the client of a run reports: the request ids of the
// four planned calls, and how each ended.
type storyRun struct {
	IDs     map[string]string `json:"ids"`
	Results map[string]string `json:"results"`
	Held    map[string]string `json:"held"`
	Session string            `json:"session"`
}

func goStoryClient(t *testing.T, ingest, env, url, runID string, deploy func()) storyRun {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lp := newProvider(t, ingest, clientService, env)
	changed := make(chan struct{}, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0.9.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	agent := mcpgo.NewClient(client, &mcpgo.ClientOptions{LoggerProvider: lp, RunID: runID, ManualRefresh: true})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	policy := mcpgo.SafeRetry(approve)
	outcome := func(r *mcp.CallToolResult) string {
		if rej, ok := mcpgo.ParseRejection(r); ok {
			return rej.ErrorCode
		}
		if r.IsError {
			return "error"
		}
		return "ok"
	}

	if err := agent.Refresh(ctx, cs); err != nil {
		t.Fatal(err)
	}
	plan := func(name string, args map[string]any) *mcp.CallToolParams {
		return agent.Plan(cs, &mcp.CallToolParams{Name: name, Arguments: args})
	}
	a := plan("deploy_preview", map[string]any{"branch": "fix-login"})
	b := plan("sync_project", map[string]any{"project": "payments"})
	c := plan("delete_branch", map[string]any{"branch": "old-feature"})
	d := plan("deploy_preview", map[string]any{"branch": "hotfix"})
	deploy()
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("the Go client received no list_changed")
	}
	run := storyRun{IDs: map[string]string{}, Results: map[string]string{}, Held: map[string]string{}, Session: cs.ID()}
	for k, p := range map[string]*mcp.CallToolParams{"a": a, "b": b, "c": c, "d": d} {
		run.IDs[k] = fmt.Sprint(p.Meta[mcpgo.MetaRequestID])
	}
	ra, err := cs.CallTool(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	run.Results["a"] = outcome(ra)
	if err := agent.Refresh(ctx, cs); err != nil {
		t.Fatal(err)
	}
	rb, err := cs.CallTool(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	run.Results["b"] = outcome(rb)
	rb2, err := agent.Repair(ctx, cs, b, rb, policy)
	if err != nil {
		t.Fatal(err)
	}
	run.Results["b_retry"] = outcome(rb2)
	var se *mcpgo.StalePlanError
	if _, err := cs.CallTool(ctx, c); !errors.As(err, &se) {
		t.Fatalf("C: %v, want a StalePlanError", err)
	}
	run.Held["c"] = "stale"
	if se.Removed {
		run.Held["c"] = "removed"
	}
	run.Results["c"] = "retried"
	if _, err := agent.Repair(ctx, cs, c, se.Result(), policy); errors.Is(err, mcpgo.ErrNoRetry) {
		run.Results["c"] = "abandoned:abandon"
	} else if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, d); !errors.As(err, &se) {
		t.Fatalf("D: %v, want a StalePlanError", err)
	}
	run.Held["d"] = "stale:" + strings.Join(se.Missing, ",")
	rd2, err := agent.Repair(ctx, cs, d, se.Result(), policy)
	if err != nil {
		t.Fatal(err)
	}
	run.Results["d_retry"] = outcome(rd2)
	cs.Close()
	if err := lp.Shutdown(ctx); err != nil {
		t.Fatalf("flushing the client's events: %v", err)
	}
	return run
}

func tsStoryClient(t *testing.T, ingest, env, url, runID string, deploy func()) storyRun {
	e := nodeEnv(ingest, env, clientService, "")
	e["MCP_URL"], e["RUN_ID"] = url, runID
	p := startNode(t, e, "client.js", "story")
	p.expect(t, "planned")
	deploy()
	p.send(t, "deployed")
	done := p.expect(t, "done")
	bye := p.expect(t, "bye")
	p.wait(t)
	if tel, _ := bye["telemetry"].(map[string]any); tel["dropped"] != 0.0 || tel["failed"] != 0.0 {
		t.Errorf("the TypeScript client lost events: %v", tel)
	}
	var run storyRun
	raw, _ := json.Marshal(done)
	if err := json.Unmarshal(raw, &run); err != nil {
		t.Fatal(err)
	}
	return run
}

// storedEvent is one stored drift event, as the story reads it.
type storedEvent struct {
	EventName            string    `json:"event_name"`
	Service              string    `json:"service"`
	Tool                 string    `json:"tool"`
	RequestID            string    `json:"request_id"`
	SessionID            string    `json:"session_id"`
	RunID                string    `json:"run_id"`
	ClientName           string    `json:"client_name"`
	ClientVersion        string    `json:"client_version"`
	Outcome              string    `json:"outcome"`
	RevisionClient       string    `json:"revision_client"`
	RevisionClientSource string    `json:"revision_client_source"`
	RevisionServer       string    `json:"revision_server"`
	RevisionBefore       string    `json:"revision_before"`
	RevisionAfter        string    `json:"revision_after"`
	AdapterID            string    `json:"adapter_id"`
	ChangeClass          string    `json:"change_class"`
	ErrorCode            string    `json:"error_code"`
	RequiredAction       string    `json:"required_action"`
	SideEffectStarted    bool      `json:"side_effect_started"`
	ExternalRequests     int64     `json:"external_requests"`
	ExternalTarget       string    `json:"external_target"`
	RetryOf              string    `json:"retry_of"`
	RetryAttempt         int64     `json:"retry_attempt"`
	RetryAfter           string    `json:"retry_after"`
	RepairAction         string    `json:"repair_action"`
	RepairResult         string    `json:"repair_result"`
	RepairAutomatic      bool      `json:"repair_automatic"`
	Approval             string    `json:"approval"`
	Privilege            string    `json:"privilege"`
	RefreshResult        string    `json:"refresh_result"`
	AdapterFrom          string    `json:"adapter_revision_from"`
	AdapterTo            string    `json:"adapter_revision_to"`
	AdapterWindowEnd     time.Time `json:"adapter_window_end"`
	ProtocolVersion      string    `json:"protocol_version"`
	NotificationLagMs    int64     `json:"notification_lag_ms"`
}

func storedEvents(t *testing.T, st store.Querier, env string) []storedEvent {
	t.Helper()
	q := store.Query{Name: "mcpts_e2e", SQL: `SELECT toString(event_name) AS event_name, service, tool, request_id, session_id, run_id,
		client_name, client_version, toString(outcome) AS outcome, revision_client,
		toString(revision_client_source) AS revision_client_source, revision_server, revision_before, revision_after,
		adapter_id, toString(change_class) AS change_class, error_code, required_action, side_effect_started,
		external_requests, external_target, retry_of, retry_attempt, toString(retry_after) AS retry_after,
		toString(repair_action) AS repair_action, toString(repair_result) AS repair_result, repair_automatic,
		toString(approval) AS approval, toString(privilege) AS privilege, toString(refresh_result) AS refresh_result,
		adapter_revision_from, adapter_revision_to, adapter_window_end, protocol_version, notification_lag_ms
		FROM mcpdrift.events WHERE environment = {env:String} ORDER BY time, event_name`}
	var rows []storedEvent
	if err := st.Query(context.Background(), q, store.Params{}.String("env", env), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// waitStored returns the events stored for env once n are, checking that
// no more arrive shortly after.
func waitStored(t *testing.T, st store.Querier, env string, n int) []storedEvent {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs := storedEvents(t, st, env)
		if len(evs) >= n || time.Now().After(deadline) {
			time.Sleep(300 * time.Millisecond)
			if evs = storedEvents(t, st, env); len(evs) != n {
				var names []string
				for _, e := range evs {
					names = append(names, e.EventName+"@"+e.Service+":"+e.Tool)
				}
				t.Fatalf("stored %d events, want %d: %v", len(evs), n, names)
			}
			return evs
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// eventKind is the kind of a stored event ("call"): its name under the
// conventions' prefix. The store keeps events under the names it always
// has (EventName.Stored), whatever name they were sent under.
func eventKind(stored string) string {
	for _, s := range otelschema.Events() {
		if s.Name.Stored() == stored {
			return strings.TrimPrefix(s.Name.String(), otelschema.EventNamePrefix)
		}
	}
	return stored
}

// render writes an event as a line of the facts the story fixes: the same
// in every pair of languages. Request ids are named by the planned call
// they are (A–D), "new" for an id the harness did not plan.
func render(e storedEvent, label func(string) string) string {
	role := "client"
	if e.Service == serverService {
		role = "server"
	}
	kind := eventKind(e.EventName)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", role, kind, e.Tool)
	kv := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%s", k, v)
		}
	}
	switch kind {
	case "advertised":
		kv("rs", e.RevisionServer)
	case "call":
		kv("outcome", e.Outcome)
		kv("rc", e.RevisionClient)
		kv("src", e.RevisionClientSource)
		kv("rs", e.RevisionServer)
		kv("adapter", e.AdapterID)
		kv("class", e.ChangeClass)
		kv("err", e.ErrorCode)
		kv("action", e.RequiredAction)
		fmt.Fprintf(&b, " side=%v ext=%d", e.SideEffectStarted, e.ExternalRequests)
		kv("target", e.ExternalTarget)
		if e.RetryOf != "" {
			fmt.Fprintf(&b, " retry=%s attempt=%d after=%s auto=%v", label(e.RetryOf), e.RetryAttempt, e.RetryAfter, e.RepairAutomatic)
		}
		kv("approval", e.Approval)
		kv("priv", e.Privilege)
		kv("id", label(e.RequestID))
	case "list_changed":
		kv("rb", e.RevisionBefore)
		kv("ra", e.RevisionAfter)
		kv("rs", e.RevisionServer)
	case "refresh":
		kv("rb", e.RevisionBefore)
		kv("ra", e.RevisionAfter)
		kv("refresh", e.RefreshResult)
	case "repair":
		kv("rc", e.RevisionClient)
		kv("class", e.ChangeClass)
		kv("err", e.ErrorCode)
		kv("action", e.RequiredAction)
		kv("repair", e.RepairAction)
		kv("result", e.RepairResult)
		fmt.Fprintf(&b, " auto=%v", e.RepairAutomatic)
		kv("approval", e.Approval)
		kv("retry", label(e.RetryOf))
		if e.RetryAttempt > 0 {
			fmt.Fprintf(&b, " attempt=%d", e.RetryAttempt)
		}
		kv("id", label(e.RequestID))
	case "adapter":
		kv("adapter", e.AdapterID)
		kv("class", e.ChangeClass)
		kv("from", e.AdapterFrom)
		kv("to", e.AdapterTo)
		kv("window_end", e.AdapterWindowEnd.UTC().Format(time.RFC3339))
		kv("priv", e.Privilege)
	}
	return b.String()
}

// storyEvents are the story's 28 events, worked out by hand from the
// conventions: what each side records of each step.
var storyEvents = []string{
	// The server's advertisements: the three tools at start, then the two
	// whose revision the deploy changes (delete_branch is removed).
	"server advertised deploy_preview rs=1",
	"server advertised sync_project rs=1",
	"server advertised delete_branch rs=1",
	"server advertised deploy_preview rs=2",
	"server advertised sync_project rs=2",
	// The server: the adapter it declares, the one notification (a
	// list_changed event per tool changed), and the calls it received.
	"server adapter deploy_preview adapter=deploy_preview-1-to-2 class=bounded_migration from=1 to=2 window_end=2099-01-01T00:00:00Z priv=write",
	"server list_changed deploy_preview rb=1 ra=2 rs=2",
	"server list_changed sync_project rb=1 ra=2 rs=2",
	"server list_changed delete_branch rb=1",
	// A: sent before the refresh, declared revision 1, served by the adapter.
	"server call deploy_preview outcome=normalized rc=1 src=declared rs=2 adapter=deploy_preview-1-to-2 class=bounded_migration side=true ext=1 target=preview-deployer priv=write id=A",
	// B: still valid under revision 2, so sent; the server rejects a change of meaning.
	"server call sync_project outcome=rejected_incompatible rc=1 src=declared rs=2 class=semantic err=INCOMPATIBLE_TOOL_SCHEMA action=refresh_tools side=false ext=0 priv=write id=B",
	// B's retry, approved by a person, across the semantic change.
	"server call sync_project outcome=current rc=2 src=declared rs=2 class=semantic side=true ext=1 target=project-sync retry=B attempt=1 after=rejected_incompatible auto=false approval=per_call priv=write id=new",
	// D's retry, approved by a person, across the bounded migration.
	"server call deploy_preview outcome=current rc=2 src=declared rs=2 class=bounded_migration side=true ext=1 target=preview-deployer retry=D attempt=1 after=rejected_stale auto=false approval=per_call priv=write id=new",
	// The client: its first list, the notification, the refresh after A.
	"client refresh deploy_preview ra=1 refresh=ok",
	"client refresh sync_project ra=1 refresh=ok",
	"client refresh delete_branch ra=1 refresh=ok",
	"client list_changed ",
	"client refresh deploy_preview rb=1 ra=2 refresh=ok",
	"client refresh sync_project rb=1 ra=2 refresh=ok",
	"client refresh delete_branch rb=1 refresh=ok",
	// Each repair refreshes first, and finds nothing new.
	"client refresh  refresh=ok",
	"client refresh  refresh=ok",
	"client refresh  refresh=ok",
	"client repair sync_project rc=1 class=semantic err=INCOMPATIBLE_TOOL_SCHEMA action=refresh_tools repair=human_approval result=success auto=false approval=per_call retry=B attempt=1 id=new",
	// C and D, held back by the client: the server never saw them.
	"client call delete_branch outcome=removed rc=1 src=declared class=removal err=TOOL_REMOVED action=refresh_tools side=false ext=0 id=C",
	"client repair delete_branch rc=1 err=TOOL_REMOVED action=refresh_tools repair=abandon result=failure auto=false retry=C",
	"client call deploy_preview outcome=rejected_stale rc=1 src=declared rs=2 err=STALE_TOOL_SCHEMA action=refresh_tools side=false ext=0 id=D",
	"client repair deploy_preview rc=1 err=STALE_TOOL_SCHEMA action=refresh_tools repair=human_approval result=success auto=false approval=per_call retry=D attempt=1 id=new",
}

// TestStory runs the story with every pair of a server and a client, Go
// and TypeScript, and checks that each run stores the same events, sends
// the same external requests, and gives the same reports, all worked out
// by hand.
func TestStory(t *testing.T) {
	p := serve(t)
	ingest := p.Ingester().GRPCAddr().String()
	runTag := fmt.Sprintf("%x", time.Now().UnixNano())
	for _, pair := range []struct{ server, client string }{{"go", "go"}, {"ts", "ts"}, {"go", "ts"}, {"ts", "go"}} {
		t.Run(pair.client+"-client-on-"+pair.server+"-server", func(t *testing.T) {
			if pair.server == "ts" || pair.client == "ts" {
				requireNode(t)
			}
			env := runTag + "/story/" + pair.client + "-" + pair.server
			runID := "run-" + pair.client + "-" + pair.server
			ext := &external{}
			extSrv := httptest.NewServer(ext)
			defer extSrv.Close()

			var srv *storyServer
			if pair.server == "go" {
				srv = goStoryServer(t, ingest, env, extSrv.URL)
			} else {
				srv = tsStoryServer(t, ingest, env, extSrv.URL, "story")
			}
			deploy := func() { srv.deploy(t) }
			var run storyRun
			if pair.client == "go" {
				run = goStoryClient(t, ingest, env, srv.url, runID, deploy)
			} else {
				run = tsStoryClient(t, ingest, env, srv.url, runID, deploy)
			}
			srv.stop(t)

			want := map[string]string{"a": "ok", "b": mcpgo.CodeIncompatibleToolSchema, "b_retry": "ok", "c": "abandoned:abandon", "d_retry": "ok"}
			if !mapsEqual(run.Results, want) || run.Held["c"] != "removed" || run.Held["d"] != "stale:region" {
				t.Errorf("the client saw %v, held %v; want %v, C removed, D missing region", run.Results, run.Held, want)
			}

			evs := waitStored(t, p.Store(), env, len(storyEvents))
			labels := map[string]string{}
			for k, id := range run.IDs {
				labels[id] = strings.ToUpper(k)
			}
			label := func(id string) string {
				if id == "" {
					return ""
				}
				if l, ok := labels[id]; ok {
					return l
				}
				return "new"
			}
			var got []string
			for _, e := range evs {
				got = append(got, render(e, label))
			}
			wantEvents := slices.Clone(storyEvents)
			slices.Sort(got)
			slices.Sort(wantEvents)
			if !slices.Equal(got, wantEvents) {
				t.Errorf("stored events differ from the story's:\n%s", diffLines(got, wantEvents))
			}
			checkSession(t, evs, run, runID)
			checkExternal(t, ext.requests(), evs, run)
			checkReports(t, p, env)
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// diffLines lists the lines only one side has.
func diffLines(got, want []string) string {
	var b strings.Builder
	for _, g := range got {
		if i := slices.Index(want, g); i >= 0 {
			want = slices.Delete(slices.Clone(want), i, i+1)
			continue
		}
		fmt.Fprintf(&b, "  stored, not in the story: %s\n", g)
	}
	for _, w := range want {
		fmt.Fprintf(&b, "  in the story, not stored: %s\n", w)
	}
	return b.String()
}

// checkSession checks that both sides name the one session and run: the
// MCP session id, the client's run id, the client's name and the protocol.
func checkSession(t *testing.T, evs []storedEvent, run storyRun, runID string) {
	t.Helper()
	if run.Session == "" {
		t.Fatal("the client reported no session id")
	}
	for _, e := range evs {
		if k := eventKind(e.EventName); k == "adapter" || k == "advertised" {
			continue // the server's own registries: no session
		}
		if e.SessionID != run.Session || e.RunID != runID || e.ClientName != "agent" || e.ClientVersion != "0.9.0" {
			t.Errorf("%s@%s %s: session %q run %q client %s@%s; want %q, %q, agent@0.9.0", eventKind(e.EventName), e.Service, e.Tool,
				e.SessionID, e.RunID, e.ClientName, e.ClientVersion, run.Session, runID)
		}
		if kind := eventKind(e.EventName); kind != "contract_error" && e.ProtocolVersion == "" {
			t.Errorf("%s@%s %s: no protocol version", kind, e.Service, e.Tool)
		}
	}
}

// checkExternal checks the fake external service's log: A normalised to
// us-east-preview, B's and D's retries, each correlated with the call that
// made it; nothing from a rejected or held-back call.
func checkExternal(t *testing.T, reqs []externalRequest, evs []storedEvent, run storyRun) {
	t.Helper()
	retryID := map[string]string{}
	for _, e := range evs {
		if eventKind(e.EventName) == "call" && e.Service == serverService && e.RetryOf != "" {
			retryID[e.Tool] = e.RequestID
		}
	}
	var got []string
	for _, r := range reqs {
		body, _ := json.Marshal(r.Body)
		got = append(got, fmt.Sprintf("%s %s authorized=%v correlation=%s", r.Path, body, r.Authorized, r.Correlation))
	}
	want := []string{
		`/deployments {"branch":"fix-login","region":"us-east-preview"} authorized=true correlation=` + run.IDs["a"],
		`/sync {"project":"org-4821"} authorized=true correlation=` + retryID["sync_project"],
		`/deployments {"branch":"hotfix","region":"eu-preview"} authorized=true correlation=` + retryID["deploy_preview"],
	}
	if !slices.Equal(got, want) {
		t.Errorf("external requests\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
