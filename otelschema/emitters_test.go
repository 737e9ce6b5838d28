package otelschema

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

var updateEmitters = flag.Bool("update-emitters", false, "rewrite testdata/emitters from the shapes below")

// emitterSpan is one span as an emitter sends it.
type emitterSpan struct {
	name      string
	kind      ptrace.SpanKind
	attrs     map[string]any
	errStatus string // an ERROR status with this description ("-" for none)
	exception string // the message of an exception event
}

// emitters are the span shapes of the MCP SDKs that emit spans today, one
// fixture each, written in OTLP JSON under testdata/emitters:
//
//   - python_sdk_v2_server: the official Python SDK v2's SERVER spans, which
//     it emits by default: named `{method} {target}`, with
//     mcp.method.name, mcp.protocol.version, jsonrpc.request.id (a string)
//     and, on tools/call, gen_ai.operation.name = execute_tool and
//     gen_ai.tool.name; an isError result sets error.type = tool_error and
//     an ERROR status without description; an MCP error sets error.type and
//     rpc.response.status_code to its code and the status description to
//     its message.
//   - python_sdk_v2_client: the same SDK's CLIENT spans of the same calls,
//     in the same traces: named `MCP send {method} {target}`, with
//     mcp.method.name and jsonrpc.request.id only; an MCP error raised to
//     the caller is recorded as an exception, with an ERROR status (an
//     isError result is not an error to the client).
//   - fastmcp_server: FastMCP's SERVER spans: rpc.system = mcp,
//     rpc.service, rpc.method, mcp.method.name, fastmcp.server.name,
//     fastmcp.component.type and fastmcp.component.key, which becomes
//     tool:{name}@{version} once the tool is found; an exception is
//     recorded as an event, with an ERROR status and no error.type.
//   - conventions: the OpenTelemetry MCP conventions' own shape for a
//     server and a client, with mcp.session.id, network.transport and, on
//     the client, server.address and server.port.
var emitters = map[string][]emitterSpan{
	"python_sdk_v2_server": {
		{name: "initialize", kind: ptrace.SpanKindServer, attrs: map[string]any{"mcp.method.name": "initialize", "mcp.protocol.version": "2025-11-25", "jsonrpc.request.id": "0"}},
		{name: "tools/list", kind: ptrace.SpanKindServer, attrs: map[string]any{"mcp.method.name": "tools/list", "mcp.protocol.version": "2025-11-25", "jsonrpc.request.id": "1"}},
		{name: "tools/call search_books", kind: ptrace.SpanKindServer, attrs: map[string]any{"mcp.method.name": "tools/call", "mcp.protocol.version": "2025-11-25",
			"jsonrpc.request.id": "2", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_books"}},
		{name: "tools/call search_books", kind: ptrace.SpanKindServer, attrs: map[string]any{"mcp.method.name": "tools/call", "mcp.protocol.version": "2025-11-25",
			"jsonrpc.request.id": "3", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_books", "error.type": "tool_error"}, errStatus: "-"},
		{name: "tools/call reserve_book", kind: ptrace.SpanKindServer, attrs: map[string]any{"mcp.method.name": "tools/call", "mcp.protocol.version": "2025-11-25",
			"jsonrpc.request.id": "4", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "reserve_book", "error.type": "-32602", "rpc.response.status_code": "-32602"},
			errStatus: "Unknown tool: reserve_book"},
		{name: "tools/call search_books", kind: ptrace.SpanKindServer, attrs: map[string]any{"mcp.method.name": "tools/call", "mcp.protocol.version": "2025-11-25",
			"jsonrpc.request.id": "5", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_books", "error.type": "-32602", "rpc.response.status_code": "-32602"},
			errStatus: "Invalid request parameters"},
		{name: "prompts/get summarize", kind: ptrace.SpanKindServer, attrs: map[string]any{"mcp.method.name": "prompts/get", "mcp.protocol.version": "2025-11-25",
			"jsonrpc.request.id": "6", "gen_ai.prompt.name": "summarize"}},
	},
	"python_sdk_v2_client": {
		{name: "MCP send initialize", kind: ptrace.SpanKindClient, attrs: map[string]any{"mcp.method.name": "initialize", "jsonrpc.request.id": "0"}},
		{name: "MCP send tools/list", kind: ptrace.SpanKindClient, attrs: map[string]any{"mcp.method.name": "tools/list", "jsonrpc.request.id": "1"}},
		{name: "MCP send tools/call search_books", kind: ptrace.SpanKindClient, attrs: map[string]any{"mcp.method.name": "tools/call", "jsonrpc.request.id": "2"}},
		{name: "MCP send tools/call search_books", kind: ptrace.SpanKindClient, attrs: map[string]any{"mcp.method.name": "tools/call", "jsonrpc.request.id": "3"}},
		{name: "MCP send tools/call reserve_book", kind: ptrace.SpanKindClient, attrs: map[string]any{"mcp.method.name": "tools/call", "jsonrpc.request.id": "4"},
			errStatus: "Unknown tool: reserve_book", exception: "Unknown tool: reserve_book"},
		{name: "MCP send tools/call search_books", kind: ptrace.SpanKindClient, attrs: map[string]any{"mcp.method.name": "tools/call", "jsonrpc.request.id": "5"},
			errStatus: "Invalid request parameters", exception: "Invalid request parameters"},
		{name: "MCP send prompts/get summarize", kind: ptrace.SpanKindClient, attrs: map[string]any{"mcp.method.name": "prompts/get", "jsonrpc.request.id": "6"}},
	},
	"fastmcp_server": {
		{name: "tools/call greet", kind: ptrace.SpanKindServer, attrs: map[string]any{"rpc.system": "mcp", "rpc.service": "Greeter", "rpc.method": "tools/call",
			"mcp.method.name": "tools/call", "fastmcp.server.name": "Greeter", "fastmcp.component.type": "tool", "fastmcp.component.key": "tool:greet@2"}},
		{name: "tools/call greet", kind: ptrace.SpanKindServer, attrs: map[string]any{"rpc.system": "mcp", "rpc.service": "Greeter", "rpc.method": "tools/call",
			"mcp.method.name": "tools/call", "fastmcp.server.name": "Greeter", "fastmcp.component.type": "tool", "fastmcp.component.key": "tool:greet@1"}},
		{name: "tools/call farewell", kind: ptrace.SpanKindServer, attrs: map[string]any{"rpc.system": "mcp", "rpc.service": "Greeter", "rpc.method": "tools/call",
			"mcp.method.name": "tools/call", "fastmcp.server.name": "Greeter", "fastmcp.component.type": "tool", "fastmcp.component.key": "tool:farewell@"}},
		{name: "tools/call wave", kind: ptrace.SpanKindServer, attrs: map[string]any{"rpc.system": "mcp", "rpc.service": "Greeter", "rpc.method": "tools/call",
			"mcp.method.name": "tools/call", "fastmcp.server.name": "Greeter", "fastmcp.component.type": "tool", "fastmcp.component.key": "wave"},
			errStatus: "-", exception: "Unknown tool: 'wave'"},
		{name: "resources/read config://app", kind: ptrace.SpanKindServer, attrs: map[string]any{"rpc.system": "mcp", "rpc.method": "resources/read",
			"mcp.method.name": "resources/read", "fastmcp.component.type": "resource", "fastmcp.component.key": "resource:config://app@"}},
	},
	"conventions": {
		{name: "tools/call get-weather", kind: ptrace.SpanKindServer, attrs: map[string]any{"mcp.method.name": "tools/call", "gen_ai.tool.name": "get-weather",
			"gen_ai.operation.name": "execute_tool", "jsonrpc.request.id": "42", "mcp.session.id": "191c4850af6c49e08843a3f6c80e5046",
			"mcp.protocol.version": "2025-06-18", "network.transport": "tcp", "network.protocol.name": "http", "network.protocol.version": "2"}},
		{name: "tools/call get-weather", kind: ptrace.SpanKindServer, attrs: map[string]any{"mcp.method.name": "tools/call", "gen_ai.tool.name": "get-weather",
			"jsonrpc.request.id": "43", "mcp.session.id": "191c4850af6c49e08843a3f6c80e5046", "mcp.protocol.version": "2025-06-18",
			"error.type": "tool_error"}, errStatus: "-"},
		{name: "notifications/tools/list_changed", kind: ptrace.SpanKindServer, attrs: map[string]any{"mcp.method.name": "notifications/tools/list_changed",
			"mcp.session.id": "191c4850af6c49e08843a3f6c80e5046"}},
		{name: "tools/list", kind: ptrace.SpanKindClient, attrs: map[string]any{"mcp.method.name": "tools/list", "jsonrpc.request.id": "7",
			"mcp.session.id": "191c4850af6c49e08843a3f6c80e5046", "server.address": "mcp.example.com", "server.port": int64(443)}},
		{name: "tools/call get-weather", kind: ptrace.SpanKindClient, attrs: map[string]any{"mcp.method.name": "tools/call", "gen_ai.tool.name": "get-weather",
			"gen_ai.operation.name": "execute_tool", "jsonrpc.request.id": "44", "mcp.session.id": "191c4850af6c49e08843a3f6c80e5046",
			"mcp.protocol.version": "2025-06-18", "server.address": "mcp.example.com", "server.port": int64(443)}},
	},
}

// emitterTraces builds the request of one emitter: one resource, the
// emitter's scope, the spans one millisecond apart.
func emitterTraces(name string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(AttrServiceName, strings.ReplaceAll(name, "_", "-"))
	rs.Resource().Attributes().PutStr(AttrEnvironment, "emitters")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(map[string]string{"python_sdk_v2_server": "mcp-python-sdk", "python_sdk_v2_client": "mcp-python-sdk", "fastmcp_server": "fastmcp",
		"conventions": "io.opentelemetry.mcp"}[name])
	start := time.Date(2026, 4, 30, 12, 0, 0, 0, time.UTC)
	for i, s := range emitters[name] {
		sp := ss.Spans().AppendEmpty()
		sp.SetName(s.name)
		sp.SetKind(s.kind)
		sp.SetTraceID(pcommon.TraceID{0xe1, byte(len(name)), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(i + 1)})
		sp.SetSpanID(pcommon.SpanID{0xe2, 0, 0, 0, 0, 0, 0, byte(i + 1)})
		t := start.Add(time.Duration(i) * time.Millisecond)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(t))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(t.Add(400 * time.Microsecond)))
		keys := make([]string, 0, len(s.attrs))
		for k := range s.attrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			_ = sp.Attributes().PutEmpty(k).FromRaw(s.attrs[k])
		}
		if s.errStatus != "" {
			sp.Status().SetCode(ptrace.StatusCodeError)
			if s.errStatus != "-" {
				sp.Status().SetMessage(s.errStatus)
			}
		}
		if s.exception != "" {
			ev := sp.Events().AppendEmpty()
			ev.SetName("exception")
			ev.SetTimestamp(pcommon.NewTimestampFromTime(t))
			ev.Attributes().PutStr("exception.type", "fastmcp.exceptions.NotFoundError")
			ev.Attributes().PutStr("exception.message", s.exception)
		}
	}
	return td
}

// emitterSummary is what a fixture's span decodes to, one line per span.
func emitterSummary(events []Event, res Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "accepted %d, rejected %d, ignored %d\n", res.Accepted, res.Rejected, res.Ignored)
	for _, e := range events {
		fmt.Fprintf(&b, "%s tool=%q outcome=%s inferred=%s revision.server=%q error=%q request=%q session=%q view=%q service=%q\n", e.Name, e.Tool, e.Outcome,
			e.Attributes[OutcomeInferredAttr], e.RevisionServer, e.ErrorCode, e.RequestID, e.SessionID, e.ClientView, e.Service)
	}
	for _, err := range res.Errors {
		fmt.Fprintf(&b, "rejected: %v\n", err)
	}
	return b.String()
}

// TestEmitterFixtures decodes the recorded spans of each emitter and
// compares what they become with testdata/emitters/{name}.golden, whose
// every line was checked by hand against the rules of CONVENTIONS.md.
func TestEmitterFixtures(t *testing.T) {
	names := make([]string, 0, len(emitters))
	for n := range emitters {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "emitters", name+".json")
			if *updateEmitters {
				b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(emitterTraces(name))
				if err != nil {
					t.Fatal(err)
				}
				var pretty json.RawMessage = b
				out, _ := json.MarshalIndent(pretty, "", " ")
				if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
			if err != nil {
				t.Fatal(err)
			}
			d := &Decoder{Limits: DefaultLimits(), Now: func() time.Time { return time.Date(2026, 4, 30, 12, 5, 0, 0, time.UTC) }}
			events, res := d.DecodeTraces(td, nil)
			got := emitterSummary(events, res)
			golden := filepath.Join("testdata", "emitters", name+".golden")
			if *updateEmitters {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s decodes to:\n%s\nwant:\n%s", name, got, want)
			}
		})
	}
}
