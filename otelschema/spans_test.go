package otelschema

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// testSpan describes one span of a test request.
type testSpan struct {
	name   string
	kind   ptrace.SpanKind
	status ptrace.StatusCode
	attrs  []kv
	// start and end default to testTime and a millisecond later; set
	// noTimes to send neither.
	start, end time.Time
	noTimes    bool
	// statusMsg is the status description; exception, when set, the
	// message of an exception event.
	statusMsg, exception string
}

// Identities of the test spans: the i-th span of a request gets span id
// {i+1}.
var spanTraceID = pcommon.TraceID{0xa1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

func spanIDOf(i int) pcommon.SpanID { return pcommon.SpanID{0xb2, 0, 0, 0, 0, 0, 0, byte(i + 1)} }

// tracesWith builds a request of one resource and one scope holding the
// spans.
func tracesWith(t testing.TB, resource []kv, spans ...testSpan) ptrace.Traces {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	putAll(t, rs.Resource().Attributes(), resource)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/modelcontextprotocol/go-sdk")
	for i, s := range spans {
		sp := ss.Spans().AppendEmpty()
		sp.SetName(s.name)
		sp.SetKind(s.kind)
		sp.Status().SetCode(s.status)
		sp.SetTraceID(spanTraceID)
		sp.SetSpanID(spanIDOf(i))
		if !s.noTimes {
			start, end := s.start, s.end
			if start.IsZero() {
				start = testTime
			}
			if end.IsZero() {
				end = start.Add(time.Millisecond)
			}
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(end))
		}
		putAll(t, sp.Attributes(), s.attrs)
		sp.Status().SetMessage(s.statusMsg)
		if s.exception != "" {
			ev := sp.Events().AppendEmpty()
			ev.SetName("exception")
			ev.Attributes().PutStr("exception.type", "NotFoundError")
			ev.Attributes().PutStr("exception.message", s.exception)
		}
	}
	return td
}

// serverCall returns a SERVER tools/call span of create_invoice as the
// OpenTelemetry MCP conventions describe it, with extra attributes.
func serverCall(extra ...kv) testSpan {
	return testSpan{
		name: "tools/call create_invoice",
		kind: ptrace.SpanKindServer,
		attrs: append([]kv{
			{AttrMethodName, "tools/call"},
			{AttrToolName, "create_invoice"},
			{AttrRequestID, "42"},
			{AttrSessionID, "191c4850af6c49e0"},
			{AttrProtocolVersion, "2025-06-18"},
			{"network.transport", "tcp"},
		}, extra...),
	}
}

// wantCall is the event of serverCall(), before the changes of a test case.
func wantCall() Event {
	return Event{
		Name:             EventCall,
		Time:             testTime.UnixNano(),
		TraceID:          spanTraceID,
		SpanID:           spanIDOf(0),
		Service:          "billing-mcp",
		ServiceVersion:   "1.4.2",
		ServiceInstance:  "pod-7",
		ServiceNamespace: "payments",
		Environment:      "production",
		Tool:             "create_invoice",
		Method:           "tools/call",
		RequestID:        "42",
		SessionID:        "191c4850af6c49e0",
		ProtocolVersion:  "2025-06-18",
		Attributes:       map[string]string{"network.transport": "tcp"},
	}
}

// inferred marks e's outcome as inferred.
func inferred(e *Event, o Outcome) {
	e.Outcome = o
	e.Attributes[OutcomeInferredAttr] = "true"
}

func TestDecodeTraces(t *testing.T) {
	for _, tc := range []struct {
		name string
		span testSpan
		// want changes wantCall() into the expected event; nil when the
		// span is rejected or ignored.
		want    func(e *Event)
		ignored bool
		err     error  // the reason of a rejection
		msg     string // the rejection contains it
	}{
		// Declared drift: dev.mcpdrift.* read as on log events.
		{name: "declared outcome", span: serverCall(
			kv{AttrOutcome, "normalized"}, kv{AttrAdapterID, "inv-v7-v9"}, kv{AttrRevisionClient, "7"}, kv{AttrRevisionServer, "9"},
			kv{AttrClientName, "claude-code"}, kv{AttrClientVersion, "2.1.0"}, kv{AttrRunID, "run-1"}),
			want: func(e *Event) {
				e.Outcome, e.AdapterID, e.RevisionClient, e.RevisionServer = OutcomeNormalized, "inv-v7-v9", "7", "9"
				e.ClientName, e.ClientVersion, e.RunID = "claude-code", "2.1.0", "run-1"
			}},
		{name: "declared outcome wins over errors", span: serverCall(
			kv{AttrOutcome, "rejected_stale"}, kv{AttrErrorCode, "STALE_TOOL_SCHEMA"}, kv{SpanAttrRPCStatusCode, "-32602"}, kv{AttrSideEffectStarted, false}),
			want: func(e *Event) {
				e.Outcome, e.ErrorCode = OutcomeRejectedStale, "STALE_TOOL_SCHEMA"
				e.Attributes[SpanAttrRPCStatusCode] = "-32602"
			}},
		{name: "a sent marker is dropped when the outcome is declared", span: serverCall(kv{AttrOutcome, "current"}, kv{OutcomeInferredAttr, "true"}),
			want: func(e *Event) { e.Outcome = OutcomeCurrent }},
		{name: "declared removed", span: serverCall(kv{AttrOutcome, "removed"}, kv{SpanAttrErrorType, "-32602"}),
			want: func(e *Event) {
				e.Outcome, e.ErrorCode = OutcomeRemoved, "-32602"
				e.Attributes[SpanAttrErrorType] = "-32602"
			}},

		// Client views: a CLIENT call span is held until its server twin
		// is known to be absent.
		{name: "Python SDK v2 client span", span: testSpan{name: "MCP send tools/call create_invoice", kind: ptrace.SpanKindClient,
			attrs: []kv{{AttrMethodName, "tools/call"}, {AttrRequestID, "42"}}},
			want: func(e *Event) {
				e.ClientView = ClientViewHeld
				e.SessionID, e.ProtocolVersion, e.Attributes = "", "", map[string]string{}
				inferred(e, OutcomeCurrent)
			}},
		{name: "a client span names its server", span: withKind(serverCall(kv{SpanAttrServerAddress, "mcp.example.com"}, kv{SpanAttrServerPort, int64(443)}), ptrace.SpanKindClient),
			want: func(e *Event) {
				e.ClientView = ClientViewHeld
				e.Service, e.ServiceVersion, e.ServiceInstance = "mcp.example.com:443", "", ""
				e.ClientName, e.ClientVersion = "billing-mcp", "1.4.2"
				e.Attributes[SpanAttrServerAddress], e.Attributes[SpanAttrServerPort] = "mcp.example.com", "443"
				inferred(e, OutcomeCurrent)
			}},
		{name: "a client span keeps a declared client", span: withKind(serverCall(kv{SpanAttrServerAddress, "10.0.0.7"},
			kv{AttrClientName, "codex"}, kv{AttrClientVersion, "0.9.1"}), ptrace.SpanKindClient),
			want: func(e *Event) {
				e.ClientView = ClientViewHeld
				e.Service, e.ServiceVersion, e.ServiceInstance = "10.0.0.7", "", ""
				e.ClientName, e.ClientVersion = "codex", "0.9.1"
				e.Attributes[SpanAttrServerAddress] = "10.0.0.7"
				inferred(e, OutcomeCurrent)
			}},
		{name: "a server span keeps its resource as the service", span: serverCall(kv{SpanAttrServerAddress, "mcp.example.com"}),
			want: func(e *Event) {
				e.Attributes[SpanAttrServerAddress] = "mcp.example.com"
				inferred(e, OutcomeCurrent)
			}},

		// Inferred outcomes.
		{name: "success is current, marked inferred", span: serverCall(),
			want: func(e *Event) { inferred(e, OutcomeCurrent) }},
		{name: "same revisions are current", span: serverCall(kv{AttrRevisionClient, "9"}, kv{AttrRevisionServer, "9"}),
			want: func(e *Event) { e.RevisionClient, e.RevisionServer = "9", "9"; inferred(e, OutcomeCurrent) }},
		{name: "status code OK is a success", span: serverCall(kv{SpanAttrRPCStatusCode, "OK"}),
			want: func(e *Event) { e.Attributes[SpanAttrRPCStatusCode] = "OK"; inferred(e, OutcomeCurrent) }},
		{name: "invalid params, string status code", span: withStatus(serverCall(kv{SpanAttrRPCStatusCode, "-32602"}, kv{SpanAttrErrorType, "-32602"}), ptrace.StatusCodeError),
			want: func(e *Event) {
				e.ErrorCode = "-32602"
				e.Attributes[SpanAttrRPCStatusCode], e.Attributes[SpanAttrErrorType] = "-32602", "-32602"
				inferred(e, OutcomeRejectedInvalid)
			}},
		{name: "invalid params, int status code", span: serverCall(kv{SpanAttrRPCStatusCode, int64(-32602)}),
			want: func(e *Event) {
				e.ErrorCode, e.Attributes[SpanAttrRPCStatusCode] = "-32602", "-32602"
				inferred(e, OutcomeRejectedInvalid)
			}},
		{name: "invalid params, integral double status code", span: serverCall(kv{SpanAttrRPCStatusCode, -32602.0}),
			want: func(e *Event) {
				e.ErrorCode, e.Attributes[SpanAttrRPCStatusCode] = "-32602", "-32602"
				inferred(e, OutcomeRejectedInvalid)
			}},
		{name: "invalid params from error.type alone", span: serverCall(kv{SpanAttrErrorType, "-32602"}),
			want: func(e *Event) {
				e.ErrorCode, e.Attributes[SpanAttrErrorType] = "-32602", "-32602"
				inferred(e, OutcomeRejectedInvalid)
			}},
		{name: "invalid params seen by the client is failed", span: withKind(serverCall(kv{SpanAttrRPCStatusCode, int64(-32602)}), ptrace.SpanKindClient),
			want: func(e *Event) {
				e.ClientView = ClientViewHeld
				e.ErrorCode, e.Attributes[SpanAttrRPCStatusCode] = "-32602", "-32602"
				inferred(e, OutcomeFailed)
			}},
		{name: "tool_error is failed", span: withStatus(serverCall(kv{SpanAttrErrorType, "tool_error"}), ptrace.StatusCodeError),
			want: func(e *Event) {
				e.ErrorCode, e.Attributes[SpanAttrErrorType] = "tool_error", "tool_error"
				inferred(e, OutcomeFailed)
			}},
		{name: "method not found on the server is a refused request", span: withStatus(serverCall(kv{SpanAttrRPCStatusCode, "-32601"}, kv{SpanAttrErrorType, "-32601"}), ptrace.StatusCodeError),
			want: func(e *Event) {
				e.ErrorCode = "-32601"
				e.Attributes[SpanAttrRPCStatusCode], e.Attributes[SpanAttrErrorType] = "-32601", "-32601"
				inferred(e, OutcomeRejectedInvalid)
			}},
		{name: "method not found seen by the client is failed", span: withKind(serverCall(kv{SpanAttrRPCStatusCode, "-32601"}), ptrace.SpanKindClient),
			want: func(e *Event) {
				e.ClientView = ClientViewHeld
				e.ErrorCode, e.Attributes[SpanAttrRPCStatusCode] = "-32601", "-32601"
				inferred(e, OutcomeFailed)
			}},
		{name: "parse error on the server is a refused request", span: serverCall(kv{SpanAttrErrorType, "-32700"}),
			want: func(e *Event) {
				e.ErrorCode, e.Attributes[SpanAttrErrorType] = "-32700", "-32700"
				inferred(e, OutcomeRejectedInvalid)
			}},
		{name: "unknown tool in the status message is removed (go-sdk)", span: withMessage(withStatus(serverCall(kv{SpanAttrRPCStatusCode, "-32602"}), ptrace.StatusCodeError), `unknown tool "create_invoice"`),
			want: func(e *Event) {
				e.ErrorCode, e.Attributes[SpanAttrRPCStatusCode] = "-32602", "-32602"
				inferred(e, OutcomeRemoved)
			}},
		{name: "unknown tool in an exception event is removed (FastMCP)", span: withException(withStatus(serverCall(kv{SpanAttrErrorType, "-32602"}), ptrace.StatusCodeError), "Unknown tool: 'create_invoice'"),
			want: func(e *Event) {
				e.ErrorCode, e.Attributes[SpanAttrErrorType] = "-32602", "-32602"
				inferred(e, OutcomeRemoved)
			}},
		{name: "tool not found seen by the client is removed (TypeScript SDK)", span: withMessage(withKind(serverCall(kv{SpanAttrRPCStatusCode, int64(-32602)}), ptrace.SpanKindClient), "MCP error -32602: Tool create_invoice not found"),
			want: func(e *Event) {
				e.ClientView = ClientViewHeld
				e.ErrorCode, e.Attributes[SpanAttrRPCStatusCode] = "-32602", "-32602"
				inferred(e, OutcomeRemoved)
			}},
		{name: "unknown tool with no code is removed (FastMCP)", span: withException(withStatus(serverCall(), ptrace.StatusCodeError), "Unknown tool: 'create_invoice'"),
			want: func(e *Event) { inferred(e, OutcomeRemoved) }},
		{name: "unknown tool words without -32602 are a failure", span: withMessage(withStatus(serverCall(kv{SpanAttrErrorType, "tool_error"}), ptrace.StatusCodeError), "unknown tool in the upstream catalog"),
			want: func(e *Event) {
				e.ErrorCode, e.Attributes[SpanAttrErrorType] = "tool_error", "tool_error"
				inferred(e, OutcomeFailed)
			}},
		{name: "error status alone is failed", span: withStatus(serverCall(), ptrace.StatusCodeError),
			want: func(e *Event) { inferred(e, OutcomeFailed) }},
		{name: "declared error code wins", span: serverCall(kv{SpanAttrErrorType, "tool_error"}, kv{AttrErrorCode, "QUOTA"}),
			want: func(e *Event) {
				e.ErrorCode, e.Attributes[SpanAttrErrorType] = "QUOTA", "tool_error"
				inferred(e, OutcomeFailed)
			}},
		{name: "different revisions cannot be inferred", span: serverCall(kv{AttrRevisionClient, "7"}, kv{AttrRevisionServer, "9"}),
			err: ErrMissingAttribute, msg: `dev.mcpdrift.call: missing required attribute dev.mcpdrift.outcome, which cannot be inferred when dev.mcpdrift.revision.client "7" differs from dev.mcpdrift.revision.server "9"`},
		{name: "different revisions with an error cannot be inferred either", span: serverCall(kv{AttrRevisionClient, "7"}, kv{AttrRevisionServer, "9"}, kv{SpanAttrRPCStatusCode, "-32602"}),
			err: ErrMissingAttribute, msg: "cannot be inferred"},

		// FastMCP's component key.
		{name: "FastMCP version is the server revision", span: serverCall(kv{SpanAttrFastMCPKey, "tool:create_invoice@v2"}, kv{"rpc.system", "mcp"}),
			want: func(e *Event) {
				e.RevisionServer = "v2"
				e.Attributes[SpanAttrFastMCPKey], e.Attributes["rpc.system"] = "tool:create_invoice@v2", "mcp"
				inferred(e, OutcomeCurrent)
			}},
		{name: "FastMCP key gives the tool too", span: testSpan{name: "tools/call", kind: ptrace.SpanKindServer,
			attrs: []kv{{AttrMethodName, "tools/call"}, {SpanAttrFastMCPKey, "tool:create_invoice@2026.11"}}},
			want: func(e *Event) {
				*e = Event{Name: EventCall, Time: testTime.UnixNano(), TraceID: spanTraceID, SpanID: spanIDOf(0),
					Service: "billing-mcp", ServiceVersion: "1.4.2", ServiceInstance: "pod-7", ServiceNamespace: "payments", Environment: "production",
					Tool: "create_invoice", Method: "tools/call", RevisionServer: "2026.11",
					Attributes: map[string]string{SpanAttrFastMCPKey: "tool:create_invoice@2026.11"}}
				inferred(e, OutcomeCurrent)
			}},
		{name: "FastMCP key without a version", span: serverCall(kv{SpanAttrFastMCPKey, "tool:create_invoice@"}),
			want: func(e *Event) {
				e.Attributes[SpanAttrFastMCPKey] = "tool:create_invoice@"
				inferred(e, OutcomeCurrent)
			}},
		{name: "FastMCP key of another tool, or before the lookup, gives nothing", span: serverCall(kv{SpanAttrFastMCPKey, "tool:other@v9"}),
			want: func(e *Event) {
				e.Attributes[SpanAttrFastMCPKey] = "tool:other@v9"
				inferred(e, OutcomeCurrent)
			}},
		{name: "declared revision wins over FastMCP's", span: serverCall(kv{SpanAttrFastMCPKey, "tool:create_invoice@v2"}, kv{AttrRevisionServer, "7"}),
			want: func(e *Event) {
				e.RevisionServer = "7"
				e.Attributes[SpanAttrFastMCPKey] = "tool:create_invoice@v2"
				inferred(e, OutcomeCurrent)
			}},

		// Where the fields come from.
		{name: "tool and method from the span name", span: testSpan{name: "tools/call create_invoice", kind: ptrace.SpanKindServer,
			attrs: []kv{{AttrRequestID, int64(42)}, {AttrSessionID, "191c4850af6c49e0"}, {AttrProtocolVersion, "2025-06-18"}, {"network.transport", "tcp"}}},
			want: func(e *Event) { inferred(e, OutcomeCurrent) }},
		{name: "gen_ai.tool.name wins over the span name", span: withName(serverCall(), "tools/call other_tool"),
			want: func(e *Event) { inferred(e, OutcomeCurrent) }},
		{name: "execute_tool span with MCP attributes", span: withKind(withName(serverCall(), "execute_tool create_invoice"), ptrace.SpanKindInternal),
			want: func(e *Event) { inferred(e, OutcomeCurrent) }},
		{name: "no times: the time of receipt", span: testSpan{name: "tools/call create_invoice", kind: ptrace.SpanKindServer, noTimes: true,
			attrs: serverCall().attrs},
			want: func(e *Event) { e.Time = testNow.UnixNano(); inferred(e, OutcomeCurrent) }},
		{name: "opt-in arguments and result are dropped", span: serverCall(kv{SpanAttrToolCallArguments, map[string]any{"card": "4111111111111111"}}, kv{SpanAttrToolCallResult, `{"ok":true}`}),
			want: func(e *Event) { inferred(e, OutcomeCurrent) }},

		// Protocol generations and client identity.
		{name: "2025-11-25 session with copied clientInfo", span: serverCall(kv{AttrProtocolVersion, "2025-11-25"}, kv{AttrClientName, "cursor"}, kv{AttrClientVersion, "1.7"}),
			want: func(e *Event) {
				e.ProtocolVersion, e.ClientName, e.ClientVersion = "2025-11-25", "cursor", "1.7"
				inferred(e, OutcomeCurrent)
			}},
		{name: "2026-07-28 without session, clientInfo map in _meta", span: sessionless(kv{SpanAttrClientInfo, map[string]any{"name": "claude-code", "version": "3.0.1"}}),
			want: func(e *Event) {
				sessionlessWant(e)
				e.ClientName, e.ClientVersion = "claude-code", "3.0.1"
				e.Attributes[SpanAttrClientInfo] = `{"name":"claude-code","version":"3.0.1"}`
			}},
		{name: "2026-07-28 clientInfo as JSON", span: sessionless(kv{SpanAttrClientInfo, `{"name":"claude-code","version":"3.0.1","title":"Claude Code"}`}),
			want: func(e *Event) {
				sessionlessWant(e)
				e.ClientName, e.ClientVersion = "claude-code", "3.0.1"
				e.Attributes[SpanAttrClientInfo] = `{"name":"claude-code","version":"3.0.1","title":"Claude Code"}`
			}},
		{name: "2026-07-28 clientInfo flattened", span: sessionless(kv{SpanAttrClientInfo + ".name", "claude-code"}, kv{SpanAttrClientInfo + ".version", "3.0.1"}),
			want: func(e *Event) {
				sessionlessWant(e)
				e.ClientName, e.ClientVersion = "claude-code", "3.0.1"
				e.Attributes[SpanAttrClientInfo+".name"], e.Attributes[SpanAttrClientInfo+".version"] = "claude-code", "3.0.1"
			}},
		{name: "dev.mcpdrift.client.name wins over _meta", span: sessionless(kv{AttrClientName, "agent-x"}, kv{SpanAttrClientInfo, map[string]any{"name": "claude-code", "version": "3.0.1"}}),
			want: func(e *Event) {
				sessionlessWant(e)
				e.ClientName = "agent-x"
				e.Attributes[SpanAttrClientInfo] = `{"name":"claude-code","version":"3.0.1"}`
			}},
		{name: "malformed clientInfo is only kept", span: sessionless(kv{SpanAttrClientInfo, "claude-code/3"}),
			want: func(e *Event) {
				sessionlessWant(e)
				e.Attributes[SpanAttrClientInfo] = "claude-code/3"
			}},

		// Rejections.
		{name: "unknown outcome", span: serverCall(kv{AttrOutcome, "sideways"}), err: ErrUnknownValue, msg: `dev.mcpdrift.outcome: unknown value "sideways"`},
		{name: "status code of a wrong type", span: serverCall(kv{SpanAttrRPCStatusCode, true}), err: ErrWrongType, msg: "rpc.response.status_code: want string or int, got bool true"},
		{name: "error.type of a wrong type", span: serverCall(kv{SpanAttrErrorType, 1.5}), err: ErrWrongType, msg: "error.type: want string or int, got double 1.5"},
		{name: "no tool", span: testSpan{name: "tools/call", kind: ptrace.SpanKindServer, attrs: []kv{{AttrMethodName, "tools/call"}}},
			err: ErrMissingAttribute, msg: `dev.mcpdrift.call: missing required attribute gen_ai.tool.name, and the span name "tools/call" has no target`},
		{name: "invalid UTF-8 in the span name's target", span: testSpan{name: "tools/call \xff", kind: ptrace.SpanKindServer},
			err: ErrInvalidUTF8, msg: "span name target: gen_ai.tool.name: invalid UTF-8"},
		{name: "too old", span: testSpan{name: "tools/call x", kind: ptrace.SpanKindServer, start: testNow.Add(-31 * 24 * time.Hour)},
			err: ErrTimeRange, msg: "older than MaxPast"},
		{name: "clientInfo too long", span: sessionless(kv{SpanAttrClientInfo, map[string]any{"name": strings.Repeat("n", 16<<10)}}),
			err: ErrTooLong, msg: "io.modelcontextprotocol/clientInfo: value of 16395 bytes exceeds MaxValueBytes"},
		{name: "clientInfo name not UTF-8", span: sessionless(kv{SpanAttrClientInfo, map[string]any{"name": "\xff"}}),
			err: ErrInvalidUTF8, msg: "io.modelcontextprotocol/clientInfo: dev.mcpdrift.client.name: invalid UTF-8 in value"},

		// Ignored spans.
		{name: "initialize", span: testSpan{name: "initialize", kind: ptrace.SpanKindServer, attrs: []kv{{AttrMethodName, "initialize"}, {AttrOutcome, "sideways"}}}, ignored: true},
		{name: "ping", span: testSpan{name: "ping", kind: ptrace.SpanKindClient, attrs: []kv{{AttrMethodName, "ping"}}}, ignored: true},
		{name: "resources/read", span: testSpan{name: "resources/read", kind: ptrace.SpanKindServer, attrs: []kv{{AttrMethodName, "resources/read"}}}, ignored: true},
		{name: "the attribute wins over the span name", span: testSpan{name: "tools/call x", kind: ptrace.SpanKindServer, attrs: []kv{{AttrMethodName, "prompts/get"}}}, ignored: true},
		{name: "tools/list on the server", span: testSpan{name: "tools/list", kind: ptrace.SpanKindServer, attrs: []kv{{AttrMethodName, "tools/list"}}}, ignored: true},
		{name: "HTTP span", span: testSpan{name: "POST /mcp", kind: ptrace.SpanKindServer, attrs: []kv{{"http.route", "/mcp"}}}, ignored: true},
		{name: "drift attributes on a span that is not MCP", span: testSpan{name: "handle", kind: ptrace.SpanKindInternal, attrs: []kv{{AttrOutcome, "current"}, {AttrToolName, "x"}}}, ignored: true},
		{name: "non-string method and a foreign name", span: testSpan{name: "work", kind: ptrace.SpanKindServer, attrs: []kv{{AttrMethodName, int64(3)}}}, ignored: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events, res := testDecoder().DecodeTraces(tracesWith(t, testResource, tc.span), nil)
			if res.Signal != SignalTraces || res.Accepted+res.Rejected+res.Ignored != 1 || len(events) != res.Accepted {
				t.Fatalf("result %+v with %d events, want one span counted", res, len(events))
			}
			switch {
			case tc.ignored:
				if res.Ignored != 1 {
					t.Fatalf("not ignored: %+v %v", res, res.Message())
				}
				return
			case tc.err != nil:
				if res.Rejected != 1 {
					t.Fatalf("not rejected: %+v", events)
				}
				err := res.Errors[0]
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("rejected with %q, want %v containing %q", err, tc.err, tc.msg)
				}
				if !strings.HasPrefix(err.Error(), "resource 0, scope 0, span 0: ") {
					t.Errorf("rejection %q is not located as a span", err)
				}
				return
			}
			if res.Accepted != 1 {
				t.Fatalf("not accepted: %s", res.Message())
			}
			want := wantCall()
			tc.want(&want)
			if len(want.Attributes) == 0 {
				want.Attributes = nil
			}
			got := events[0]
			if got.ID == 0 || got.ID != eventID(&got, "") {
				t.Errorf("ID %x is not the event's identity", got.ID)
			}
			got.ID = 0
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded event differs:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func withStatus(s testSpan, c ptrace.StatusCode) testSpan { s.status = c; return s }
func withKind(s testSpan, k ptrace.SpanKind) testSpan     { s.kind = k; return s }
func withName(s testSpan, n string) testSpan              { s.name = n; return s }
func withMessage(s testSpan, m string) testSpan           { s.statusMsg = m; return s }
func withException(s testSpan, m string) testSpan         { s.exception = m; return s }

// sessionless returns a SERVER tools/call span of MCP 2026-07-28, which
// has no session: the run id keys it.
func sessionless(extra ...kv) testSpan {
	return testSpan{
		name: "tools/call create_invoice",
		kind: ptrace.SpanKindServer,
		attrs: append([]kv{
			{AttrMethodName, "tools/call"},
			{AttrRequestID, "42"},
			{AttrProtocolVersion, "2026-07-28"},
			{AttrRunID, "run-77"},
			{"network.transport", "tcp"},
		}, extra...),
	}
}

// sessionlessWant changes wantCall() into the event of sessionless().
func sessionlessWant(e *Event) {
	e.SessionID, e.ProtocolVersion, e.RunID = "", "2026-07-28", "run-77"
	inferred(e, OutcomeCurrent)
}

func TestDecodeTracesRefreshAndNotification(t *testing.T) {
	for _, tc := range []struct {
		name string
		span testSpan
		want Event // compared without ID, time, trace and span ids and resource
	}{
		{name: "client refresh", span: testSpan{name: "tools/list", kind: ptrace.SpanKindClient,
			attrs: []kv{{AttrMethodName, "tools/list"}, {AttrSessionID, "s-1"}, {AttrRevisionBefore, "7"}, {AttrRevisionAfter, "9"}, {AttrNotificationLagMs, int64(40)}}},
			want: Event{Name: EventRefresh, Method: "tools/list", SessionID: "s-1", RevisionBefore: "7", RevisionAfter: "9", NotificationLagMs: 40, RefreshResult: RefreshResultOK}},
		{name: "client refresh from the span name", span: testSpan{name: "tools/list", kind: ptrace.SpanKindClient},
			want: Event{Name: EventRefresh, Method: "tools/list", RefreshResult: RefreshResultOK}},
		{name: "failed refresh", span: testSpan{name: "tools/list", kind: ptrace.SpanKindClient, status: ptrace.StatusCodeError, attrs: []kv{{SpanAttrErrorType, "timeout"}}},
			want: Event{Name: EventRefresh, Method: "tools/list", RefreshResult: RefreshResultFailed, ErrorCode: "timeout", Attributes: map[string]string{SpanAttrErrorType: "timeout"}}},
		{name: "declared refresh result wins", span: testSpan{name: "tools/list", kind: ptrace.SpanKindClient, status: ptrace.StatusCodeError, attrs: []kv{{AttrRefreshResult, "ok"}}},
			want: Event{Name: EventRefresh, Method: "tools/list", RefreshResult: RefreshResultOK}},
		{name: "notification sent by the server", span: testSpan{name: "notifications/tools/list_changed", kind: ptrace.SpanKindClient,
			attrs: []kv{{AttrMethodName, "notifications/tools/list_changed"}, {AttrSessionID, "s-1"}, {AttrRevisionServer, "9"}}},
			want: Event{Name: EventListChanged, Method: "notifications/tools/list_changed", SessionID: "s-1", RevisionServer: "9"}},
		{name: "notification received by the client", span: testSpan{name: "notifications/tools/list_changed", kind: ptrace.SpanKindServer,
			attrs: []kv{{AttrMethodName, "notifications/tools/list_changed"}, {AttrSessionID, "s-1"}, {AttrRevisionBefore, "7"}}},
			want: Event{Name: EventListChanged, Method: "notifications/tools/list_changed", SessionID: "s-1", RevisionBefore: "7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events, res := testDecoder().DecodeTraces(tracesWith(t, nil, tc.span), nil)
			if res.Accepted != 1 {
				t.Fatalf("%+v: %s", res, res.Message())
			}
			got := events[0]
			if got.Time != testTime.UnixNano() || got.TraceID != spanTraceID || got.SpanID != spanIDOf(0) || got.ID == 0 {
				t.Errorf("identity: time %d, trace %x, span %x, id %x", got.Time, got.TraceID, got.SpanID, got.ID)
			}
			got.ID, got.Time, got.TraceID, got.SpanID = 0, 0, [16]byte{}, [8]byte{}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("decoded event differs:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestDecodeTracesPartial decodes a request mixing accepted, rejected and
// ignored spans over two resources, and checks the counts, the locations
// and the message.
func TestDecodeTracesPartial(t *testing.T) {
	td := tracesWith(t, testResource,
		serverCall(),
		serverCall(kv{AttrOutcome, "sideways"}),
		testSpan{name: "initialize", kind: ptrace.SpanKindServer, attrs: []kv{{AttrMethodName, "initialize"}}},
		testSpan{name: "tools/list", kind: ptrace.SpanKindClient},
		serverCall(kv{SpanAttrRPCStatusCode, map[string]any{"code": -32602}}),
	)
	// A second resource whose resource attributes are invalid: its drift
	// spans are rejected, the others still ignored.
	rs := td.ResourceSpans().AppendEmpty()
	putAll(t, rs.Resource().Attributes(), []kv{{AttrServiceName, []any{"a", "b"}}})
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Spans().AppendEmpty().SetName("GET /healthz")
	ss.Spans().AppendEmpty().SetName("tools/call x")

	sentinel := Event{Tool: "sentinel"}
	events, res := testDecoder().DecodeTraces(td, []Event{sentinel})
	if res.Accepted != 2 || res.Rejected != 3 || res.Ignored != 2 || len(events) != 3 || !reflect.DeepEqual(events[0], sentinel) {
		t.Fatalf("got %d events, %+v", len(events), res)
	}
	if events[1].Name != EventCall || events[2].Name != EventRefresh || events[1].SpanID != spanIDOf(0) || events[2].SpanID != spanIDOf(3) {
		t.Errorf("accepted %v/%x and %v/%x", events[1].Name, events[1].SpanID, events[2].Name, events[2].SpanID)
	}
	want := `3 of 7 spans rejected: resource 0, scope 0, span 1: dev.mcpdrift.outcome: unknown value "sideways" (want one of current, normalized, rejected_stale, rejected_incompatible, rejected_invalid, removed, failed); ` +
		`resource 0, scope 0, span 4: rpc.response.status_code: want string or int, got map (1 entries); ` +
		`resource 1, scope 0, span 1: resource attributes: service.name: want string, got slice (2 elements)`
	if got := res.Message(); got != want {
		t.Errorf("message\n got %q\nwant %q", got, want)
	}
	for _, e := range res.Errors {
		if e.Signal != SignalTraces {
			t.Errorf("rejection %q is not a span's", e)
		}
	}
}

func TestDecodeTracesLimitsAndIDs(t *testing.T) {
	d := testDecoder()
	d.Limits.MaxAttributes = 8
	_, res := d.DecodeTraces(tracesWith(t, testResource, serverCall(kv{"a", 1}, kv{"b", 2})), nil)
	if res.Rejected != 1 || !errors.Is(res.Errors[0], ErrTooManyAttributes) ||
		!strings.Contains(res.Errors[0].Error(), "too many attributes: 13 (resource and scope 5, span 8) exceed MaxAttributes 8") {
		t.Errorf("got %+v: %s", res, res.Message())
	}

	// The same span gets the same ID whenever it is sent; another span
	// with the same attributes gets another.
	td := tracesWith(t, testResource, serverCall(), serverCall())
	a, _ := testDecoder().DecodeTraces(td, nil)
	b, _ := testDecoder().DecodeTraces(td, nil)
	if len(a) != 2 || a[0].ID != b[0].ID || a[1].ID != b[1].ID || a[0].ID == a[1].ID {
		t.Errorf("IDs %x %x, then %x %x", a[0].ID, a[1].ID, b[0].ID, b[1].ID)
	}

	// Without a start time, the end time.
	td = tracesWith(t, testResource, serverCall())
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SetStartTimestamp(0)
	if events, _ := testDecoder().DecodeTraces(td, nil); len(events) != 1 || events[0].Time != testTime.Add(time.Millisecond).UnixNano() {
		t.Errorf("time without a start: %+v", events)
	}

	events, res := testDecoder().DecodeTraces(ptrace.NewTraces(), nil)
	if events != nil || res.Accepted+res.Rejected+res.Ignored != 0 || res.Message() != "" {
		t.Errorf("empty request: %v, %+v", events, res)
	}
	if got := (Result{Signal: SignalTraces, Rejected: 2, Accepted: 8}).Message(); got != "2 of 10 spans rejected" {
		t.Errorf("message without kept errors: %q", got)
	}
}

// The fuzz seed corpus of FuzzDecodeTraces: real requests, kept small (see
// seedRequests).

const traceSeedDir = "testdata/fuzz/FuzzDecodeTraces"

// traceSeed is one request of the seed corpus and what decoding it gives.
type traceSeed struct {
	file                        string
	json                        bool
	traces                      func(t testing.TB) ptrace.Traces
	accepted, rejected, ignored int
}

// mcpSpans is a valid request: declared and inferred calls, a refresh, a
// notification and an ignored span.
func mcpSpans(t testing.TB) ptrace.Traces {
	return tracesWith(t, []kv{{AttrServiceName, "billing"}},
		testSpan{name: "tools/call pay", kind: ptrace.SpanKindServer, attrs: []kv{{AttrOutcome, "normalized"}, {AttrRevisionClient, "7"}, {AttrRequestID, int64(3)}}},
		testSpan{name: "tools/call pay", kind: ptrace.SpanKindServer, status: ptrace.StatusCodeError, attrs: []kv{{SpanAttrRPCStatusCode, int64(-32602)}}},
		testSpan{name: "tools/list", kind: ptrace.SpanKindClient, attrs: []kv{{SpanAttrClientInfo, map[string]any{"name": "c", "version": "1"}}}},
		testSpan{name: "notifications/tools/list_changed", kind: ptrace.SpanKindClient},
		testSpan{name: "initialize", kind: ptrace.SpanKindServer},
	)
}

// badSpans carries rejections of several kinds, and a good span.
func badSpans(t testing.TB) ptrace.Traces {
	return tracesWith(t, nil,
		testSpan{name: "tools/call pay", kind: ptrace.SpanKindServer, attrs: []kv{{AttrOutcome, "maybe"}}},
		testSpan{name: "tools/call", kind: ptrace.SpanKindServer},
		testSpan{name: "tools/call pay", kind: ptrace.SpanKindServer, attrs: []kv{{SpanAttrErrorType, true}}},
		testSpan{name: "tools/call pay", kind: ptrace.SpanKindServer, attrs: []kv{{AttrRevisionClient, "1"}, {AttrRevisionServer, "2"}}},
		testSpan{name: "tools/call pay", kind: ptrace.SpanKindClient, attrs: []kv{{SpanAttrErrorType, "tool_error"}}},
	)
}

var traceSeeds = []traceSeed{
	{file: "mcp_proto", traces: mcpSpans, accepted: 4, ignored: 1},
	{file: "mcp_json", json: true, traces: mcpSpans, accepted: 4, ignored: 1},
	{file: "rejections_proto", traces: badSpans, accepted: 1, rejected: 4},
}

// marshalTraceSeed encodes the request of s without the span identities,
// end times and scope name, which the decoder does not need, so that the
// seeds stay small.
func marshalTraceSeed(t testing.TB, s traceSeed) []byte {
	td := s.traces(t)
	ss := td.ResourceSpans().At(0).ScopeSpans().At(0)
	ss.Scope().SetName("")
	for i := 0; i < ss.Spans().Len(); i++ {
		sp := ss.Spans().At(i)
		sp.SetTraceID(pcommon.TraceID{})
		sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
		sp.SetEndTimestamp(0)
	}
	req := ptraceotlp.NewExportRequestFromTraces(td)
	var b []byte
	var err error
	if s.json {
		b, err = req.MarshalJSON()
	} else {
		b, err = req.MarshalProto()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTraceFuzzSeeds checks the seed corpus of FuzzDecodeTraces still
// decodes as it did when it was made; -update rewrites it.
func TestTraceFuzzSeeds(t *testing.T) {
	for _, s := range traceSeeds {
		t.Run(s.file, func(t *testing.T) {
			path := filepath.Join(traceSeedDir, s.file)
			if *update {
				if err := os.MkdirAll(traceSeedDir, 0o755); err != nil {
					t.Fatal(err)
				}
				data := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", marshalTraceSeed(t, s))
				if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./otelschema -run TestTraceFuzzSeeds -update)", err)
			}
			req := ptraceotlp.NewExportRequest()
			if s.json {
				err = req.UnmarshalJSON(unmarshalSeed(t, b))
			} else {
				err = req.UnmarshalProto(unmarshalSeed(t, b))
			}
			if err != nil {
				t.Fatal(err)
			}
			_, res := testDecoder().DecodeTraces(req.Traces(), nil)
			if res.Accepted != s.accepted || res.Rejected != s.rejected || res.Ignored != s.ignored {
				t.Errorf("got %+v, want %d accepted, %d rejected, %d ignored", res, s.accepted, s.rejected, s.ignored)
			}
		})
	}
}

func FuzzDecodeTraces(f *testing.F) {
	decoders := []*Decoder{
		testDecoder(),
		{Limits: Limits{MaxAttributes: 8, MaxValueBytes: 16, MaxArgsBytes: 32, MaxPast: 1, MaxFuture: 1}, Now: testDecoder().Now},
		{Now: testDecoder().Now},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, unmarshal := range []func(ptraceotlp.ExportRequest, []byte) error{
			ptraceotlp.ExportRequest.UnmarshalProto,
			ptraceotlp.ExportRequest.UnmarshalJSON,
		} {
			req := ptraceotlp.NewExportRequest()
			if err := unmarshal(req, data); err != nil {
				continue
			}
			for _, d := range decoders {
				checkDecodeTraces(t, d, req.Traces())
			}
		}
	})
}

// checkDecodeTraces decodes td and checks the invariants of DecodeTraces.
func checkDecodeTraces(t *testing.T, d *Decoder, td ptrace.Traces) {
	sentinel := Event{Tool: "sentinel"}
	events, res := d.DecodeTraces(td, []Event{sentinel})
	if n := td.SpanCount(); res.Accepted+res.Rejected+res.Ignored != n {
		t.Fatalf("%d accepted + %d rejected + %d ignored != %d spans", res.Accepted, res.Rejected, res.Ignored, n)
	}
	if len(events) != 1+res.Accepted || !reflect.DeepEqual(events[0], sentinel) {
		t.Fatalf("%d events for %d accepted, or dst's contents changed", len(events), res.Accepted)
	}
	if len(res.Errors) != min(res.Rejected, MaxErrors) || res.Signal != SignalTraces {
		t.Fatalf("%d errors kept for %d rejected, signal %d", len(res.Errors), res.Rejected, res.Signal)
	}
	if msg := res.Message(); (msg == "") != (res.Rejected == 0) || (msg != "" && !strings.Contains(msg, " spans rejected")) {
		t.Fatalf("message %q for %d rejected", msg, res.Rejected)
	}
	for _, e := range res.Errors {
		if e.Err == nil || !strings.Contains(e.Error(), ", span ") {
			t.Fatalf("rejection %v", e)
		}
	}
	for _, e := range events[1:] {
		switch {
		case e.Name == EventCall && e.Method == MethodToolsCall,
			e.Name == EventRefresh && e.Method == MethodToolsList && e.RefreshResult != RefreshResultUnspecified,
			e.Name == EventListChanged && e.Method == MethodToolsListChanged:
		default:
			t.Fatalf("accepted %s event for method %q", e.Name, e.Method)
		}
		if e.Name == EventCall && (e.Tool == "" || e.Outcome == OutcomeUnspecified) {
			t.Fatalf("call event without tool or outcome: %+v", e)
		}
		if v, ok := e.Attributes[OutcomeInferredAttr]; ok && v != "true" {
			t.Fatalf("outcome marker %q", v)
		}
		for _, k := range []string{SpanAttrToolCallArguments, SpanAttrToolCallResult, AttrMethodName} {
			if _, ok := e.Attributes[k]; ok {
				t.Fatalf("attribute %s kept", k)
			}
		}
		checkStrings(t, e)
	}
	again, res2 := d.DecodeTraces(td, nil)
	if len(again) != res.Accepted || res2.Rejected != res.Rejected {
		t.Fatal("decoding twice gives different results")
	}
	for i := range again {
		if again[i].ID != events[i+1].ID {
			t.Fatalf("event %d: IDs %x and %x for the same span", i, again[i].ID, events[i+1].ID)
		}
	}
}

// benchTraces builds a realistic traces request: one resource, benchRecords
// SERVER spans of an MCP server instrumented to the OpenTelemetry
// conventions, a third of them with drift attributes, the rest inferred,
// some failing with invalid params or a tool error.
func benchTraces(b *testing.B) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	putAll(b, rs.Resource().Attributes(), append(testResource,
		kv{"telemetry.sdk.name", "opentelemetry"}, kv{"telemetry.sdk.language", "go"}, kv{"host.name", "node-3"}))
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/modelcontextprotocol/go-sdk")
	for i := 0; i < benchRecords; i++ {
		sp := ss.Spans().AppendEmpty()
		tool := fmt.Sprintf("tool_%d", i%40)
		sp.SetName("tools/call " + tool)
		sp.SetKind(ptrace.SpanKindServer)
		start := testTime.Add(time.Duration(i) * time.Millisecond)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(3 * time.Millisecond)))
		sp.SetTraceID(pcommon.TraceID{byte(i), byte(i >> 8), 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		sp.SetSpanID(pcommon.SpanID{byte(i), byte(i >> 8), 3, 4, 5, 6, 7, 8})
		attrs := []kv{
			{AttrMethodName, "tools/call"},
			{AttrToolName, tool},
			{"gen_ai.operation.name", "execute_tool"},
			{AttrRequestID, int64(i)},
			{AttrSessionID, fmt.Sprintf("sess-%d", i%97)},
			{AttrProtocolVersion, "2025-06-18"},
			{"network.transport", "tcp"},
			{"network.protocol.name", "http"},
			{"client.address", "10.1.2.80"},
			{"client.port", int64(65123)},
		}
		switch i % 6 {
		case 0, 1:
			attrs = append(attrs, kv{AttrOutcome, "normalized"}, kv{AttrRevisionClient, "r3"}, kv{AttrRevisionServer, "r5"}, kv{AttrAdapterID, "adapter-r3-r5"})
		case 2:
			sp.Status().SetCode(ptrace.StatusCodeError)
			attrs = append(attrs, kv{SpanAttrErrorType, "-32602"}, kv{SpanAttrRPCStatusCode, int64(-32602)})
		case 3:
			sp.Status().SetCode(ptrace.StatusCodeError)
			attrs = append(attrs, kv{SpanAttrErrorType, "tool_error"})
		}
		putAll(b, sp.Attributes(), attrs)
	}
	data, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func unmarshalTracesBench(b *testing.B, data []byte) ptrace.Traces {
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(data); err != nil {
		b.Fatal(err)
	}
	return req.Traces()
}

// BenchmarkDecodeTraces decodes requests of 1000 MCP SERVER spans of 10 to
// 14 attributes: "decode" is DecodeTraces alone, "unmarshal+decode" the
// whole path from the protobuf bytes, "unmarshal" the bare pdata decode of
// the same bytes, the baseline.
func BenchmarkDecodeTraces(b *testing.B) {
	data := benchTraces(b)
	d := testDecoder()
	b.Run("decode", func(b *testing.B) {
		td := unmarshalTracesBench(b, data)
		var events []Event
		b.ReportAllocs()
		for b.Loop() {
			var res Result
			events, res = d.DecodeTraces(td, events[:0])
			if res.Accepted != benchRecords {
				b.Fatalf("result %+v", res)
			}
		}
		reportEvents(b)
	})
	b.Run("unmarshal+decode", func(b *testing.B) {
		var events []Event
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var res Result
			events, res = d.DecodeTraces(unmarshalTracesBench(b, data), events[:0])
			if res.Accepted != benchRecords {
				b.Fatalf("result %+v", res)
			}
		}
		reportEvents(b)
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			unmarshalTracesBench(b, data)
		}
		reportEvents(b)
	})
}
