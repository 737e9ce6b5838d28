// Command driftserver is an example MCP server for `mcpdrift drifttest`,
// built on the official Go SDK and instrumented with otelschema/mcpgo. It
// serves release 1 of five tools (old.json is its tools/list) or release 2,
// which changes three of them and removes one, the way the seed asks:
//
//   - deploy_preview: region becomes required (a bounded migration); the
//     adapter deploy_preview-1-to-2 gives old calls the region old previews
//     went to, eu-preview;
//   - create_issue: labels is renamed tags (a bounded migration); the
//     adapter create_issue-1-to-2 renames it;
//   - close_ticket: ticket, a key such as "OPS-12", becomes the ticket's
//     number (a semantic change): old calls are rejected with
//     INCOMPATIBLE_TOOL_SCHEMA before any side effect;
//   - delete_branch is removed: calls fail with TOOL_REMOVED;
//   - search_docs does not change.
//
// -fault breaks release 2 in one of the ways the seed warns about, so that
// the drift test has something to find: no-adapter (deploy_preview runs old
// calls with a region it makes up), vague-error (deploy_preview answers
// "invalid input"), side-effect (close_ticket rejects an old call after
// closing something), removed-answers (delete_branch, gone from the list,
// still answers success), drops-field (create_issue's adapter loses
// labels instead of renaming them: only the server's call events show it).
//
// -retire serves release 2 without one of its adapters, as the build that
// retires it would: the drift test's -reverse runs against it.
//
// -otlp sends the drift events over OTLP/gRPC to mcpdrift, whose audit
// `mcpdrift drifttest -mcpdrift` reads back, and whose registry of
// advertised definitions `mcpdrift drifttest -deployed` reads the old list
// from; -environment names the deployment they come from.
//
// -list-ttl and -list-cache-scope put a cache hint on every tools/list
// result (ttlMs and cacheScope, SEP-2549) and on the advertised events
// (mcpgo.ServerOptions.ListTTL and ListCacheScope): how long a client may
// keep the list, which the release check's verdicts and the registry's
// revisions name.
//
//	go run ./examples/driftserver -release 2 -listen 127.0.0.1:3001   # http://127.0.0.1:3001/mcp
//	go run ./examples/driftserver -release 2                           # stdio
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// The faults -fault accepts.
const (
	faultNone           = ""
	faultNoAdapter      = "no-adapter"
	faultVagueError     = "vague-error"
	faultSideEffect     = "side-effect"
	faultRemovedAnswers = "removed-answers"
	faultDropsField     = "drops-field"
)

func main() {
	release := flag.Int("release", 2, "the release to serve: 1 or 2")
	fault := flag.String("fault", "", "break release 2: no-adapter, vague-error, side-effect, removed-answers or drops-field")
	listen := flag.String("listen", "", "serve streamable HTTP at http://ADDR/mcp instead of stdio (port 0 picks one)")
	retire := flag.String("retire", "", "serve release 2 without this adapter, as the build that retires it would (deploy_preview-1-to-2 or create_issue-1-to-2)")
	otlp := flag.String("otlp", "", "send the drift events over OTLP/gRPC to this endpoint (host:port, no TLS), such as mcpdrift serve's")
	environment := flag.String("environment", "", "with -otlp: the deployment.environment.name of the events, such as prod or staging")
	var hint listHint
	flag.DurationVar(&hint.ttl, "list-ttl", 0, "the ttlMs of every tools/list result and advertised event, such as 48h (0: no cache hint)")
	flag.StringVar(&hint.scope, "list-cache-scope", "", "with -list-ttl: the cacheScope sent with it, such as shared or private")
	flag.Parse()
	if hint.ttl < 0 || hint.scope != "" && hint.ttl == 0 {
		fmt.Fprintf(os.Stderr, "driftserver: -list-ttl %s -list-cache-scope %q: want a positive ttl, and a scope only with one\n", hint.ttl, hint.scope)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *release, *fault, *retire, *listen, *otlp, *environment, hint); err != nil {
		fmt.Fprintln(os.Stderr, "driftserver:", err)
		os.Exit(1)
	}
}

// listHint is the cache hint of the tool list, -list-ttl and
// -list-cache-scope.
type listHint struct {
	ttl   time.Duration
	scope string
}

func run(ctx context.Context, release int, fault, retire, listen, otlp, environment string, hint listHint) error {
	var provider log.LoggerProvider = noop.NewLoggerProvider()
	if otlp != "" {
		exp, err := otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(otlp), otlploggrpc.WithInsecure())
		if err != nil {
			return err
		}
		// Each event is exported as it is emitted, so that the drift
		// test finds it in the audit without waiting for a batch.
		attrs := []attribute.KeyValue{attribute.String(otelschema.AttrServiceName, "driftserver"),
			attribute.String(otelschema.AttrServiceVersion, fmt.Sprint(release))}
		if environment != "" {
			attrs = append(attrs, attribute.String(otelschema.AttrEnvironment, environment))
		}
		p := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)),
			sdklog.WithResource(resource.NewSchemaless(attrs...)))
		defer p.Shutdown(context.Background())
		provider = p
	}
	srv, err := newServer(ctx, release, fault, retire, provider, hint)
	if err != nil {
		return err
	}
	if listen == "" {
		return srv.Run(ctx, &mcp.StdioTransport{})
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	// The first line of stdout is the endpoint, for scripts and tests
	// that pick port 0.
	fmt.Printf("serving http://%s/mcp\n", ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// object is an input schema: an object with these properties, these
// required, no other.
func object(props map[string]any, required ...string) map[string]any {
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

var (
	str      = map[string]any{"type": "string"}
	strArray = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
)

// The definitions of release 1.
var (
	deployV1 = &mcp.Tool{Name: "deploy_preview", Description: "Deploy a branch to a preview environment.",
		InputSchema: object(map[string]any{"branch": str}, "branch")}
	issueV1 = &mcp.Tool{Name: "create_issue", Description: "Create an issue in the tracker.",
		InputSchema: object(map[string]any{"title": str, "labels": strArray}, "title")}
	closeV1 = &mcp.Tool{Name: "close_ticket", Description: "Close a ticket, named by its key such as OPS-12.",
		InputSchema: object(map[string]any{"ticket": str}, "ticket")}
	deleteV1 = &mcp.Tool{Name: "delete_branch", Description: "Delete a branch.",
		InputSchema: object(map[string]any{"branch": str}, "branch")}
	search = &mcp.Tool{Name: "search_docs", Description: "Search the documentation.",
		InputSchema: object(map[string]any{"query": str}, "query")}
)

// The definitions release 2 changes.
var (
	deployV2 = &mcp.Tool{Name: "deploy_preview", Description: "Deploy a branch to a preview environment.",
		InputSchema: object(map[string]any{"branch": str,
			"region": map[string]any{"type": "string", "enum": []any{"eu-preview", "us-east-preview"}}}, "branch", "region")}
	issueV2 = &mcp.Tool{Name: "create_issue", Description: "Create an issue in the tracker.",
		InputSchema: object(map[string]any{"title": str, "tags": strArray}, "title")}
	closeV2 = &mcp.Tool{Name: "close_ticket", Description: "Close a ticket, named by its key such as OPS-12.",
		InputSchema: object(map[string]any{"ticket": map[string]any{"type": "integer"}}, "ticket")}
)

// handler answers success with the arguments it ran on, after marking its
// side effect started.
func handler(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	mcpgo.SideEffectStarted(ctx)
	var args map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &args)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}},
		StructuredContent: map[string]any{"ran": args}}, nil
}

func newServer(ctx context.Context, release int, fault, retire string, provider log.LoggerProvider, hint listHint) (*mcp.Server, error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "driftserver", Version: fmt.Sprint(release)}, nil)
	drift := mcpgo.NewServer(srv, &mcpgo.ServerOptions{LoggerProvider: provider, ListTTL: hint.ttl, ListCacheScope: hint.scope})
	// The registry's view of what this instance serves stays current for
	// as long as it runs.
	go drift.Advertise(ctx, 0)
	v1 := mcpgo.Contract{Revision: "1"}
	if release == 1 {
		if fault != faultNone {
			return nil, fmt.Errorf("-fault %s: only release 2 can be broken", fault)
		}
		for _, t := range []*mcp.Tool{deployV1, issueV1, closeV1, deleteV1, search} {
			if err := drift.AddTool(t, handler, v1); err != nil {
				return nil, err
			}
		}
		return srv, nil
	}
	if release != 2 {
		return nil, fmt.Errorf("-release %d: want 1 or 2", release)
	}
	if err := drift.AddTool(search, handler, v1); err != nil {
		return nil, err
	}
	migration := otelschema.ChangeClassBoundedMigration
	if err := drift.AddTool(issueV2, handler, mcpgo.Contract{Revision: "2", Change: migration, Earlier: []*mcp.Tool{withRevision(issueV1, "1")}}); err != nil {
		return nil, err
	}
	// addAdapter declares an adapter unless -retire names it.
	addAdapter := func(a mcpgo.Adapter) error {
		if a.ID == retire {
			return nil
		}
		return drift.AddAdapter(ctx, a)
	}
	if err := addAdapter(mcpgo.Adapter{ID: "create_issue-1-to-2", Tool: "create_issue", From: "1", To: "2",
		Class: migration, Normalize: normalizeIssue(fault)}); err != nil {
		return nil, err
	}

	switch fault {
	case faultNoAdapter, faultVagueError:
		// deploy_preview outside the instrumentation, validating nothing
		// against its schema: the old call runs with a region made up,
		// or fails with an error nobody can repair from.
		srv.AddTool(withRevision(deployV2, "2"), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &a)
			if _, ok := a["region"]; !ok && fault == faultVagueError {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "invalid input"}}}, nil
			}
			return handler(ctx, req)
		})
	case faultNone, faultSideEffect, faultRemovedAnswers, faultDropsField:
		if err := drift.AddTool(deployV2, handler, mcpgo.Contract{Revision: "2", Change: migration, Earlier: []*mcp.Tool{withRevision(deployV1, "1")}}); err != nil {
			return nil, err
		}
		if err := addAdapter(mcpgo.Adapter{ID: "deploy_preview-1-to-2", Tool: "deploy_preview", From: "1", To: "2",
			Class: migration, Normalize: defaultRegion}); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("-fault %q: want no-adapter, vague-error, side-effect, removed-answers or drops-field", fault)
	}

	if fault == faultSideEffect {
		// close_ticket outside the instrumentation: it closes first and
		// checks the ticket's type after, too late.
		srv.AddTool(withRevision(closeV2, "2"), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct {
				Ticket any `json:"ticket"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &a)
			if _, ok := a.Ticket.(float64); !ok {
				return &mcp.CallToolResult{IsError: true,
					Content: []mcp.Content{&mcp.TextContent{Text: "close_ticket takes a ticket number since revision 2; the ticket was already closed."}},
					StructuredContent: map[string]any{"error_code": mcpgo.CodeStaleToolSchema, "side_effect_started": true,
						"current_revision": "2", "required_action": mcpgo.ActionRefreshTools}}, nil
			}
			return handler(ctx, req)
		})
	} else if err := drift.AddTool(closeV2, handler, mcpgo.Contract{Revision: "2", Change: otelschema.ChangeClassSemantic,
		Earlier: []*mcp.Tool{withRevision(closeV1, "1")}}); err != nil {
		return nil, err
	}

	if fault == faultRemovedAnswers {
		// A router that still sends delete_branch to its old handler,
		// though the list no longer advertises it.
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && r.Params.Name == "delete_branch" {
					return handler(ctx, r)
				}
				return next(ctx, method, req)
			}
		})
	} else {
		drift.RemoveTool("delete_branch", "")
	}
	return srv, nil
}

// withRevision returns t advertising rev under mcpgo.MetaRevision, as the
// instrumented tools do.
func withRevision(t *mcp.Tool, rev string) *mcp.Tool {
	c := *t
	c.Meta = mcp.Meta{mcpgo.MetaRevision: rev}
	return &c
}

// defaultRegion normalises deploy_preview's revision 1 arguments: old
// calls deployed to eu-preview, the only region then.
func defaultRegion(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a map[string]any
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	a["region"] = "eu-preview"
	return json.Marshal(a)
}

// normalizeIssue normalises create_issue's revision 1 arguments: labels
// is tags. With the drops-field fault it deletes labels instead, a valid
// revision 2 call that has lost what the agent asked for.
func normalizeIssue(fault string) func(context.Context, json.RawMessage) (json.RawMessage, error) {
	return func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		var a map[string]any
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		if l, ok := a["labels"]; ok {
			if fault != faultDropsField {
				a["tags"] = l
			}
			delete(a, "labels")
		}
		return json.Marshal(a)
	}
}
