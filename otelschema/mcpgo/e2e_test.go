package mcpgo_test

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

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/retirement"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// external is the fake external service of the seed: an append-only log of
// the requests it received.
type external struct {
	mu  sync.Mutex
	log []externalRequest
}

type externalRequest struct {
	Method, Path, Authorization, Correlation string
	Body                                     map[string]any
}

func (x *external) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	x.mu.Lock()
	x.log = append(x.log, externalRequest{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Correlation-Id"), m})
	x.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

func (x *external) requests() []externalRequest {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.log)
}

// deployArgs are deploy_preview's arguments over its revisions.
type deployArgs struct {
	Branch        string `json:"branch"`
	Region        string `json:"region,omitempty"`
	ApprovalScope string `json:"approval_scope,omitempty"`
}

// deployHandler returns a handler that validates its revision's required
// fields before anything else, then starts the deployment: one request to
// the external service.
func deployHandler(ext string, required ...string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a deployArgs
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return nil, err
		}
		have := map[string]string{"branch": a.Branch, "region": a.Region, "approval_scope": a.ApprovalScope}
		for _, f := range required {
			if have[f] == "" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: f + " is required"}}}, nil
			}
		}
		body, _ := json.Marshal(a)
		mcpgo.ExternalRequest(ctx, "preview-deployer")
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, ext+"/deployments", strings.NewReader(string(body)))
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
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deploying " + a.Branch + " to " + a.Region}}}, nil
	}
}

func deploySchema(region string, required ...string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"branch":{"type":"string"},` +
		`"region":{"type":"string","enum":["us-east-preview","eu-preview"]` + region + `},` +
		`"approval_scope":{"type":"string","enum":["per_call"]}},` +
		`"required":["` + strings.Join(required, `","`) + `"],"additionalProperties":false}`)
}

// normalizeDeployArgs is the seed's adapter: an old call without a region
// deploys where revision 1 always did.
func normalizeDeployArgs(_ context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var a map[string]any
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, errors.New("expected an object for deploy_preview")
	}
	if b, _ := a["branch"].(string); b == "" {
		return nil, errors.New("the branch field must be a non-empty string")
	}
	if r, ok := a["region"]; ok && r != "us-east-preview" && r != "eu-preview" {
		return nil, errors.New("region must be us-east-preview or eu-preview")
	}
	if _, ok := a["region"]; !ok {
		a["region"] = "us-east-preview"
	}
	return json.Marshal(a)
}

// variant is one run of the seed's transcript.
type variant struct {
	name string
	// v2 switches the server to revision 2.
	v2 func(t *testing.T, d *mcpgo.Server, ext string)
	// approve is the human asked by the client's repair policy.
	approve mcpgo.Approver
	// policy, when set, replaces SafeRetry(approve).
	policy mcpgo.RepairPolicy
	// serverOnly exports the server's events only: the client is
	// instrumented (it stamps its requests) but reports nothing.
	serverOnly bool
}

func newProvider(t *testing.T, addr, service, env string) *sdklog.LoggerProvider {
	t.Helper()
	exp, err := otlploggrpc.New(context.Background(), otlploggrpc.WithEndpoint(addr), otlploggrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	return sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithExportInterval(time.Hour))),
		sdklog.WithResource(resource.NewSchemaless(
			attribute.String(otelschema.AttrServiceName, service),
			attribute.String(otelschema.AttrServiceVersion, "build-42"),
			attribute.String(otelschema.AttrEnvironment, env))))
}

// transcript runs the seed's minimal transcript with the real SDK over the
// streamable HTTP transport on loopback, and returns the first call's
// result, the final result and the external requests seen after the stale
// call and at the end.
type transcriptResult struct {
	first, final   *mcp.CallToolResult
	repairErr      error
	extAfterFirst  []externalRequest
	extAtEnd       []externalRequest
	plannedRequest string
}

func transcript(t *testing.T, v variant, ingestAddr, env string) transcriptResult {
	protocol, _, _ := strings.Cut(env, "/")
	stateless := protocol >= "2026-07-28" // the SDK serves that protocol over HTTP only without sessions
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out transcriptResult

	ext := &external{}
	extSrv := httptest.NewServer(ext)
	defer extSrv.Close()

	serverLP := newProvider(t, ingestAddr, "deploy-mcp", env)
	clientLP := sdklog.NewLoggerProvider() // exports nothing
	if !v.serverOnly {
		clientLP = newProvider(t, ingestAddr, "agent-host", env)
	}

	srv := mcp.NewServer(&mcp.Implementation{Name: "deploy", Version: "1.0.0"}, nil)
	drift := mcpgo.NewServer(srv, &mcpgo.ServerOptions{LoggerProvider: serverLP})
	if err := drift.AddTool(&mcp.Tool{Name: "deploy_preview", Description: "Deploy the current branch to a preview environment.",
		InputSchema: deploySchema("", "branch")}, deployHandler(extSrv.URL, "branch"),
		mcpgo.Contract{Revision: "1", Privilege: otelschema.PrivilegeWrite}); err != nil {
		t.Fatal(err)
	}
	httpSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: stateless}))
	defer httpSrv.Close()

	// 1. Client initialises and receives the tools.listChanged capability.
	changed := make(chan struct{}, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0.9.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	// The seed's transcript sends the prepared call (step 6) before the
	// client refreshes (step 7): the client refreshes itself.
	agent := mcpgo.NewClient(client, &mcpgo.ClientOptions{LoggerProvider: clientLP, RunID: "run-" + env, ManualRefresh: true})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: httpSrv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := agent.Subscribed(ctx, cs); err != nil {
		t.Fatal(err)
	}
	defer serverLP.Shutdown(ctx)
	defer clientLP.Shutdown(ctx)
	if got := cs.InitializeResult().ProtocolVersion; got != protocol {
		t.Fatalf("negotiated protocol %s, want %s", got, protocol)
	}
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("server capabilities %+v: want tools.listChanged", caps)
	}

	// 2. Client lists tools and stores deploy_preview revision 1.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if rev, _ := agent.Revision(cs, "deploy_preview"); rev != "1" {
		t.Fatalf("snapshot revision %q, want 1", rev)
	}

	// 3. Client prepares {"branch":"fix-login"}.
	planned := agent.Plan(cs, &mcp.CallToolParams{Name: "deploy_preview", Arguments: map[string]any{"branch": "fix-login"}})
	out.plannedRequest, _ = planned.Meta[mcpgo.MetaRequestID].(string)

	// 4-5. Server switches to revision 2 and emits list_changed.
	v.v2(t, drift, extSrv.URL)
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed received")
	}

	// 6. Client sends the already prepared revision-1 call.
	if out.first, err = cs.CallTool(ctx, planned); err != nil {
		t.Fatal(err)
	}
	out.extAfterFirst = ext.requests()

	// 7-9. Client refreshes, and retries only if its policy permits.
	out.final = out.first
	if _, rejected := mcpgo.ParseRejection(out.first); rejected {
		policy := v.policy
		if policy == nil {
			policy = mcpgo.SafeRetry(v.approve)
		}
		out.final, out.repairErr = agent.Repair(ctx, cs, planned, out.first, policy)
	} else if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if rev, _ := agent.Revision(cs, "deploy_preview"); rev != "2" {
		t.Errorf("snapshot revision after the refresh %q, want 2", rev)
	}
	out.extAtEnd = ext.requests()

	if err := cs.Close(); err != nil {
		t.Errorf("closing the client session: %v", err)
	}
	for _, lp := range []*sdklog.LoggerProvider{serverLP, clientLP} {
		if err := lp.Shutdown(ctx); err != nil {
			t.Fatalf("flushing drift events: %v", err)
		}
	}
	return out
}

// storedEvent is one stored drift event, as the assertions read it.
type storedEvent struct {
	EventName         string `json:"event_name"`
	Service           string `json:"service"`
	Tool              string `json:"tool"`
	RequestID         string `json:"request_id"`
	Outcome           string `json:"outcome"`
	AdapterID         string `json:"adapter_id"`
	ChangeClass       string `json:"change_class"`
	ErrorCode         string `json:"error_code"`
	SideEffectStarted bool   `json:"side_effect_started"`
	ExternalRequests  int64  `json:"external_requests"`
	RetryOf           string `json:"retry_of"`
	RetryAttempt      int64  `json:"retry_attempt"`
	RetryAfter        string `json:"retry_after"`
	RevisionClient    string `json:"revision_client"`
	RevisionServer    string `json:"revision_server"`
	RevisionBefore    string `json:"revision_before"`
	RevisionAfter     string `json:"revision_after"`
	RepairAction      string `json:"repair_action"`
	RepairResult      string `json:"repair_result"`
	RepairAutomatic   bool   `json:"repair_automatic"`
	Approval          string `json:"approval"`
	ClientName        string `json:"client_name"`
	SessionID         string `json:"session_id"`
	RunID             string `json:"run_id"`
}

func storedEvents(t *testing.T, st store.Querier, env string) []storedEvent {
	t.Helper()
	q := store.Query{Name: "mcpgo_e2e", SQL: `SELECT toString(event_name) AS event_name, service, tool, request_id,
		toString(outcome) AS outcome, adapter_id, toString(change_class) AS change_class, error_code,
		side_effect_started, external_requests, retry_of, retry_attempt, toString(retry_after) AS retry_after,
		revision_client, revision_server,
		revision_before, revision_after, toString(repair_action) AS repair_action,
		toString(repair_result) AS repair_result, repair_automatic, toString(approval) AS approval,
		client_name, session_id, run_id
		FROM mcpdrift.events WHERE environment = {env:String} AND event_name != 'mcp.drift.advertised' ORDER BY time, event_name`}
	var rows []storedEvent
	if err := st.Query(context.Background(), q, store.Params{}.String("env", env), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// filter returns the events named name (and, when not empty, emitted by
// service).
func filter(evs []storedEvent, name, service string) []storedEvent {
	var out []storedEvent
	for _, e := range evs {
		if e.EventName == name && (service == "" || e.Service == service) {
			out = append(out, e)
		}
	}
	return out
}

// TestDriftEndToEnd runs the seed's drift test for real: the SDK's client
// and server over streamable HTTP on loopback, the drift events exported by
// the OpenTelemetry SDK's OTLP/gRPC exporter to the ingester, stored in the
// embedded store, and read back raw and through the reports.
func TestDriftEndToEnd(t *testing.T) {
	ctx := context.Background()
	p := serve(t)
	st, in := p.Store(), p.Ingester()
	// Each run is told apart by its environment, so the shared store may
	// hold earlier runs (go test -count).
	runTag := fmt.Sprintf("%x", time.Now().UnixNano())
	reports, err := queries.New(st, embedded.DefaultConfig("").Schema.Database)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	window := func(env string) queries.Filter {
		return queries.Filter{Tenant: store.DefaultTenant, From: start.Add(-time.Hour), To: time.Now().Add(time.Hour),
			Tool: "deploy_preview", Environment: env}
	}

	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			t.Run("safe_default_adapter", func(t *testing.T) {
				env := protocol + "/" + runTag + "/e2e-safe-default"
				windowEnd := time.Now().Add(30 * 24 * time.Hour).Truncate(time.Second)
				res := transcript(t, variant{name: env, v2: func(t *testing.T, d *mcpgo.Server, ext string) {
					if err := d.AddAdapter(ctx, mcpgo.Adapter{ID: "deploy_preview-1-to-2", Tool: "deploy_preview", From: "1", To: "2",
						Class: otelschema.ChangeClassBoundedMigration, WindowEnd: windowEnd, Normalize: normalizeDeployArgs}); err != nil {
						t.Fatal(err)
					}
					if err := d.AddTool(&mcp.Tool{Name: "deploy_preview", InputSchema: deploySchema("", "branch", "region")},
						deployHandler(ext, "branch", "region"),
						mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassBoundedMigration, Privilege: otelschema.PrivilegeWrite}); err != nil {
						t.Fatal(err)
					}
				}}, in.GRPCAddr().String(), env)

				if res.first.IsError {
					t.Fatalf("the prepared revision-1 call failed: %+v", res.first.Content)
				}
				if len(res.extAtEnd) != 1 {
					t.Fatalf("external requests %+v, want exactly one", res.extAtEnd)
				}
				if r := res.extAtEnd[0]; r.Body["region"] != "us-east-preview" || r.Body["branch"] != "fix-login" ||
					r.Correlation != res.plannedRequest || r.Authorization == "" || r.Method != http.MethodPost {
					t.Errorf("external request %+v: want the normalised fix-login deployment to us-east-preview, correlated", r)
				}

				evs := waitStored(t, st, env, 6)
				calls := filter(evs, "mcp.drift.call", "deploy-mcp")
				if len(calls) != 1 {
					t.Fatalf("stored calls %+v, want 1", calls)
				}
				c := calls[0]
				if c.Outcome != "normalized" || c.AdapterID != "deploy_preview-1-to-2" || c.RevisionClient != "1" || c.RevisionServer != "2" ||
					c.ExternalRequests != 1 || !c.SideEffectStarted || c.RequestID != res.plannedRequest || c.ClientName != "agent" {
					t.Errorf("stored call %+v", c)
				}
				checkListChangedAndRefresh(t, evs)
				if n := len(filter(evs, "mcp.drift.repair", "")); n != 0 {
					t.Errorf("stored %d repairs, want none", n)
				}

				adapters, err := reports.AdapterRetirement(ctx, window(env), retirement.Options{MaxCalls: 0, MaxShare: -1})
				if err != nil {
					t.Fatal(err)
				}
				if len(adapters) != 1 {
					t.Fatalf("adapters %+v, want 1", adapters)
				}
				a := adapters[0]
				if a.AdapterID != "deploy_preview-1-to-2" || !a.Registered || a.RevisionFrom != "1" || a.RevisionTo != "2" ||
					a.ChangeClass != "bounded_migration" || a.Calls != 1 || a.Verdict != retirement.VerdictBlocked ||
					a.WindowEnd == nil || !a.WindowEnd.Equal(windowEnd) {
					t.Errorf("adapter %+v: want deploy_preview-1-to-2 blocked by its one call", a)
				}
				if len(a.BlockingClients) != 1 || !strings.HasPrefix(a.BlockingClients[0].Client, "agent") {
					t.Errorf("blocking clients %+v, want the agent", a.BlockingClients)
				}
				stale, err := reports.StaleUsage(ctx, window(env))
				if err != nil {
					t.Fatal(err)
				}
				if len(stale) != 1 || stale[0].Stale == nil || !*stale[0].Stale || stale[0].Normalized != 1 || stale[0].RevisionClient != "1" || stale[0].RevisionServer != "2" {
					t.Errorf("stale usage %+v, want one normalised call from revision 1 on 2", stale)
				}
			})

			t.Run("approval_scope_change", func(t *testing.T) {
				env := protocol + "/" + runTag + "/e2e-approval-scope"
				asked := 0
				res := transcript(t, variant{name: env,
					v2: func(t *testing.T, d *mcpgo.Server, ext string) {
						if err := d.AddTool(&mcp.Tool{Name: "deploy_preview", InputSchema: deploySchema("", "branch", "region", "approval_scope")},
							deployHandler(ext, "branch", "region", "approval_scope"),
							mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassAuthority, Privilege: otelschema.PrivilegeCredentialed}); err != nil {
							t.Fatal(err)
						}
					},
					approve: func(_ context.Context, r mcpgo.RepairRequest) (any, otelschema.Approval, error) {
						asked++
						if r.Rejection.ChangeClass != otelschema.ChangeClassAuthority || r.Tool == nil {
							return nil, otelschema.ApprovalDenied, nil
						}
						return map[string]any{"branch": "fix-login", "region": "us-east-preview", "approval_scope": "per_call"}, otelschema.ApprovalPerCall, nil
					},
				}, in.GRPCAddr().String(), env)

				rej, ok := mcpgo.ParseRejection(res.first)
				if !ok || rej.ErrorCode != mcpgo.CodeStaleToolSchema || rej.SideEffectStarted || rej.CurrentRevision != "2" ||
					rej.RequiredAction != mcpgo.ActionRefreshTools || rej.ChangeClass != otelschema.ChangeClassAuthority ||
					!slices.Equal(rej.MissingFields, []string{"region", "approval_scope"}) {
					t.Fatalf("first result %+v (%v): want a repairable STALE_TOOL_SCHEMA rejection", rej, ok)
				}
				if len(res.extAfterFirst) != 0 {
					t.Fatalf("the stale call reached the external service: %+v", res.extAfterFirst)
				}
				if asked != 1 {
					t.Errorf("the person was asked %d times, want once (no automatic retry across an authority change)", asked)
				}
				if res.repairErr != nil || res.final == nil || res.final.IsError {
					t.Fatalf("approved retry: %v %+v", res.repairErr, res.final)
				}
				if len(res.extAtEnd) != 1 || res.extAtEnd[0].Body["approval_scope"] != "per_call" || res.extAtEnd[0].Correlation == res.plannedRequest {
					t.Fatalf("external requests %+v: want one, from the approved retry", res.extAtEnd)
				}

				evs := waitStored(t, st, env, 7)
				calls := filter(evs, "mcp.drift.call", "deploy-mcp")
				if len(calls) != 2 {
					t.Fatalf("stored calls %+v, want the stale call and its retry", calls)
				}
				stale, retry := calls[0], calls[1]
				if stale.Outcome != "rejected_stale" || stale.ErrorCode != mcpgo.CodeStaleToolSchema || stale.SideEffectStarted ||
					stale.ExternalRequests != 0 || stale.ChangeClass != "authority" || stale.RequestID != res.plannedRequest {
					t.Errorf("stored stale call %+v", stale)
				}
				if retry.Outcome != "current" || retry.RetryOf != res.plannedRequest || retry.RetryAttempt != 1 || retry.RetryAfter != "rejected_stale" ||
					retry.RequestID == res.plannedRequest || retry.RequestID == "" || retry.Approval != "per_call" || retry.ExternalRequests != 1 {
					t.Errorf("stored retry %+v: want a current call with its own id, retrying %s", retry, res.plannedRequest)
				}
				if retry.ChangeClass != "authority" || retry.RepairAutomatic {
					t.Errorf("stored retry %+v: want it across the authority change, approved by a person (not automatic)", retry)
				}
				repairs := filter(evs, "mcp.drift.repair", "agent-host")
				if len(repairs) != 1 || repairs[0].RepairAction != "human_approval" || repairs[0].RepairAutomatic ||
					repairs[0].RepairResult != "success" || repairs[0].RetryOf != res.plannedRequest || repairs[0].RequestID != retry.RequestID {
					t.Errorf("stored repairs %+v", repairs)
				}
				checkListChangedAndRefresh(t, evs)

				if page, err := reports.Violations(ctx, window(env), queries.Page{}); err != nil || len(page.Rows) != 0 {
					t.Errorf("violations %+v (%v): a retry a person approved is none", page.Rows, err)
				}
				rejections, err := reports.Rejections(ctx, window(env))
				if err != nil {
					t.Fatal(err)
				}
				if len(rejections) != 1 || rejections[0].Rejected != 1 || rejections[0].ErrorCode != mcpgo.CodeStaleToolSchema ||
					rejections[0].Outcome != "rejected_stale" || rejections[0].SideEffectViolations != 0 || rejections[0].ToolCalls != 2 {
					t.Errorf("rejections %+v", rejections)
				}
				rep, err := reports.Repairs(ctx, window(env))
				if err != nil {
					t.Fatal(err)
				}
				if len(rep) != 1 || rep[0].StaleRejections != 1 || rep[0].RetryCalls != 1 || rep[0].HumanApprovals != 1 ||
					rep[0].AutomaticRepairs != 0 || rep[0].Abandons != 0 {
					t.Errorf("repairs %+v", rep)
				}
				prop, err := reports.Propagation(ctx, window(env))
				if err != nil {
					t.Fatal(err)
				}
				if len(prop) != 1 || prop[0].NotifiedSessions != 1 || prop[0].RefreshedSessions != 1 || prop[0].StaleCallsAfterNotice != 1 {
					t.Errorf("propagation %+v: want one notified session that refreshed, after one stale call", prop)
				}
				usage, err := reports.StaleUsage(ctx, window(env))
				if err != nil {
					t.Fatal(err)
				}
				var rejected uint64
				for _, u := range usage {
					if u.Stale != nil && *u.Stale {
						rejected += u.Rejected
					}
				}
				if rejected != 1 {
					t.Errorf("stale usage %+v: want the one rejected stale call", usage)
				}
			})

			// An agent whose policy retries automatically across an
			// authority change, which SafeRetry never does: the
			// violations report shows the incident once, whether the
			// client reports its repair too or only the server reports.
			for _, serverOnly := range []bool{false, true} {
				t.Run(fmt.Sprintf("auto_retry_across_authority/server_only=%v", serverOnly), func(t *testing.T) {
					env := fmt.Sprintf("%s/%s/e2e-auto-authority-%v", protocol, runTag, serverOnly)
					unsafe := func(_ context.Context, r mcpgo.RepairRequest) (mcpgo.Decision, error) {
						return mcpgo.Decision{Action: otelschema.RepairActionRefreshRetry,
							Arguments: map[string]any{"branch": "fix-login", "region": "us-east-preview", "approval_scope": "per_call"}}, nil
					}
					res := transcript(t, variant{name: env, serverOnly: serverOnly, policy: unsafe,
						v2: func(t *testing.T, d *mcpgo.Server, ext string) {
							if err := d.AddTool(&mcp.Tool{Name: "deploy_preview", InputSchema: deploySchema("", "branch", "region", "approval_scope")},
								deployHandler(ext, "branch", "region", "approval_scope"),
								mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassAuthority, Privilege: otelschema.PrivilegeCredentialed}); err != nil {
								t.Fatal(err)
							}
						}}, in.GRPCAddr().String(), env)
					if res.repairErr != nil || res.final == nil || res.final.IsError || len(res.extAfterFirst) != 0 || len(res.extAtEnd) != 1 {
						t.Fatalf("automatic retry: %v %+v, external %+v then %+v", res.repairErr, res.final, res.extAfterFirst, res.extAtEnd)
					}
					// The server's list_changed, stale call and retry; the
					// client's two refreshes, list_changed and repair.
					want := 7
					if serverOnly {
						want = 3
					}
					evs := waitStored(t, st, env, want)
					if serverOnly {
						for _, e := range evs {
							if e.Service != "deploy-mcp" {
								t.Fatalf("stored %s from %s: want the server's events only", e.EventName, e.Service)
							}
						}
					}
					calls := filter(evs, "mcp.drift.call", "deploy-mcp")
					if len(calls) != 2 {
						t.Fatalf("stored calls %+v, want the stale call and its retry", calls)
					}
					retry := calls[1]
					if retry.Outcome != "current" || retry.RetryOf != res.plannedRequest || retry.RetryAttempt != 1 || retry.RetryAfter != "rejected_stale" ||
						!retry.RepairAutomatic || retry.ChangeClass != "authority" || retry.RevisionClient != "2" {
						t.Errorf("stored retry %+v: want an automatic current retry of %s across the authority change", retry, res.plannedRequest)
					}
					if repairs := filter(evs, "mcp.drift.repair", "agent-host"); !serverOnly &&
						(len(repairs) != 1 || !repairs[0].RepairAutomatic || repairs[0].ChangeClass != "authority" || repairs[0].RequestID != retry.RequestID) {
						t.Errorf("stored repairs %+v: want the client's one automatic refresh_retry, naming the retry", repairs)
					}
					for name, violations := range map[string]func(context.Context, queries.Filter, queries.Page) (queries.ViolationPage, error){
						"served": reports.Violations, "raw": reports.RawViolations} {
						page, err := violations(ctx, window(env), queries.Page{Limit: 100})
						if err != nil {
							t.Fatal(err)
						}
						var rows []apiv1.ViolationRow
						for _, v := range page.Rows {
							if v.Kind == queries.ViolationRetryAcrossChange {
								rows = append(rows, v)
							}
						}
						if len(rows) != 1 || rows[0].RequestID != retry.RequestID ||
							rows[0].Detail != "automatic retry of "+res.plannedRequest+" (attempt 1) across a change of class authority" {
							t.Errorf("%s retry_across_change rows %+v: want one, the server's retry call", name, rows)
						}
					}
				})
			}

			t.Run("required_default_auto_retry", func(t *testing.T) {
				env := protocol + "/" + runTag + "/e2e-auto-retry"
				res := transcript(t, variant{name: env, v2: func(t *testing.T, d *mcpgo.Server, ext string) {
					if err := d.AddTool(&mcp.Tool{Name: "deploy_preview", InputSchema: deploySchema(`,"default":"us-east-preview"`, "branch", "region")},
						deployHandler(ext, "branch", "region"),
						mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassBoundedMigration, Privilege: otelschema.PrivilegeWrite}); err != nil {
						t.Fatal(err)
					}
				}}, in.GRPCAddr().String(), env)
				if _, ok := mcpgo.ParseRejection(res.first); !ok || len(res.extAfterFirst) != 0 {
					t.Fatalf("first result %+v, external %+v: want a rejection and no request", res.first, res.extAfterFirst)
				}
				if res.repairErr != nil || res.final.IsError || len(res.extAtEnd) != 1 ||
					res.extAtEnd[0].Body["region"] != "us-east-preview" || res.extAtEnd[0].Body["branch"] != "fix-login" {
					t.Fatalf("automatic retry: %v, external %+v", res.repairErr, res.extAtEnd)
				}
				evs := waitStored(t, st, env, 7)
				repairs := filter(evs, "mcp.drift.repair", "")
				if len(repairs) != 1 || repairs[0].RepairAction != "refresh_retry" || !repairs[0].RepairAutomatic ||
					repairs[0].RepairResult != "success" || repairs[0].RetryOf != res.plannedRequest {
					t.Errorf("stored repairs %+v", repairs)
				}
				rep, err := reports.Repairs(ctx, window(env))
				if err != nil {
					t.Fatal(err)
				}
				if len(rep) != 1 || rep[0].RefreshRetries != 1 || rep[0].AutomaticSucceeded != 1 || rep[0].AutomaticSuccessRate == nil || *rep[0].AutomaticSuccessRate != 1 {
					t.Errorf("repairs %+v", rep)
				}
			})
		})
	}
}

// waitStored returns the events stored for env once at least n are there.
func waitStored(t *testing.T, st store.Querier, env string, n int) []storedEvent {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		evs := storedEvents(t, st, env)
		if len(evs) >= n {
			return evs
		}
		if time.Now().After(deadline) {
			var names []string
			for _, e := range evs {
				names = append(names, e.EventName+"@"+e.Service)
			}
			t.Errorf("stored %d events %v, want %d", len(evs), names, n)
			return evs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkListChangedAndRefresh checks the notification the server sent and
// the client received, and the client's refreshes: revision 1 first, then 2.
func checkListChangedAndRefresh(t *testing.T, evs []storedEvent) {
	t.Helper()
	sent := filter(evs, "mcp.drift.list_changed", "deploy-mcp")
	if len(sent) != 1 || sent[0].Tool != "deploy_preview" || sent[0].RevisionBefore != "1" || sent[0].RevisionAfter != "2" || sent[0].RevisionServer != "2" {
		t.Errorf("stored server list_changed %+v", sent)
	}
	if got := filter(evs, "mcp.drift.list_changed", "agent-host"); len(got) != 1 {
		t.Errorf("stored client list_changed %+v, want one", got)
	}
	// One session key on both sides: the MCP session id, or, on the
	// sessionless protocol, the run id.
	sessionless := strings.HasPrefix(evs[0].RunID, "run-2026-07-28")
	for _, e := range evs {
		if e.EventName == "mcp.drift.adapter" {
			continue
		}
		if e.RunID != evs[len(evs)-1].RunID || !strings.HasPrefix(e.RunID, "run-") {
			t.Errorf("stored %s with run %q, want the client's run id", e.EventName, e.RunID)
		}
		if sessionless != (e.SessionID == "") || e.SessionID != evs[len(evs)-1].SessionID {
			t.Errorf("stored %s with session %q: want the one MCP session id on both sides", e.EventName, e.SessionID)
		}
	}
	refreshes := filter(evs, "mcp.drift.refresh", "agent-host")
	var pairs []string
	for _, r := range refreshes {
		pairs = append(pairs, r.RevisionBefore+"→"+r.RevisionAfter)
	}
	if !slices.Equal(pairs, []string{"→1", "1→2"}) {
		t.Errorf("stored refreshes %v, want →1 then 1→2", pairs)
	}
}
