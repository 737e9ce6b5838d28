package mcpgo_test

import (
	"context"
	"fmt"
	"net/http/httptest"
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
	otelschema.AttrAdapterID, otelschema.AttrChangeClass, otelschema.AttrErrorCode, otelschema.AttrExternalRequests,
	otelschema.AttrRetryAttempt, otelschema.AttrRetryAfter, otelschema.AttrRepairAction, otelschema.AttrRepairAutomatic,
	otelschema.AttrRepairResult,
	otelschema.AttrArgsNormalized}

func (l *lines) Export(_ context.Context, records []sdklog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range records {
		kv := map[string]string{}
		r.WalkAttributes(func(a attribute.KeyValue) bool { kv[string(a.Key)] = a.Value.Emit(); return true })
		s := r.EventName()
		for _, k := range show {
			if v, ok := kv[k]; ok {
				s += " " + strings.TrimPrefix(k, "dev.mcpdrift.") + "=" + v
			}
		}
		l.out = append(l.out, s)
	}
	return nil
}
func (l *lines) Shutdown(context.Context) error   { return nil }
func (l *lines) ForceFlush(context.Context) error { return nil }

// print prints the events, sorted.
func (l *lines) print() {
	l.mu.Lock()
	events := slices.Clone(l.out)
	l.mu.Unlock()
	slices.Sort(events)
	for _, e := range events {
		fmt.Println(e)
	}
}

// printLog prints the fake external service's append-only log, one line
// per request.
func printLog(ext *external) {
	for i, r := range ext.requests() {
		fmt.Printf("external %d: %s %s branch=%v region=%v authorized=%v\n", i+1, r.Method, r.Path,
			r.Body["branch"], r.Body["region"], r.Authorization != "")
	}
}

// session is an instrumented server and client connected in memory, the
// server's tool calling a fake external service on loopback.
type session struct {
	drift   *mcpgo.Server
	agent   *mcpgo.Client
	cs      *mcp.ClientSession
	ext     *external
	extURL  string
	changed chan struct{}
	close   func()
}

func newSession(ctx context.Context, lp *sdklog.LoggerProvider) *session {
	s := &session{ext: &external{}, changed: make(chan struct{}, 1)}
	extSrv := httptest.NewServer(s.ext)
	s.extURL = extSrv.URL
	srv := mcp.NewServer(&mcp.Implementation{Name: "deploy", Version: "1.0.0"}, nil)
	s.drift = mcpgo.NewServer(srv, &mcpgo.ServerOptions{LoggerProvider: lp})
	if err := s.drift.AddTool(&mcp.Tool{Name: "deploy_preview", Description: "Deploy the current branch to a preview environment.",
		InputSchema: deploySchema("", "branch")}, deployHandler(s.extURL, "branch"),
		mcpgo.Contract{Revision: "1", Privilege: otelschema.PrivilegeWrite}); err != nil {
		panic(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0.9.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case s.changed <- struct{}{}:
			default:
			}
		},
	})
	// The transcript sends the prepared call (step 6) before the client
	// refreshes (step 7): the client refreshes itself.
	s.agent = mcpgo.NewClient(client, &mcpgo.ClientOptions{LoggerProvider: lp, RunID: "run-1", ManualRefresh: true})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		panic(err)
	}
	if s.cs, err = client.Connect(ctx, ct, nil); err != nil {
		panic(err)
	}
	s.close = func() { s.cs.Close(); ss.Close(); extSrv.Close() }
	return s
}

func (s *session) waitListChanged() {
	select {
	case <-s.changed:
	case <-time.After(5 * time.Second):
		panic("no notifications/tools/list_changed")
	}
}

// Example runs the seed's drift transcript in memory, on the adapter path:
// the client lists deploy_preview at revision 1 and prepares a call; the
// server moves to revision 2, where region is required, with an adapter
// that keeps the old call's meaning; the prepared call still runs,
// normalised; the client refreshes, needs no retry, and plans its next
// call with region. The fake external service's log shows two deployments
// to us-east-preview, each correlated with its call.
func Example() {
	ctx := context.Background()
	exp := &lines{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	defer lp.Shutdown(ctx)
	s := newSession(ctx, lp)
	defer s.close()

	// 1. The client initialises and receives the tools.listChanged capability.
	fmt.Println("tools.listChanged:", s.cs.InitializeResult().Capabilities.Tools.ListChanged)

	// 2. The client lists tools and stores deploy_preview revision 1.
	if _, err := s.cs.ListTools(ctx, nil); err != nil {
		panic(err)
	}
	rev, _ := s.agent.Revision(s.cs, "deploy_preview")
	fmt.Println("snapshot revision:", rev)

	// 3. The client prepares {"branch":"fix-login"} from its snapshot.
	planned := s.agent.Plan(s.cs, &mcp.CallToolParams{Name: "deploy_preview", Arguments: map[string]any{"branch": "fix-login"}})

	// 4-5. The server switches to revision 2, where region is required,
	// with an adapter for revision-1 calls, and announces it.
	if err := s.drift.AddAdapter(ctx, mcpgo.Adapter{ID: "deploy_preview-1-to-2", Tool: "deploy_preview", From: "1", To: "2",
		Class: otelschema.ChangeClassBoundedMigration, Normalize: normalizeDeployArgs}); err != nil {
		panic(err)
	}
	if err := s.drift.AddTool(&mcp.Tool{Name: "deploy_preview", InputSchema: deploySchema("", "branch", "region")},
		deployHandler(s.extURL, "branch", "region"),
		mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassBoundedMigration, Privilege: otelschema.PrivilegeWrite}); err != nil {
		panic(err)
	}
	s.waitListChanged()

	// 6. The client sends the already prepared revision-1 call.
	res, err := s.cs.CallTool(ctx, planned)
	if err != nil {
		panic(err)
	}
	fmt.Println("revision-1 call:", res.Content[0].(*mcp.TextContent).Text)

	// 7. The client refreshes tools/list.
	if _, err := s.cs.ListTools(ctx, nil); err != nil {
		panic(err)
	}
	rev, _ = s.agent.Revision(s.cs, "deploy_preview")
	fmt.Println("snapshot revision:", rev)

	// 8. The client retries only if its repair policy permits it: the call
	// was served, so there is nothing to repair.
	again, err := s.agent.Repair(ctx, s.cs, planned, res, mcpgo.SafeRetry(nil))
	if err != nil {
		panic(err)
	}
	fmt.Println("retried:", again != res)

	// 9. The client calls revision 2 with {"branch":"fix-login","region":"us-east-preview"}.
	next := s.agent.Plan(s.cs, &mcp.CallToolParams{Name: "deploy_preview",
		Arguments: map[string]any{"branch": "fix-login", "region": "us-east-preview"}})
	if res, err = s.cs.CallTool(ctx, next); err != nil {
		panic(err)
	}
	fmt.Println("revision-2 call:", res.Content[0].(*mcp.TextContent).Text)

	printLog(s.ext)
	ext := s.ext.requests()
	fmt.Println("each correlated with its call:", len(ext) == 2 &&
		ext[0].Correlation == planned.Meta[mcpgo.MetaRequestID] && ext[1].Correlation == next.Meta[mcpgo.MetaRequestID])
	exp.print()
	// Output:
	// tools.listChanged: true
	// snapshot revision: 1
	// revision-1 call: deploying fix-login to us-east-preview
	// snapshot revision: 2
	// retried: false
	// revision-2 call: deploying fix-login to us-east-preview
	// external 1: POST /deployments branch=fix-login region=us-east-preview authorized=true
	// external 2: POST /deployments branch=fix-login region=us-east-preview authorized=true
	// each correlated with its call: true
	// dev.mcpdrift.adapter gen_ai.tool.name=deploy_preview adapter.id=deploy_preview-1-to-2 change.class=bounded_migration
	// dev.mcpdrift.advertised gen_ai.tool.name=deploy_preview revision.server=1
	// dev.mcpdrift.advertised gen_ai.tool.name=deploy_preview revision.server=2
	// dev.mcpdrift.call gen_ai.tool.name=deploy_preview outcome=current revision.client=2 revision.server=2 external.requests=1
	// dev.mcpdrift.call gen_ai.tool.name=deploy_preview outcome=normalized revision.client=1 revision.server=2 adapter.id=deploy_preview-1-to-2 change.class=bounded_migration external.requests=1 args.normalized={"branch":"fix-login","region":"us-east-preview"}
	// dev.mcpdrift.list_changed
	// dev.mcpdrift.list_changed gen_ai.tool.name=deploy_preview revision.server=2 revision.before=1 revision.after=2
	// dev.mcpdrift.refresh gen_ai.tool.name=deploy_preview revision.after=1
	// dev.mcpdrift.refresh gen_ai.tool.name=deploy_preview revision.before=1 revision.after=2
}

// Example_safeRetry runs the seed's drift transcript in memory, on the
// repair path: revision 2 requires region, with a default in the schema,
// and no adapter serves revision 1. The prepared call is rejected with a
// repairable STALE_TOOL_SCHEMA error before any side effect (the external
// log is still empty); the client's repair policy refreshes and, since the
// missing field has a default that is not sensitive, retries by itself
// with region. The external log then holds that one deployment.
func Example_safeRetry() {
	ctx := context.Background()
	exp := &lines{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	defer lp.Shutdown(ctx)
	s := newSession(ctx, lp)
	defer s.close()

	// 1-3. listChanged capability, revision 1 listed, the call prepared.
	fmt.Println("tools.listChanged:", s.cs.InitializeResult().Capabilities.Tools.ListChanged)
	if _, err := s.cs.ListTools(ctx, nil); err != nil {
		panic(err)
	}
	planned := s.agent.Plan(s.cs, &mcp.CallToolParams{Name: "deploy_preview", Arguments: map[string]any{"branch": "fix-login"}})

	// 4-5. Revision 2 requires region, defaulting to us-east-preview.
	if err := s.drift.AddTool(&mcp.Tool{Name: "deploy_preview", InputSchema: deploySchema(`,"default":"us-east-preview"`, "branch", "region")},
		deployHandler(s.extURL, "branch", "region"),
		mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassBoundedMigration, Privilege: otelschema.PrivilegeWrite}); err != nil {
		panic(err)
	}
	s.waitListChanged()

	// 6. The prepared revision-1 call is rejected before any side effect.
	res, err := s.cs.CallTool(ctx, planned)
	if err != nil {
		panic(err)
	}
	rej, _ := mcpgo.ParseRejection(res)
	fmt.Println("revision-1 call:", rej.ErrorCode, "side effect started:", rej.SideEffectStarted, "missing:", rej.MissingFields)
	fmt.Println("external requests:", len(s.ext.requests()))

	// 7-9. Repair refreshes tools/list and, as the policy permits, calls
	// revision 2 with {"branch":"fix-login","region":"us-east-preview"}.
	res, err = s.agent.Repair(ctx, s.cs, planned, res, mcpgo.SafeRetry(nil))
	if err != nil {
		panic(err)
	}
	rev, _ := s.agent.Revision(s.cs, "deploy_preview")
	fmt.Println("snapshot revision:", rev)
	fmt.Println("retry:", res.Content[0].(*mcp.TextContent).Text)

	ext := s.ext.requests()
	printLog(s.ext)
	fmt.Println("correlated with the retry, not the rejected call:", len(ext) == 1 && ext[0].Correlation != planned.Meta[mcpgo.MetaRequestID])
	exp.print()
	// Output:
	// tools.listChanged: true
	// revision-1 call: STALE_TOOL_SCHEMA side effect started: false missing: [region]
	// external requests: 0
	// snapshot revision: 2
	// retry: deploying fix-login to us-east-preview
	// external 1: POST /deployments branch=fix-login region=us-east-preview authorized=true
	// correlated with the retry, not the rejected call: true
	// dev.mcpdrift.advertised gen_ai.tool.name=deploy_preview revision.server=1
	// dev.mcpdrift.advertised gen_ai.tool.name=deploy_preview revision.server=2
	// dev.mcpdrift.call gen_ai.tool.name=deploy_preview outcome=current revision.client=2 revision.server=2 change.class=bounded_migration external.requests=1 retry.attempt=1 retry.after=rejected_stale repair.automatic=true
	// dev.mcpdrift.call gen_ai.tool.name=deploy_preview outcome=rejected_stale revision.client=1 revision.server=2 change.class=bounded_migration error.code=STALE_TOOL_SCHEMA external.requests=0
	// dev.mcpdrift.list_changed
	// dev.mcpdrift.list_changed gen_ai.tool.name=deploy_preview revision.server=2 revision.before=1 revision.after=2
	// dev.mcpdrift.refresh gen_ai.tool.name=deploy_preview revision.after=1
	// dev.mcpdrift.refresh gen_ai.tool.name=deploy_preview revision.before=1 revision.after=2
	// dev.mcpdrift.repair gen_ai.tool.name=deploy_preview revision.client=1 change.class=bounded_migration error.code=STALE_TOOL_SCHEMA retry.attempt=1 repair.action=refresh_retry repair.automatic=true repair.result=success
}
