package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// backend is a migrated store and the database its schema lives in.
type backend struct {
	name string
	open func(t *testing.T) (store.Store, string)
}

var backends = []backend{
	{"embedded", func(t *testing.T) (store.Store, string) {
		clickhousetest.Require(t)
		cfg := embedded.DefaultConfig(t.TempDir())
		st, err := embedded.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st, cfg.Schema.Database
	}},
	{"server", func(t *testing.T) (store.Store, string) {
		st := clickhousetest.Server(t).Open(t)
		return st, st.Schema.Database
	}},
	{"cluster", func(t *testing.T) (store.Store, string) {
		st := clickhousetest.ShardedCluster(t).Open(t)
		return st, st.Schema.Database
	}},
}

// deploySchema is deploy_preview's input schema with the given extra
// properties and required fields.
func deploySchema(extra string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	return json.RawMessage(`{"type":"object","properties":{"branch":{"type":"string"}` + extra + `},"required":` + string(req) + `}`)
}

// instance is one process of the deployer: a real SDK server instrumented
// by mcpgo, exporting its events over OTLP/gRPC as service.instance.id id.
type instance struct {
	srv   *mcp.Server
	drift *mcpgo.Server
	lp    *sdklog.LoggerProvider
}

func start(t *testing.T, addr, id string, now *time.Time) *instance {
	t.Helper()
	exp, err := otlploggrpc.New(context.Background(), otlploggrpc.WithEndpoint(addr), otlploggrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithExportInterval(time.Hour))),
		sdklog.WithResource(resource.NewSchemaless(
			attribute.String(otelschema.AttrServiceName, "deployer"),
			attribute.String(otelschema.AttrServiceInstanceID, id),
			attribute.String(otelschema.AttrEnvironment, "prod"))))
	srv := mcp.NewServer(&mcp.Implementation{Name: "deployer", Version: "1"}, nil)
	return &instance{srv: srv, drift: mcpgo.NewServer(srv, &mcpgo.ServerOptions{LoggerProvider: lp, Now: func() time.Time { return *now }}), lp: lp}
}

// call makes n calls to deploy_preview from a stock SDK client that says
// it planned with revision rev.
func (in *instance) call(t *testing.T, rev string, n int) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := in.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range n {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy_preview", Arguments: map[string]any{"branch": "fix-1"},
			Meta: mcp.Meta{mcpgo.MetaRevision: rev}}); err != nil {
			t.Fatal(err)
		}
	}
}

// withRegion is the adapter from 1 to 2: old calls get region's default.
func withRegion(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, err
	}
	m["region"] = "us-east-preview"
	return json.Marshal(m)
}

func (in *instance) add(t *testing.T, rev string, schema json.RawMessage, class otelschema.ChangeClass) {
	t.Helper()
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deployed"}}}, nil
	}
	if err := in.drift.AddTool(&mcp.Tool{Name: "deploy_preview", Description: "Deploy a branch to a preview environment.", InputSchema: schema},
		handler, mcpgo.Contract{Revision: rev, Change: class, Privilege: otelschema.PrivilegeWrite}); err != nil {
		t.Fatal(err)
	}
}

// stop flushes the instance's events: the ingester acknowledges an export
// once it is stored.
func (in *instance) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := in.lp.Shutdown(ctx); err != nil {
		t.Fatalf("flushing: %v", err)
	}
}

// TestRollingDeploys runs the deployer through two deploys on every
// backend, the instances real SDK servers instrumented by mcpgo, their
// advertisements sent over OTLP to the ingester:
//
//	T0       pod-a starts with deploy_preview 1
//	T0+10m   pod-a restarts, 1 again
//	T0+60m   pod-b starts with 2 (region required, with a default)
//	T0+70m   pod-a re-advertises 1, then stops
//	T0+120m  pod-c starts with 3 (optional notes)
//	T0+125m  pod-b re-advertises 2
//
// Hand-computed: 1 from T0 to T0+70m, 3 advertisements by pod-a; 2 from
// T0+60m to T0+125m by pod-b, 600 s alongside 1, a bounded migration; 3 at
// T0+120m by pod-c, 300 s alongside 2, additive. At T0+125m both 2 and 3
// were advertised within 10 minutes: deploy_preview is mid-deploy.
//
// At T0+65m a stock client calls pod-b three times planning with 1,
// through pod-b's adapter deploy_preview-1-to-2, and twice with 9, never
// advertised: the stale-usage rows and the adapter's say the change from
// 1 to 2, and nothing of 9 → 2.
func TestRollingDeploys(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			st, db := b.open(t)
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			in := startIngest(t, st)
			addr := in.GRPCAddr().String()
			t0 := time.Now().UTC().Truncate(time.Minute).Add(-3 * time.Hour)
			now := t0
			at := func(d time.Duration) { now = t0.Add(d) }

			v1 := deploySchema("", "branch")
			v2 := deploySchema(`,"region":{"type":"string","default":"us-east-preview"}`, "branch", "region")
			v3 := deploySchema(`,"region":{"type":"string","default":"us-east-preview"},"notes":{"type":"string"}`, "branch", "region")

			a := start(t, addr, "pod-a", &now)
			a.add(t, "1", v1, 0)
			a.stop(t)
			at(10 * time.Minute)
			a = start(t, addr, "pod-a", &now)
			a.add(t, "1", v1, 0)
			at(60 * time.Minute)
			pb := start(t, addr, "pod-b", &now)
			pb.add(t, "2", v2, otelschema.ChangeClassBoundedMigration)
			if err := pb.drift.AddAdapter(ctx, mcpgo.Adapter{ID: "deploy_preview-1-to-2", Tool: "deploy_preview", From: "1", To: "2",
				Class: otelschema.ChangeClassBoundedMigration, Normalize: withRegion}); err != nil {
				t.Fatal(err)
			}
			at(65 * time.Minute)
			pb.call(t, "1", 3)
			pb.call(t, "9", 2)
			at(70 * time.Minute)
			a.drift.EmitAdvertised(ctx)
			a.stop(t)
			at(120 * time.Minute)
			c := start(t, addr, "pod-c", &now)
			c.add(t, "3", v3, otelschema.ChangeClassAdditive)
			at(125 * time.Minute)
			pb.drift.EmitAdvertised(ctx)
			pb.stop(t)
			c.stop(t)

			runner, err := queries.New(st, db)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := runner.ToolRevisions(ctx, queries.RegistryFilter{Tenant: store.DefaultTenant, Tools: []string{"deploy_preview"}})
			if err != nil {
				t.Fatal(err)
			}
			h := registry.Histories(rows)
			if len(h) != 1 || h[0].Service != "deployer" || h[0].Environment != "prod" {
				t.Fatalf("histories %+v, want deployer's in prod", h)
			}
			type fig struct {
				rev, instances string
				first, last    time.Duration
				advertisements uint64
				overlap        string
				class          string
			}
			want := []fig{
				{"1", "pod-a", 0, 70 * time.Minute, 3, "null", "-"},
				{"2", "pod-b", 60 * time.Minute, 125 * time.Minute, 2, "600", "bounded_migration"},
				{"3", "pod-c", 120 * time.Minute, 120 * time.Minute, 1, "300", "additive"},
			}
			var got []fig
			for _, r := range h[0].Revisions {
				f := fig{r.Revision, strings.Join(r.InstanceIDs, ","), r.FirstAdvertised.Sub(t0), r.LastAdvertised.Sub(t0), r.Advertisements, "null", "-"}
				if r.OverlapS != nil {
					f.overlap = fmt.Sprint(*r.OverlapS)
				}
				if r.Change != nil {
					f.class = r.Change.Class
				}
				got = append(got, f)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("history:\n got %v\nwant %v", got, want)
			}
			if c := h[0].Revisions[1].Change; c == nil || !strings.Contains(c.Summary, "required `region` was added, with default") {
				t.Errorf("1 → 2: %+v", c)
			}

			deployed, err := registry.DeployedNow(rows, registry.DefaultFreshness)
			if err != nil {
				t.Fatal(err)
			}
			if len(deployed) != 1 || fmt.Sprint(deployed[0].MidDeploy) != "[{deploy_preview [2 3]}]" || !deployed[0].At.Equal(t0.Add(125*time.Minute)) {
				t.Errorf("deployed now %+v, want deploy_preview mid-deploy between 2 and 3", deployed)
			}

			// Stored once per revision: the engine merges every
			// advertisement of a revision into one row.
			if b.name != "cluster" {
				if err := optimize(ctx, st, db); err != nil {
					t.Fatal(err)
				}
				var n []struct {
					N uint64 `json:"n"`
				}
				q := store.Query{Name: "tool_revisions_rows", SQL: "SELECT count() AS n FROM " + db + ".tool_revisions"}
				if err := st.Query(ctx, q, nil, &n); err != nil || len(n) != 1 || n[0].N != 3 {
					t.Errorf("tool_revisions holds %v rows (%v), want 3", n, err)
				}
			}

			reportChanges(t, st, db, t0)
			refusedDefinitions(t, addr, runner)
		})
	}
}

// reportChanges checks the change the reports give pod-b's calls and
// adapter, from the rollups and from the raw events.
func reportChanges(t *testing.T, st store.Store, db string, t0 time.Time) {
	t.Helper()
	ctx := context.Background()
	runner, err := queries.New(st, db, queries.WithChanges(registry.ChangeOf))
	if err != nil {
		t.Fatal(err)
	}
	const required = "required `region` was added, with default \"us-east-preview\": old calls omit it"
	f := queries.Filter{Tenant: store.DefaultTenant, From: t0, To: t0.Add(130 * time.Minute), Tool: "deploy_preview"}
	show := func(class, change *string) string {
		if class == nil || change == nil {
			return fmt.Sprintf("null %v/%v", class == nil, change == nil)
		}
		return *class + ": " + *change
	}
	for name, get := range map[string]func(context.Context, queries.Filter) ([]apiv1.StaleUsageRow, error){
		"rollups": runner.StaleUsage, "raw": runner.RawStaleUsage} {
		rows, err := get(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rows {
			got[fmt.Sprintf("%s→%s (%d calls)", r.RevisionClient, r.RevisionServer, r.Calls)] = show(r.ChangeClass, r.Change)
		}
		want := map[string]string{"1→2 (3 calls)": "bounded_migration: " + required, "9→2 (2 calls)": "null true/true"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("stale usage from the %s:\n got %v\nwant %v", name, got, want)
		}
	}
	adapters, err := runner.AdapterRetirement(ctx, f, queries.RetirementOptions{MaxCalls: 5, MaxShare: -1, UnknownSafe: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(adapters) != 1 || adapters[0].AdapterID != "deploy_preview-1-to-2" || adapters[0].Calls != 3 ||
		show(adapters[0].RegistryChangeClass, adapters[0].Change) != "bounded_migration: "+required ||
		!strings.HasSuffix(adapters[0].Reason, "; it bridges 1 → 2: "+required) {
		t.Errorf("adapters %+v", adapters)
	}
}

// optimize merges tool_revisions' parts, as the engine does in time.
func optimize(ctx context.Context, st store.Store, db string) error {
	ex, ok := st.(interface {
		Exec(ctx context.Context, sql string, params store.Params) error
	})
	if !ok {
		return fmt.Errorf("%T cannot run DDL", st)
	}
	return ex.Exec(ctx, "OPTIMIZE TABLE "+db+".tool_revisions FINAL", nil)
}

// refusedDefinitions sends one request of four advertisements, one
// malformed and one oversized: the two are refused through partial
// success naming the attribute, the other two stored.
func refusedDefinitions(t *testing.T, addr string, runner *queries.Runner) {
	t.Helper()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(otelschema.AttrServiceName, "refusals")
	sl := rl.ScopeLogs().AppendEmpty()
	add := func(tool, def string) {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetEventName(otelschema.EventAdvertised.String())
		lr.SetTimestamp(plogTime(time.Now()))
		lr.Attributes().PutStr(otelschema.AttrToolName, tool)
		lr.Attributes().PutStr(otelschema.AttrRevisionServer, "1")
		lr.Attributes().PutStr(otelschema.AttrToolDefinition, def)
	}
	add("ok_one", `{"name":"ok_one","inputSchema":{"type":"object"}}`)
	add("malformed", `{"name":"malformed","inputSchema":`)
	add("oversized", `{"name":"oversized","description":"`+strings.Repeat("x", otelschema.DefaultLimits().MaxDefinitionBytes)+`"}`)
	add("ok_two", `{"name":"ok_two","inputSchema":{"type":"object"}}`)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := plogotlp.NewGRPCClient(conn).Export(ctx, plogotlp.NewExportRequestFromLogs(ld))
	if err != nil {
		t.Fatal(err)
	}
	ps := resp.PartialSuccess()
	if ps.RejectedLogRecords() != 2 || strings.Count(ps.ErrorMessage(), otelschema.AttrToolDefinition) != 2 ||
		!strings.Contains(ps.ErrorMessage(), "exceeds MaxDefinitionBytes") || !strings.Contains(ps.ErrorMessage(), "is not a JSON object") {
		t.Errorf("partial success: %d rejected, %q", ps.RejectedLogRecords(), ps.ErrorMessage())
	}
	rows, err := runner.ToolRevisions(ctx, queries.RegistryFilter{Tenant: store.DefaultTenant, Service: "refusals"})
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, r := range rows {
		tools = append(tools, r.Tool)
	}
	if fmt.Sprint(tools) != "[ok_one ok_two]" {
		t.Errorf("stored %v, want [ok_one ok_two]", tools)
	}
}

// startIngest starts the OTLP ingester on loopback writing to st.
func startIngest(t *testing.T, st store.Writer) *ingest.Server {
	t.Helper()
	cfg := ingest.DefaultConfig()
	cfg.GRPCListen, cfg.HTTPListen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.BatchMaxDelay = 20 * time.Millisecond
	srv, err := ingest.New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("ingest shutdown: %v", err)
		}
	})
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return srv
}

func plogTime(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }
