package mcpgo_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/retirement"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
	"github.com/mcpdrift/mcpdrift/store"
)

// replica is one instance of an instrumented server whose events the
// OpenTelemetry SDK exports to mcpdrift serve.
type replica struct {
	*stockServer
	lp *sdklog.LoggerProvider
}

func newReplica(t *testing.T, grpcAddr, env, instance string) *replica {
	t.Helper()
	exp, err := otlploggrpc.New(context.Background(), otlploggrpc.WithEndpoint(grpcAddr), otlploggrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithExportInterval(time.Hour))),
		sdklog.WithResource(resource.NewSchemaless(
			attribute.String(otelschema.AttrServiceName, "deploy-mcp"),
			attribute.String(otelschema.AttrServiceInstanceID, instance),
			attribute.String(otelschema.AttrEnvironment, env))))
	t.Cleanup(func() { lp.Shutdown(context.Background()) })
	s := &stockServer{rec: &recorder{}, g: &guarded{t: t}}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "deploy", Version: "1"}, nil)
	s.drift = mcpgo.NewServer(s.srv, &mcpgo.ServerOptions{LoggerProvider: lp})
	return &replica{stockServer: s, lp: lp}
}

// TestStockClientsEndToEnd runs the case for real: a client of the
// official SDK with no mcpgo.Client lists deploy_preview at revision 1, the
// server moves to 2 with the seed's adapter, and the client sends its old
// call twice, then a call of revision 2's shape. The servers' events go
// through the OpenTelemetry SDK's OTLP/gRPC exporter into mcpdrift serve,
// and the reports, read through its API, must show the two old calls
// normalised from revision 1 and the new one current, with where each
// client revision came from. Without an adapter the old call is rejected.
// In every case the handler never runs on arguments revision 2 rejects.
func TestStockClientsEndToEnd(t *testing.T) {
	p := serve(t)
	grpcAddr := p.Ingester().GRPCAddr().String()
	api := &apiclient.Client{BaseURL: "http://" + p.API().Addr()}
	runTag := fmt.Sprintf("%x", time.Now().UnixNano())

	type connect func(t *testing.T, env string) (rs []*replica, cs *mcp.ClientSession)
	oneServer := func(t *testing.T, env string, dial func(*mcp.Server) *mcp.ClientSession) ([]*replica, *mcp.ClientSession) {
		r := newReplica(t, grpcAddr, env, "pod-a")
		r.v1(t)
		return []*replica{r}, dial(r.srv)
	}
	for _, tc := range []struct {
		name    string
		connect connect
		source  string // of the client revisions
		adapter bool
	}{
		{"streamable_http", func(t *testing.T, env string) ([]*replica, *mcp.ClientSession) {
			return oneServer(t, env, func(srv *mcp.Server) *mcp.ClientSession {
				hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
				t.Cleanup(hs.Close)
				return stockHTTP(t, hs.URL)
			})
		}, "listed", true},
		{"in_memory", func(t *testing.T, env string) ([]*replica, *mcp.ClientSession) {
			return oneServer(t, env, func(srv *mcp.Server) *mcp.ClientSession {
				st, ct := mcp.NewInMemoryTransports()
				ss, err := srv.Connect(context.Background(), st, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ss.Close() })
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "ide-agent", Version: "1.0"}, nil).Connect(context.Background(), ct, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				return cs
			})
		}, "listed", true},
		{"stateless", func(t *testing.T, env string) ([]*replica, *mcp.ClientSession) {
			return oneServer(t, env, func(srv *mcp.Server) *mcp.ClientSession { return stockHTTP(t, statelessURL(t, srv)) })
		}, "inferred", true},
		{"two_replicas", func(t *testing.T, env string) ([]*replica, *mcp.ClientSession) {
			a, b := newReplica(t, grpcAddr, env, "pod-a"), newReplica(t, grpcAddr, env, "pod-b")
			a.v1(t)
			b.v1(t)
			return []*replica{a, b}, stockHTTP(t, statelessURL(t, a.srv, b.srv))
		}, "inferred", true},
		{"streamable_http_no_adapter", func(t *testing.T, env string) ([]*replica, *mcp.ClientSession) {
			return oneServer(t, env, func(srv *mcp.Server) *mcp.ClientSession {
				hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
				t.Cleanup(hs.Close)
				return stockHTTP(t, hs.URL)
			})
		}, "listed", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := runTag + "/stock-" + tc.name
			rs, cs := tc.connect(t, env)
			list(t, cs)
			for _, r := range rs {
				r.deploy(t, seedV2, tc.adapter)
			}
			var oldResults []*mcp.CallToolResult
			for range 2 {
				oldResults = append(oldResults, callDeploy(t, cs, oldCall))
			}
			list(t, cs)
			if res := callDeploy(t, cs, map[string]any{"branch": "main", "region": "eu-preview"}); res.IsError {
				t.Fatalf("revision 2's call: %v", structured(res))
			}
			var runs []map[string]any
			for _, r := range rs {
				runs = append(runs, r.g.ran()...)
				if err := r.lp.Shutdown(context.Background()); err != nil {
					t.Fatalf("flushing the drift events: %v", err)
				}
			}
			for _, res := range oldResults {
				if rej, rejected := mcpgo.ParseRejection(res); tc.adapter == rejected ||
					(rejected && (rej.ErrorCode != mcpgo.CodeStaleToolSchema || rej.ClientRevision != "1")) {
					t.Errorf("old call's result %v, adapter %v", structured(res), tc.adapter)
				}
			}
			wantRuns := 1
			if tc.adapter {
				wantRuns = 3
			}
			if len(runs) != wantRuns {
				t.Errorf("handler runs %v, want %d", runs, wantRuns)
			}

			// The stored calls, in order, with their sources.
			q := store.Query{Name: "stock_e2e", SQL: `SELECT revision_client, toString(revision_client_source) AS source,
				toString(outcome) AS outcome FROM mcpdrift.events
				WHERE environment = {env:String} AND event_name = 'mcp.drift.call' ORDER BY time`}
			var calls []struct {
				Rev     string `json:"revision_client"`
				Source  string `json:"source"`
				Outcome string `json:"outcome"`
			}
			deadline := time.Now().Add(20 * time.Second)
			for len(calls) < 3 && time.Now().Before(deadline) {
				calls = calls[:0]
				if err := p.Store().Query(context.Background(), q, store.Params{}.String("env", env), &calls); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			oldOutcome := "normalized"
			if !tc.adapter {
				oldOutcome = "rejected_stale"
			}
			var got []string
			for _, c := range calls {
				got = append(got, c.Rev+"/"+c.Source+"/"+c.Outcome)
			}
			old := "1/" + tc.source + "/" + oldOutcome
			if want := []string{old, old, "2/" + tc.source + "/current"}; !slices.Equal(got, want) {
				t.Fatalf("stored calls %v, want %v", got, want)
			}

			// The reports, through the API, as a user reads them.
			filter := url.Values{"from": {"-1h"}, "environment": {env}, "tool": {"deploy_preview"}}
			var usage apiv1.ReportBody[apiv1.StaleUsageRow]
			if err := api.GetJSON(context.Background(), "/api/v1/reports/stale-usage", filter, &usage); err != nil {
				t.Fatal(err)
			}
			var rows []string
			for _, u := range usage.Rows {
				rows = append(rows, fmt.Sprintf("%s→%s calls=%d current=%d normalized=%d rejected=%d stale=%v",
					u.RevisionClient, u.RevisionServer, u.Calls, u.Current, u.Normalized, u.Rejected, u.Stale != nil && *u.Stale))
			}
			slices.Sort(rows)
			staleRow := "1→2 calls=2 current=0 normalized=2 rejected=0 stale=true"
			if !tc.adapter {
				staleRow = "1→2 calls=2 current=0 normalized=0 rejected=2 stale=true"
			}
			if want := []string{staleRow, "2→2 calls=1 current=1 normalized=0 rejected=0 stale=false"}; !slices.Equal(rows, want) {
				t.Errorf("stale usage %v, want %v", rows, want)
			}
			if !tc.adapter {
				return
			}
			query := url.Values{"from": {"-1h"}, "environment": {env}, "max_calls": {"0"}}
			var adapters apiv1.ReportBody[apiv1.AdapterRow]
			if err := api.GetJSON(context.Background(), "/api/v1/reports/adapter-retirement", query, &adapters); err != nil {
				t.Fatal(err)
			}
			if len(adapters.Rows) != 1 {
				t.Fatalf("adapters %+v, want deploy_preview-1-to-2", adapters.Rows)
			}
			if a := adapters.Rows[0]; a.AdapterID != "deploy_preview-1-to-2" || a.Calls != 2 || a.ToolCalls != 3 ||
				a.Verdict != retirement.VerdictBlocked || len(a.BlockingClients) != 1 || !strings.HasPrefix(a.BlockingClients[0].Client, "ide-agent") {
				t.Errorf("adapter %+v: want blocked by the stock client's two calls of three", a)
			}
		})
	}
}
