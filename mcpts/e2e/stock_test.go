package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/retirement"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
	"github.com/mcpdrift/mcpdrift/store"
)

// TestStockClients runs the case on a TypeScript server: a client
// that declares nothing — a plain SDK client, TypeScript or Go — lists
// deploy_preview at revision 1, the server moves to revision 2 (region
// required) with the seed's adapter or without, and the client sends its
// old call twice, lists again, and sends a call of revision 2's shape. The
// server counts the old calls from what it listed to the session, or, when
// it listed nothing to it (stateless), from their arguments; the reports
// through the API say so.
func TestStockClients(t *testing.T) {
	p := serve(t)
	requireNode(t)
	ingest := p.Ingester().GRPCAddr().String()
	runTag := fmt.Sprintf("%x", time.Now().UnixNano())
	for _, tc := range []struct {
		name      string
		client    string // ts or go: a plain SDK client of that language
		stateless bool
		adapter   bool
		source    string // of the client revisions
		// clientID is the client the server can name: on a stateless
		// transport, the TypeScript SDK's server never sees the client's
		// initialize (another request's), and both clients speak a protocol
		// (2025-11-25) whose requests do not carry the client's identity.
		clientID string
	}{
		{"ts_streamable_http", "ts", false, true, "listed", "ide-agent@1.0"},
		{"ts_stateless", "ts", true, true, "inferred", unknownClient},
		{"ts_streamable_http_no_adapter", "ts", false, false, "listed", "ide-agent@1.0"},
		{"go_streamable_http", "go", false, true, "listed", "ide-agent@1.0"},
		{"go_stateless", "go", true, true, "inferred", unknownClient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := runTag + "/stock/" + tc.name
			ext := &external{}
			extSrv := httptest.NewServer(ext)
			defer extSrv.Close()
			args := []string{"stock"}
			if tc.stateless {
				args = append(args, "stateless")
			}
			if !tc.adapter {
				args = append(args, "no-adapter")
			}
			srv := tsStoryServer(t, ingest, env, extSrv.URL, args...)
			var results []string
			if tc.client == "ts" {
				e := nodeEnv(ingest, env, "stock-agent", "")
				e["MCP_URL"] = srv.url
				c := startNode(t, e, "client.js", "stock")
				c.expect(t, "listed")
				srv.deploy(t)
				c.send(t, "deployed")
				done := c.expect(t, "done")
				for _, r := range done["results"].([]any) {
					results = append(results, fmt.Sprint(r))
				}
				c.expect(t, "bye")
				c.wait(t)
			} else {
				results = goStockClient(t, srv)
			}
			srv.stop(t)

			old := "ok"
			if !tc.adapter {
				old = mcpgo.CodeStaleToolSchema
			}
			if want := []string{old, old, "ok"}; !slices.Equal(results, want) {
				t.Errorf("the stock client saw %v, want %v", results, want)
			}
			// The handler ran on valid arguments only: the normalised old
			// calls and the new one, or the new one alone.
			var bodies []string
			for _, r := range ext.requests() {
				bodies = append(bodies, fmt.Sprintf("%v/%v", r.Body["branch"], r.Body["region"]))
			}
			wantBodies := []string{"fix-login/us-east-preview", "fix-login/us-east-preview", "main/eu-preview"}
			if !tc.adapter {
				wantBodies = wantBodies[2:]
			}
			if !slices.Equal(bodies, wantBodies) {
				t.Errorf("external requests %v, want %v", bodies, wantBodies)
			}

			// The stored calls, in order, with their sources.
			q := store.Query{Name: "mcpts_stock_e2e", SQL: `SELECT revision_client, toString(revision_client_source) AS source,
				toString(outcome) AS outcome FROM mcpdrift.events
				WHERE environment = {env:String} AND event_name = {call:String} ORDER BY time`}
			var calls []struct {
				Rev     string `json:"revision_client"`
				Source  string `json:"source"`
				Outcome string `json:"outcome"`
			}
			deadline := time.Now().Add(30 * time.Second)
			for len(calls) < 3 && time.Now().Before(deadline) {
				calls = calls[:0]
				if err := p.Store().Query(context.Background(), q, store.Params{}.String("env", env).String("call", otelschema.EventCall.Stored()), &calls); err != nil {
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
			o := "1/" + tc.source + "/" + oldOutcome
			if want := []string{o, o, "2/" + tc.source + "/current"}; !slices.Equal(got, want) {
				t.Fatalf("stored calls %v, want %v", got, want)
			}

			// The reports, through the API.
			var usage []string
			for _, u := range report[apiv1.StaleUsageRow](t, p, "stale-usage", env, url.Values{"tool": {"deploy_preview"}}) {
				usage = append(usage, fmt.Sprintf("%s→%s calls=%d current=%d normalized=%d rejected=%d stale=%s",
					u.RevisionClient, u.RevisionServer, u.Calls, u.Current, u.Normalized, u.Rejected, flag(u.Stale)))
			}
			slices.Sort(usage)
			staleRow := "1→2 calls=2 current=0 normalized=2 rejected=0 stale=true"
			if !tc.adapter {
				staleRow = "1→2 calls=2 current=0 normalized=0 rejected=2 stale=true"
			}
			if want := []string{staleRow, "2→2 calls=1 current=1 normalized=0 rejected=0 stale=false"}; !slices.Equal(usage, want) {
				t.Errorf("stale usage %v, want %v", usage, want)
			}
			if !tc.adapter {
				return
			}
			adapters := report[apiv1.AdapterRow](t, p, "adapter-retirement", env, url.Values{"max_calls": {"0"}})
			if len(adapters) != 1 {
				t.Fatalf("adapters %+v, want deploy_preview-1-to-2", adapters)
			}
			a := adapters[0]
			var blocking []string
			for _, c := range a.BlockingClients {
				blocking = append(blocking, c.Client)
			}
			if a.AdapterID != "deploy_preview-1-to-2" || a.Calls != 2 || a.ToolCalls != 3 || a.Verdict != retirement.VerdictBlocked ||
				!slices.Equal(blocking, []string{tc.clientID}) {
				t.Errorf("adapter %s: %d of %d calls, %s, blocking %q; want 2 of 3, blocked by %q", a.AdapterID, a.Calls, a.ToolCalls, a.Verdict, blocking, tc.clientID)
			}
		})
	}
}

// unknownClient is how the reports name calls without a client name.
const unknownClient = "(unknown client)"

// goStockClient is a plain client of the Go SDK, declaring nothing.
func goStockClient(t *testing.T, srv *storyServer) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ide-agent", Version: "1.0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	srv.deploy(t)
	call := func(args map[string]any) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy_preview", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if rej, ok := mcpgo.ParseRejection(res); ok {
			return rej.ErrorCode
		}
		if res.IsError {
			return "error: " + strings.TrimSpace(fmt.Sprint(res.Content))
		}
		return "ok"
	}
	out := []string{call(map[string]any{"branch": "fix-login"}), call(map[string]any{"branch": "fix-login"})}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	return append(out, call(map[string]any{"branch": "main", "region": "eu-preview"}))
}
