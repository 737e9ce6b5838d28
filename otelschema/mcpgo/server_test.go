package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// recorder is an OpenTelemetry log exporter that keeps every record's event
// name and attributes.
type recorder struct {
	mu     sync.Mutex
	events []map[string]string
}

func (r *recorder) Export(_ context.Context, records []sdklog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range records {
		m := map[string]string{"event": rec.EventName()}
		rec.WalkAttributes(func(a attribute.KeyValue) bool { m[string(a.Key)] = a.Value.Emit(); return true })
		r.events = append(r.events, m)
	}
	return nil
}
func (r *recorder) Shutdown(context.Context) error   { return nil }
func (r *recorder) ForceFlush(context.Context) error { return nil }

// named returns the recorded events named name.
func (r *recorder) named(name string) []map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]string
	for _, e := range r.events {
		if e["event"] == name {
			out = append(out, e)
		}
	}
	return out
}

// fixture is an instrumented server and client connected in memory.
type fixture struct {
	rec    *recorder
	srv    *mcp.Server
	drift  *mcpgo.Server
	agent  *mcpgo.Client
	cs     *mcp.ClientSession
	spans  *tracetest.SpanRecorder
	events chan struct{}
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, mcpgo.ServerOptions{})
}

// newFixtureWith is newFixture with the server options opts (their
// LoggerProvider is the fixture's).
func newFixtureWith(t *testing.T, opts mcpgo.ServerOptions) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{rec: &recorder{}, spans: tracetest.NewSpanRecorder(), events: make(chan struct{}, 8)}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(f.rec)))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	t.Cleanup(func() { lp.Shutdown(ctx); tp.Shutdown(ctx) })
	f.srv = mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	opts.LoggerProvider = lp
	f.drift = mcpgo.NewServer(f.srv, &opts)
	// A tracing middleware outside the drift middleware, as an OTel MCP
	// instrumentation would be.
	tracer := tp.Tracer("test")
	f.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ctx, span := tracer.Start(ctx, method)
			defer span.End()
			return next(ctx, method, req)
		}
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "2"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case f.events <- struct{}{}:
			default:
			}
		},
	})
	// Refreshing only when told, the client sends what the server tests
	// send, whatever the server changed in between.
	f.agent = mcpgo.NewClient(client, &mcpgo.ClientOptions{LoggerProvider: lp, RunID: "run-test", ManualRefresh: true})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := f.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	if f.cs, err = client.Connect(ctx, ct, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.cs.Close() })
	return f
}

func schema(required ...string) json.RawMessage {
	req, _ := json.Marshal(append([]string{}, required...))
	return json.RawMessage(`{"type":"object","properties":{"project":{"type":"string"},"team":{"type":"string"}},"required":` +
		string(req) + `}`)
}

func okHandler(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
}

func (f *fixture) call(t *testing.T, p *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	res, err := f.cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (f *fixture) lastCall(t *testing.T) map[string]string {
	t.Helper()
	calls := f.rec.named("dev.mcpdrift.call")
	if len(calls) == 0 {
		t.Fatal("no call event")
	}
	return calls[len(calls)-1]
}

func checkAttrs(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (event %v)", k, got[k], v, got)
		}
	}
}

func TestServerOutcomes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	if err := f.drift.AddTool(&mcp.Tool{Name: "run_report", InputSchema: schema("team")}, okHandler,
		mcpgo.Contract{Revision: "1", Privilege: otelschema.PrivilegeRead}); err != nil {
		t.Fatal(err)
	}
	sideEffect := func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mcpgo.ExternalRequest(ctx, "billing-api")
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "upstream 502"}}}, nil
	}
	if err := f.drift.AddTool(&mcp.Tool{Name: "charge", InputSchema: schema()}, sideEffect,
		mcpgo.Contract{Revision: "7", Privilege: otelschema.PrivilegeCredentialed}); err != nil {
		t.Fatal(err)
	}
	f.srv.AddTool(&mcp.Tool{Name: "plain", InputSchema: schema()}, okHandler)
	if _, err := f.cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	planned := f.agent.Plan(f.cs, &mcp.CallToolParams{Name: "run_report", Arguments: map[string]any{"team": "sales"}})
	if got := planned.Meta[mcpgo.MetaRevision]; got != "1" {
		t.Fatalf("planned revision %v, want 1", got)
	}

	// Current.
	f.call(t, planned)
	checkAttrs(t, f.lastCall(t), map[string]string{"dev.mcpdrift.outcome": "current", "dev.mcpdrift.revision.client": "1",
		"dev.mcpdrift.revision.server": "1", "dev.mcpdrift.privilege": "read", "dev.mcpdrift.run.id": "run-test",
		"jsonrpc.request.id": planned.Meta[mcpgo.MetaRequestID].(string), "dev.mcpdrift.client.name": "agent", "dev.mcpdrift.client.version": "2",
		"dev.mcpdrift.side_effect.started": "false", "dev.mcpdrift.external.requests": "0", "dev.mcpdrift.args.raw": `{"team":"sales"}`})

	// A semantic change without an adapter: rejected as incompatible, the
	// handler never runs.
	ran := false
	if err := f.drift.AddTool(&mcp.Tool{Name: "run_report", InputSchema: schema("project")},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ran = true
			return okHandler(nil, nil)
		},
		mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassSemantic}); err != nil {
		t.Fatal(err)
	}
	res := f.call(t, planned)
	rej, ok := mcpgo.ParseRejection(res)
	if !ok || rej.ErrorCode != mcpgo.CodeIncompatibleToolSchema || rej.SideEffectStarted || ran ||
		rej.CurrentRevision != "2" || rej.ChangeClass != otelschema.ChangeClassSemantic {
		t.Errorf("rejection %+v (%v), handler ran %v", rej, ok, ran)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	for _, want := range []string{"run_report", "meaning", "revision 1", "revision 2", "requires project", "Missing: project", "No side effect"} {
		if !strings.Contains(text, want) {
			t.Errorf("rejection text %q lacks %q", text, want)
		}
	}
	checkAttrs(t, f.lastCall(t), map[string]string{"dev.mcpdrift.outcome": "rejected_incompatible",
		"dev.mcpdrift.error.code": mcpgo.CodeIncompatibleToolSchema, "dev.mcpdrift.required_action": "refresh_tools",
		"dev.mcpdrift.change.class": "semantic", "dev.mcpdrift.side_effect.started": "false"})

	// An adapter that refuses the old arguments: rejected_invalid.
	if err := f.drift.AddAdapter(ctx, mcpgo.Adapter{ID: "rr-1-2", Tool: "run_report", From: "1", To: "2",
		Class: otelschema.ChangeClassBoundedMigration,
		Normalize: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, errors.New("team cannot be mapped to a project")
		}}); err != nil {
		t.Fatal(err)
	}
	res = f.call(t, planned)
	if rej, _ := mcpgo.ParseRejection(res); rej.ErrorCode != mcpgo.CodeInvalidArguments || ran {
		t.Errorf("rejection %+v, handler ran %v", rej, ran)
	}
	checkAttrs(t, f.lastCall(t), map[string]string{"dev.mcpdrift.outcome": "rejected_invalid", "dev.mcpdrift.adapter.id": "rr-1-2"})

	// Removal, with a replacement.
	f.drift.RemoveTool("run_report", "run_saved_report")
	res = f.call(t, planned)
	if rej, _ := mcpgo.ParseRejection(res); rej.ErrorCode != mcpgo.CodeToolRemoved || rej.Replacement != "run_saved_report" {
		t.Errorf("removed result %+v", rej)
	}
	checkAttrs(t, f.lastCall(t), map[string]string{"dev.mcpdrift.outcome": "removed", "dev.mcpdrift.change.class": "removal"})

	// A failure after the side effect started.
	f.call(t, &mcp.CallToolParams{Name: "charge", Arguments: map[string]any{}})
	checkAttrs(t, f.lastCall(t), map[string]string{"dev.mcpdrift.outcome": "failed", "dev.mcpdrift.side_effect.started": "true",
		"dev.mcpdrift.external.requests": "1", "dev.mcpdrift.external.target": "billing-api", "dev.mcpdrift.privilege": "credentialed",
		"dev.mcpdrift.revision.client": "7"})

	// A tool added to the SDK directly is recorded without revisions.
	f.call(t, &mcp.CallToolParams{Name: "plain", Arguments: map[string]any{}})
	if c := f.lastCall(t); c["dev.mcpdrift.outcome"] != "current" || c["gen_ai.tool.name"] != "plain" || c["dev.mcpdrift.revision.server"] != "" {
		t.Errorf("plain call %v", c)
	}

	// The tracing span of each call carries the drift attributes, never
	// the arguments.
	var outcomes []string
	for _, s := range f.spans.Ended() {
		if s.Name() != "tools/call" {
			continue
		}
		for _, a := range s.Attributes() {
			if a.Key == otelschema.AttrOutcome {
				outcomes = append(outcomes, a.Value.AsString())
			}
			if a.Key == otelschema.AttrArgsRaw {
				t.Errorf("span carries the arguments")
			}
		}
	}
	if want := "current rejected_incompatible rejected_invalid removed failed current"; strings.Join(outcomes, " ") != want {
		t.Errorf("span outcomes %v, want %s", outcomes, want)
	}
}

// TestServerRetryIdentity: the server's call event of a retry carries the
// identity the client sent in _meta: retry.of, attempt, automatic (only
// when the client said), what it followed (retry.after, only an outcome
// the contract knows), and the class of the change the retry crosses
// when the retried call was planned with an earlier revision.
func TestServerRetryIdentity(t *testing.T) {
	f := newFixture(t)
	if err := f.drift.AddTool(&mcp.Tool{Name: "run_report", InputSchema: schema("team")}, okHandler,
		mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassAuthority}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		meta mcp.Meta
		want map[string]string
	}{
		{"automatic across the change", mcp.Meta{mcpgo.MetaRevision: "2", mcpgo.MetaRetryOf: "r1", mcpgo.MetaRetryAttempt: 1,
			mcpgo.MetaRetryAutomatic: true, mcpgo.MetaRetryRevision: "1", mcpgo.MetaRetryAfter: "rejected_incompatible"},
			map[string]string{"dev.mcpdrift.outcome": "current", "dev.mcpdrift.retry.of": "r1", "dev.mcpdrift.retry.attempt": "1",
				"dev.mcpdrift.repair.automatic": "true", "dev.mcpdrift.change.class": "authority",
				"dev.mcpdrift.retry.after": "rejected_incompatible"}},
		{"approved by a person", mcp.Meta{mcpgo.MetaRevision: "2", mcpgo.MetaRetryOf: "r1", mcpgo.MetaRetryAttempt: 2,
			mcpgo.MetaRetryAutomatic: false, mcpgo.MetaRetryRevision: "1", mcpgo.MetaApproval: "per_call"},
			map[string]string{"dev.mcpdrift.retry.attempt": "2", "dev.mcpdrift.repair.automatic": "false", "dev.mcpdrift.change.class": "authority",
				"dev.mcpdrift.approval": "per_call"}},
		{"a retry at the same revision crosses no change", mcp.Meta{mcpgo.MetaRevision: "2", mcpgo.MetaRetryOf: "r1",
			mcpgo.MetaRetryAutomatic: true, mcpgo.MetaRetryRevision: "2"},
			map[string]string{"dev.mcpdrift.repair.automatic": "true", "dev.mcpdrift.change.class": ""}},
		{"a client that does not say", mcp.Meta{mcpgo.MetaRevision: "2", mcpgo.MetaRetryOf: "r1"},
			map[string]string{"dev.mcpdrift.retry.of": "r1", "dev.mcpdrift.repair.automatic": "", "dev.mcpdrift.change.class": "",
				"dev.mcpdrift.retry.after": ""}},
		{"an outcome mcpdrift does not know", mcp.Meta{mcpgo.MetaRevision: "2", mcpgo.MetaRetryOf: "r1", mcpgo.MetaRetryAfter: "timeout"},
			map[string]string{"dev.mcpdrift.retry.of": "r1", "dev.mcpdrift.retry.after": ""}},
		{"not a retry", mcp.Meta{mcpgo.MetaRevision: "2", mcpgo.MetaRetryAutomatic: true, mcpgo.MetaRetryRevision: "1",
			mcpgo.MetaRetryAfter: "rejected_stale"},
			map[string]string{"dev.mcpdrift.retry.of": "", "dev.mcpdrift.repair.automatic": "", "dev.mcpdrift.change.class": "",
				"dev.mcpdrift.retry.after": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.call(t, &mcp.CallToolParams{Name: "run_report", Arguments: map[string]any{"team": "sales"}, Meta: tc.meta})
			checkAttrs(t, f.lastCall(t), tc.want)
		})
	}
}

func TestAddAdapterValidation(t *testing.T) {
	d := mcpgo.NewServer(mcp.NewServer(&mcp.Implementation{Name: "t"}, nil), nil)
	norm := func(_ context.Context, a json.RawMessage) (json.RawMessage, error) { return a, nil }
	for _, a := range []mcpgo.Adapter{
		{ID: "", Tool: "x", From: "1", To: "2", Class: otelschema.ChangeClassAdditive},
		{ID: "a", Tool: "x", From: "1", To: "1", Class: otelschema.ChangeClassAdditive},
		{ID: "a", Tool: "x", From: "1", To: "2", Class: otelschema.ChangeClassAuthority, Normalize: norm},
		{ID: "a", Tool: "x", From: "1", To: "2", Class: otelschema.ChangeClassSemantic, Normalize: norm},
		{ID: "a", Tool: "x", From: "1", To: "2", Class: otelschema.ChangeClassBoundedMigration},
	} {
		if err := d.AddAdapter(context.Background(), a); !errors.Is(err, mcpgo.ErrInvalidAdapter) {
			t.Errorf("AddAdapter(%+v) = %v, want ErrInvalidAdapter", a, err)
		}
	}
	if err := d.AddTool(nil, okHandler, mcpgo.Contract{}); !errors.Is(err, mcpgo.ErrInvalidTool) {
		t.Errorf("AddTool(nil) = %v", err)
	}
}

func TestAdapterEvents(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	end := time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC)
	if err := f.drift.AddAdapter(ctx, mcpgo.Adapter{ID: "x-1-2", Tool: "x", From: "1", To: "2",
		Class: otelschema.ChangeClassAdditive, WindowEnd: end}); err != nil {
		t.Fatal(err)
	}
	f.drift.EmitAdapters(ctx)
	f.drift.RemoveAdapter(ctx, "x-1-2")
	evs := f.rec.named("dev.mcpdrift.adapter")
	if len(evs) != 3 {
		t.Fatalf("adapter events %v, want 3", evs)
	}
	checkAttrs(t, evs[0], map[string]string{"gen_ai.tool.name": "x", "dev.mcpdrift.adapter.id": "x-1-2", "dev.mcpdrift.change.class": "additive",
		"dev.mcpdrift.adapter.revision.from": "1", "dev.mcpdrift.adapter.revision.to": "2", "dev.mcpdrift.adapter.window_end": "2027-01-31T00:00:00Z"})
	if evs[2]["dev.mcpdrift.adapter.window_end"] == evs[0]["dev.mcpdrift.adapter.window_end"] {
		t.Errorf("a removed adapter's window should end now: %v", evs[2])
	}
}

// TestAdvertise checks that Advertise emits the whole list and the adapter
// registry at once and again each period, and returns when its context
// is done.
func TestAdvertise(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	mustAdd := func(name, rev string) {
		t.Helper()
		if err := f.drift.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}, mcpgo.Contract{Revision: rev}); err != nil {
			t.Fatal(err)
		}
	}
	mustAdd("b_tool", "1")
	mustAdd("a_tool", "3")
	if err := f.drift.AddAdapter(ctx, mcpgo.Adapter{ID: "a-2-to-3", Tool: "a_tool", From: "2", To: "3", Class: otelschema.ChangeClassAdditive}); err != nil {
		t.Fatal(err)
	}
	added := len(f.rec.named(otelschema.EventAdvertised.String()))
	adapters := len(f.rec.named(otelschema.EventAdapter.String()))

	actx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { f.drift.Advertise(actx, 20*time.Millisecond); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(f.rec.named(otelschema.EventAdvertised.String())) < added+6 {
		if time.Now().After(deadline) {
			t.Fatalf("%d advertised events after 10 s, want at least 3 rounds of 2", len(f.rec.named(otelschema.EventAdvertised.String()))-added)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Advertise did not return once its context was done")
	}
	ads := f.rec.named(otelschema.EventAdvertised.String())[added:]
	for i, e := range ads[:6] {
		want := [...]string{"a_tool", "b_tool"}[i%2]
		if e[otelschema.AttrToolName] != want {
			t.Errorf("advertised event %d names %q, want %q: each round is the whole list, sorted", i, e[otelschema.AttrToolName], want)
		}
	}
	if n := len(f.rec.named(otelschema.EventAdapter.String())) - adapters; n < 3 {
		t.Errorf("%d adapter events, want one per round", n)
	}
}

// TestListCacheHint: with ListTTL and ListCacheScope, the tools/list result
// the client receives carries ttlMs and cacheScope, and each advertised
// event the same hint; without them, neither does.
func TestListCacheHint(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name         string
		opts         mcpgo.ServerOptions
		ttl          int
		scope        string
		attrTTL      string
		attrScope    string
		attrsPresent bool
	}{
		{"48h private", mcpgo.ServerOptions{ListTTL: 48 * time.Hour, ListCacheScope: "private"}, 172800000, "private", "172800000", "private", true},
		{"ttl only", mcpgo.ServerOptions{ListTTL: 90 * time.Second}, 90000, "public", "90000", "", true},
		{"none", mcpgo.ServerOptions{}, 0, "public", "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixtureWith(t, c.opts)
			if err := f.drift.AddTool(&mcp.Tool{Name: "run_report", InputSchema: schema("team")}, okHandler, mcpgo.Contract{Revision: "4"}); err != nil {
				t.Fatal(err)
			}
			f.drift.EmitAdvertised(ctx)
			res, err := f.cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.TTLMs != c.ttl || res.CacheScope != c.scope {
				t.Errorf("tools/list carries ttlMs %d, cacheScope %q; want %d, %q", res.TTLMs, res.CacheScope, c.ttl, c.scope)
			}
			ads := f.rec.named(otelschema.EventAdvertised.String())
			if len(ads) == 0 {
				t.Fatal("no advertised event")
			}
			for _, e := range ads {
				ttl, hasTTL := e[otelschema.AttrListTTLMs]
				if ttl != c.attrTTL || hasTTL != c.attrsPresent || e[otelschema.AttrListCacheScope] != c.attrScope {
					t.Errorf("advertised event %v: want %s %q and %s %q", e, otelschema.AttrListTTLMs, c.attrTTL, otelschema.AttrListCacheScope, c.attrScope)
				}
			}
		})
	}
}

// TestToolDigestRevision: a tool added with its SEP-2636 tool digest is
// listed, advertised, planned with and called under the revision that
// records it; a description edit changes that digest, not the contract's
// v1 Digest; a digest of another form is refused.
func TestToolDigestRevision(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	tool := &mcp.Tool{Name: "run_report", Description: "Runs the team's report.", InputSchema: schema("team")}
	td, err := mcpgo.ToolDigest(tool)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.drift.AddTool(tool, okHandler, mcpgo.Contract{ToolDigest: td}); err != nil {
		t.Fatal(err)
	}
	want, err := mcpgo.ToolRevision(td)
	if err != nil {
		t.Fatal(err)
	}
	if otelschema.AlgorithmOf(want) != otelschema.AlgorithmTool {
		t.Fatalf("revision %s reads as %s", want, otelschema.AlgorithmOf(want))
	}
	res, err := f.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Tools[0].Meta[mcpgo.MetaRevision]; got != want {
		t.Fatalf("listed revision %v, want %s", got, want)
	}
	// The listed tool, its revision key left out, has the digest declared.
	if got, err := mcpgo.ToolDigest(res.Tools[0]); err != nil || got != td {
		t.Errorf("the listed tool's digest is %s (%v), the declared %s", got, err, td)
	}
	ads := f.rec.named(otelschema.EventAdvertised.String())
	if len(ads) == 0 || ads[len(ads)-1][otelschema.AttrRevisionServer] != want {
		t.Fatalf("advertised events %v, want the last under %s", ads, want)
	}
	planned := f.agent.Plan(f.cs, &mcp.CallToolParams{Name: "run_report", Arguments: map[string]any{"team": "sales"}})
	f.call(t, planned)
	checkAttrs(t, f.lastCall(t), map[string]string{"dev.mcpdrift.outcome": "current",
		"dev.mcpdrift.revision.client": want, "dev.mcpdrift.revision.server": want})

	// A client that listed the same definition under its v1 digest (the
	// server's name for it before it declared the tool digest) is served
	// as current: one contract under two names.
	v1, err := mcpgo.Digest(tool)
	if err != nil {
		t.Fatal(err)
	}
	f.call(t, &mcp.CallToolParams{Name: "run_report", Arguments: map[string]any{"team": "sales"}, Meta: mcp.Meta{mcpgo.MetaRevision: v1}})
	checkAttrs(t, f.lastCall(t), map[string]string{"dev.mcpdrift.outcome": "current",
		"dev.mcpdrift.revision.client": v1, "dev.mcpdrift.revision.server": want})
	// The v1 digest of another definition is another contract: stale.
	other, _ := mcpgo.Digest(&mcp.Tool{Name: "run_report", InputSchema: schema("project")})
	f.call(t, &mcp.CallToolParams{Name: "run_report", Arguments: map[string]any{"team": "sales"}, Meta: mcp.Meta{mcpgo.MetaRevision: other}})
	checkAttrs(t, f.lastCall(t), map[string]string{"dev.mcpdrift.outcome": "rejected_stale", "dev.mcpdrift.revision.client": other})

	edited := *tool
	edited.Description = "Runs the report of a team."
	etd, err := mcpgo.ToolDigest(&edited)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := mcpgo.Digest(tool)
	d2, _ := mcpgo.Digest(&edited)
	if etd == td || d1 != d2 {
		t.Errorf("a description edit: tool digest %s → %s (must change), v1 digest %s → %s (must not)", td, etd, d1, d2)
	}
	if err := f.drift.AddTool(tool, okHandler, mcpgo.Contract{ToolDigest: "sha256:abc"}); !errors.Is(err, mcpgo.ErrInvalidTool) {
		t.Errorf("a malformed tool digest: %v, want ErrInvalidTool", err)
	}
}
