package otelschema

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Span decoding: spans that follow the OpenTelemetry MCP semantic
// conventions (open-telemetry/semantic-conventions-genai, model/mcp and
// docs/gen-ai/mcp.md, status Development: `mcp.server` spans of kind
// SERVER, `mcp.client` spans of kind CLIENT, named
// `{mcp.method.name} {target}`) become drift events, with what the SDKs
// add in their own shapes (FastMCP's component keys), so that a server
// already instrumented gets reports by adding two or three dev.mcpdrift.*
// attributes. The rules are documented once, in
// DecodeTraces, and in the Spans section of CONVENTIONS.md that
// writeSpanConventions generates.

// MCP methods whose spans become drift events.
const (
	MethodToolsCall        = "tools/call"                       // a call event
	MethodToolsList        = "tools/list"                       // a refresh event, on the client
	MethodToolsListChanged = "notifications/tools/list_changed" // a list_changed event
)

// Attributes that the span decoder reads besides the Registry. They have no
// Event field of their own: they come from the OpenTelemetry conventions,
// or from the MCP protocol itself, and only inform the decoding of a span.
const (
	// SpanAttrErrorType is the OpenTelemetry error.type: the JSON-RPC error
	// code as a string, or `tool_error` when a CallToolResult had isError.
	SpanAttrErrorType = "error.type"
	// SpanAttrRPCStatusCode is the JSON-RPC error code of the response, a
	// string in the conventions; some SDKs send an int.
	SpanAttrRPCStatusCode = "rpc.response.status_code"
	// SpanAttrClientInfo is the `_meta` key of MCP 2026-07-28 requests that
	// carries the client's name and version, when the instrumentation copied
	// it onto the span.
	SpanAttrClientInfo = "io.modelcontextprotocol/clientInfo"
	// SpanAttrToolCallArguments and SpanAttrToolCallResult are the opt-in
	// GenAI attributes holding a call's arguments and result. They may hold
	// secrets, so the span decoder drops them: arguments are audited only
	// through dev.mcpdrift.args.raw, which ingest redacts.
	SpanAttrToolCallArguments = "gen_ai.tool.call.arguments"
	SpanAttrToolCallResult    = "gen_ai.tool.call.result"
	// SpanAttrFastMCPKey is FastMCP's component key, `tool:{name}@{version}`
	// on a server span once the tool is found (`@` alone when it has no
	// version): the one emitter that carries a tool version today.
	SpanAttrFastMCPKey = "fastmcp.component.key"
	// SpanAttrServerAddress and SpanAttrServerPort name the server a CLIENT
	// span called: on a client view they are the service.
	SpanAttrServerAddress = "server.address"
	SpanAttrServerPort    = "server.port"
)

// OutcomeInferredAttr is the key, in Event.Attributes, that marks with the
// value "true" a call event whose outcome the span decoder inferred because
// the span had no dev.mcpdrift.outcome. The decoder sets it and removes it: a
// span cannot mark its own outcome as inferred.
const OutcomeInferredAttr = "dev.mcpdrift.outcome.inferred"

// JSON-RPC 2.0 error codes, as rpc.response.status_code and error.type carry
// them.
const (
	// jsonrpcInvalidParams: since MCP 2025-11-25 (SEP-1303), an unknown
	// tool or a malformed request; input validation failures are tool
	// results with isError (error.type tool_error).
	jsonrpcInvalidParams = "-32602"
)

// requestErrors are the JSON-RPC codes of errors in the request, not in
// the server: the conventions say they SHOULD NOT mark a SERVER span as an
// error. On a server's call span they mean the server refused the call
// before any tool code ran.
var requestErrors = map[string]bool{
	"-32700": true, // parse error
	"-32600": true, // invalid request
	"-32601": true, // method not found
	"-32602": true, // invalid params: unknown tool, malformed request
	"-32002": true, // resource not found
}

// statusOK is the rpc.response.status_code of a success, for SDKs that set
// one; JSON-RPC itself has no success code.
const statusOK = "OK"

// DecodeTraces appends the drift events found in td to dst and returns it
// with what became of every span, counted as DecodeLogs counts log records;
// the Result's Signal is SignalTraces, so that its Message counts spans and
// locates them as "resource r, scope s, span i".
//
// A span becomes a drift event by its MCP method (mcp.method.name, else the
// first word of its name): tools/call a call, a CLIENT span of tools/list a
// refresh, notifications/tools/list_changed a list_changed; every other
// span is ignored, whatever it carries. Its attributes are decoded as a log
// record's, with the differences, the outcome inference for calls without
// dev.mcpdrift.outcome and the session rules that CONVENTIONS.md ("Spans")
// states; writeSpanConventions writes that section from the same constants
// the decoder uses, and the decoder's tests hold each rule.
func (d *Decoder) DecodeTraces(td ptrace.Traces, dst []Event) ([]Event, Result) {
	w := walk{st: d.newState(), dst: dst, res: Result{Signal: SignalTraces}}
	rss := td.ResourceSpans()
	for ri := 0; ri < rss.Len(); ri++ {
		rs := rss.At(ri)
		resAttrs := rs.Resource().Attributes()
		w.resource(resAttrs.Len())
		sss := rs.ScopeSpans()
		for si := 0; si < sss.Len(); si++ {
			ss := sss.At(si)
			scopeAttrs := ss.Scope().Attributes()
			w.scope(scopeAttrs.Len())
			spans := ss.Spans()
			for i := 0; i < spans.Len(); i++ {
				sp := spans.At(i)
				name, method := spanEvent(sp)
				if name == EventUnspecified {
					w.res.Ignored++
					continue
				}
				e, err := w.event(
					func(e *Event) error { return w.st.decodeShared(e, resAttrs, true) },
					func(e *Event) error { return w.st.decodeShared(e, scopeAttrs, false) })
				if err == nil {
					err = w.st.decodeSpan(e, name, method, sp)
				}
				w.done(ri, si, i, err)
			}
		}
	}
	return w.dst, w.result()
}

// spanEvent returns the drift event a span becomes and its MCP method;
// EventUnspecified for a span that is ignored.
func spanEvent(sp ptrace.Span) (EventName, string) {
	var method string
	if v, ok := sp.Attributes().Get(AttrMethodName); ok && v.Type() == pcommon.ValueTypeStr {
		method = v.Str()
	}
	if method == "" {
		method, _, _ = strings.Cut(sp.Name(), " ")
	}
	switch method {
	case MethodToolsCall:
		return EventCall, method
	case MethodToolsList:
		if sp.Kind() == ptrace.SpanKindClient {
			return EventRefresh, method
		}
	case MethodToolsListChanged:
		return EventListChanged, method
	}
	return EventUnspecified, ""
}

// spanInputs are the attributes of a span that only inform its decoding.
type spanInputs struct {
	errorType  string // error.type, in base 10 when an int
	statusCode string // rpc.response.status_code, in base 10 when an int
	// The client identity from the io.modelcontextprotocol/clientInfo
	// `_meta` key, in one of the shapes clientInfo accepts.
	clientName, clientVersion string
	// fastMCPKey is FastMCP's component key.
	fastMCPKey string
	// serverAddress and serverPort are server.address and server.port, which
	// identify the server on a CLIENT span.
	serverAddress, serverPort string
}

// decodeSpan decodes a drift span into e, which holds the resource and
// scope attributes already.
func (st *decodeState) decodeSpan(e *Event, name EventName, method string, sp ptrace.Span) error {
	e.Name = name
	attrs := sp.Attributes()
	if n := st.shared + attrs.Len(); st.lim.MaxAttributes > 0 && n > st.lim.MaxAttributes {
		return fail(ErrTooManyAttributes, "too many attributes: %d (resource and scope %d, span %d) exceed MaxAttributes %d",
			n, st.shared, attrs.Len(), st.lim.MaxAttributes)
	}
	ts := uint64(sp.StartTimestamp())
	if ts == 0 {
		ts = uint64(sp.EndTimestamp())
	}
	if err := st.setTimeAt(e, ts); err != nil {
		return err
	}
	e.TraceID = sp.TraceID()
	e.SpanID = sp.SpanID()
	e.Method = method

	var in spanInputs
	var err error
	attrs.Range(func(k string, v pcommon.Value) bool {
		switch k {
		case AttrMethodName, SpanAttrToolCallArguments, SpanAttrToolCallResult:
			return true
		case SpanAttrErrorType, SpanAttrRPCStatusCode:
			var s string
			if s, err = codeString(k, v); err != nil {
				return false
			}
			if err = st.extraString(e, k, s); err != nil {
				return false
			}
			if k == SpanAttrErrorType {
				in.errorType = s
			} else {
				in.statusCode = s
			}
			return true
		case SpanAttrClientInfo:
			in.clientName, in.clientVersion = clientInfo(v)
		case SpanAttrClientInfo + ".name":
			if v.Type() == pcommon.ValueTypeStr {
				in.clientName = v.Str()
			}
		case SpanAttrClientInfo + ".version":
			if v.Type() == pcommon.ValueTypeStr {
				in.clientVersion = v.Str()
			}
		case SpanAttrFastMCPKey:
			if v.Type() == pcommon.ValueTypeStr {
				in.fastMCPKey = v.Str()
			}
		case SpanAttrServerAddress:
			if v.Type() == pcommon.ValueTypeStr {
				in.serverAddress = v.Str()
			}
		case SpanAttrServerPort:
			if s, perr := codeString(k, v); perr == nil {
				in.serverPort = s
			}
		}
		pv := pdataValue(v)
		a, legacy := lookupAttr(k)
		st.countLegacy(legacy)
		err = st.recordAttr(e, k, a, &pv)
		return err == nil
	})
	if err != nil {
		return err
	}
	if err := st.completeSpan(e, sp, method, &in); err != nil {
		return err
	}
	for _, a := range requiredBy[name] {
		if !a.present(e) {
			if a.Name == AttrToolName {
				return fail(ErrMissingAttribute, "%s: missing required attribute %s, and the span name %s has no target",
					name, a.Name, quote(sp.Name()))
			}
			return fail(ErrMissingAttribute, "%s: missing required attribute %s", name, a.Name)
		}
	}
	e.ID = eventID(e, "")
	return nil
}

// completeSpan fills in what the span tells of e beyond its attributes: the
// tool from the span name, the client from `_meta`, the error code, and
// the outcome or refresh result, as DecodeTraces documents.
func (st *decodeState) completeSpan(e *Event, sp ptrace.Span, method string, in *spanInputs) error {
	if e.Name == EventCall && e.Tool == "" {
		if target, ok := spanTarget(sp.Name(), method); ok {
			if err := st.checkString(attrByName[AttrToolName], target); err != nil {
				return fmt.Errorf("span name target: %w", err)
			}
			e.Tool = target
		}
	}
	if e.Name == EventCall && in.fastMCPKey != "" {
		if name, version, ok := fastMCPTool(in.fastMCPKey); ok {
			if e.Tool == "" {
				if err := st.checkString(attrByName[AttrToolName], name); err != nil {
					return fmt.Errorf("%s: %w", SpanAttrFastMCPKey, err)
				}
				e.Tool = name
			}
			if e.RevisionServer == "" && version != "" && name == e.Tool {
				if err := st.checkString(attrByName[AttrRevisionServer], version); err != nil {
					return fmt.Errorf("%s: %w", SpanAttrFastMCPKey, err)
				}
				e.RevisionServer = version
			}
		}
	}
	if e.Name == EventCall && sp.Kind() == ptrace.SpanKindClient {
		if err := st.clientView(e, in); err != nil {
			return err
		}
	}
	if e.ClientName == "" && e.ClientVersion == "" {
		for _, f := range []struct {
			attr string
			v    string
			dst  *string
		}{
			{AttrClientName, in.clientName, &e.ClientName},
			{AttrClientVersion, in.clientVersion, &e.ClientVersion},
		} {
			if err := st.checkString(attrByName[f.attr], f.v); err != nil {
				return fmt.Errorf("%s: %w", SpanAttrClientInfo, err)
			}
			*f.dst = f.v
		}
	}

	status := in.statusCode
	if status == statusOK {
		status = ""
	}
	code := status
	if code == "" {
		code = in.errorType
	}
	server := sp.Kind() == ptrace.SpanKindServer
	// A request error on a SERVER span is the client's, not a failure
	// (the conventions' rule); every other error marks the span failed.
	refused := requestErrors[code]
	failed := (in.errorType != "" || status != "" || sp.Status().Code() == ptrace.StatusCodeError) && !(server && refused)
	if e.ErrorCode == "" {
		e.ErrorCode = status
		if e.ErrorCode == "" {
			e.ErrorCode = in.errorType
		}
	}

	switch e.Name {
	case EventRefresh:
		if e.RefreshResult == RefreshResultUnspecified {
			e.RefreshResult = RefreshResultOK
			if failed {
				e.RefreshResult = RefreshResultFailed
			}
		}
	case EventCall:
		// A span cannot mark its own outcome as inferred, under either
		// name of the marker.
		delete(e.Attributes, OutcomeInferredAttr)
		delete(e.Attributes, LegacyPrefix+OutcomeInferredAttr[len(EventNamePrefix):])
		if e.Outcome != OutcomeUnspecified {
			return nil
		}
		switch {
		case e.RevisionClient != "" && e.RevisionServer != "" && e.RevisionClient != e.RevisionServer:
			return fail(ErrMissingAttribute, "%s: missing required attribute %s, which cannot be inferred when %s %s differs from %s %s",
				e.Name, AttrOutcome, AttrRevisionClient, quote(e.RevisionClient), AttrRevisionServer, quote(e.RevisionServer))
		case (code == jsonrpcInvalidParams || (code == "" && sp.Status().Code() == ptrace.StatusCodeError)) && unknownTool(sp):
			// -32602, or an error that states no code (FastMCP records
			// the exception only), saying the tool is unknown.
			e.Outcome = OutcomeRemoved
		case server && refused:
			e.Outcome = OutcomeRejectedInvalid
		case failed:
			e.Outcome = OutcomeFailed
		default:
			e.Outcome = OutcomeCurrent
		}
		if e.Attributes == nil {
			e.Attributes = make(map[string]string, 1)
		}
		e.Attributes[OutcomeInferredAttr] = "true"
	}
	return nil
}

// spanTarget returns the target of a span named `{method} {target}`, or
// `{words} {method} {target}` as the Python SDK v2 names its CLIENT spans
// (`MCP send tools/call {tool}`).
func spanTarget(name, method string) (string, bool) {
	for rest := name; ; {
		if target, ok := strings.CutPrefix(rest, method+" "); ok {
			return strings.TrimSpace(target), true
		}
		_, after, ok := strings.Cut(rest, " ")
		if !ok {
			return "", false
		}
		rest = after
	}
}

// clientView marks a CLIENT call span as a client view, held until the store
// knows whether the server's span of the call came too. When the span
// names the server it called (server.address, and server.port), that is
// the event's service: the resource describes the client, whose
// service.name and service.version become the client's name and version
// unless the span declares them.
func (st *decodeState) clientView(e *Event, in *spanInputs) error {
	e.ClientView = ClientViewHeld
	if in.serverAddress == "" {
		return nil
	}
	service := in.serverAddress
	if in.serverPort != "" {
		service = net.JoinHostPort(in.serverAddress, in.serverPort)
	}
	if err := st.checkString(attrByName[AttrServiceName], service); err != nil {
		return fmt.Errorf("%s: %w", SpanAttrServerAddress, err)
	}
	if e.ClientName == "" && e.ClientVersion == "" && in.clientName == "" && in.clientVersion == "" {
		e.ClientName, e.ClientVersion = e.Service, e.ServiceVersion
	}
	e.Service, e.ServiceVersion, e.ServiceInstance = service, "", ""
	return nil
}

// fastMCPTool reads a FastMCP component key of a tool, `tool:{name}@{version}`;
// ok is false for any other key, such as the bare name FastMCP sets before
// the tool is found.
func fastMCPTool(key string) (name, version string, ok bool) {
	rest, ok := strings.CutPrefix(key, "tool:")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '@')
	if i < 0 {
		return rest, "", rest != ""
	}
	return rest[:i], rest[i+1:], rest[:i] != ""
}

// unknownTool reports whether a failed call span says the tool does not
// exist: its status message, or an exception event's message, in the words
// the SDKs use (`unknown tool "x"`, `Unknown tool: x`, `Tool x not found`).
// A -32602 on an unknown tool is a call to a tool the server does not list.
func unknownTool(sp ptrace.Span) bool {
	msgs := []string{sp.Status().Message()}
	evs := sp.Events()
	for i := 0; i < evs.Len(); i++ {
		if m, ok := evs.At(i).Attributes().Get("exception.message"); ok && m.Type() == pcommon.ValueTypeStr {
			msgs = append(msgs, m.Str())
		}
	}
	for _, m := range msgs {
		m = strings.ToLower(m)
		if strings.Contains(m, "unknown tool") || (strings.Contains(m, "tool") && strings.Contains(m, "not found")) {
			return true
		}
	}
	return false
}

// codeString returns the value of error.type or rpc.response.status_code
// as a string: a string as it is, an int or an integral double in base 10.
func codeString(k string, v pcommon.Value) (string, error) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str(), nil
	case pcommon.ValueTypeInt:
		return strconv.FormatInt(v.Int(), 10), nil
	case pcommon.ValueTypeDouble:
		if f := v.Double(); f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
			return strconv.FormatInt(int64(f), 10), nil
		}
	}
	pv := pdataValue(v)
	return "", fail(ErrWrongType, "%s: want string or int, got %s", k, describe(&pv))
}

// clientInfo reads the name and version of an
// io.modelcontextprotocol/clientInfo value: a map, or a JSON object as a
// string. Anything else gives nothing: the value is only a hint, kept in
// Event.Attributes as it came.
func clientInfo(v pcommon.Value) (name, version string) {
	switch v.Type() {
	case pcommon.ValueTypeMap:
		m := v.Map()
		if n, ok := m.Get("name"); ok && n.Type() == pcommon.ValueTypeStr {
			name = n.Str()
		}
		if n, ok := m.Get("version"); ok && n.Type() == pcommon.ValueTypeStr {
			version = n.Str()
		}
	case pcommon.ValueTypeStr:
		var info struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		}
		if json.Unmarshal([]byte(v.Str()), &info) == nil {
			name, version = info.Name, info.Version
		}
	}
	return name, version
}

// spanInputDocs documents, for CONVENTIONS.md, the attributes the span
// decoder reads besides the Registry.
var spanInputDocs = []struct{ name, typ, doc string }{
	{SpanAttrErrorType, "string; int",
		"OpenTelemetry: the JSON-RPC error code as a string, or `tool_error` when the CallToolResult had isError. Marks the span failed, but an error in the request on a SERVER span; kept in the event's attributes; the error code when neither `" + AttrErrorCode + "` nor `" + SpanAttrRPCStatusCode + "` is set."},
	{SpanAttrRPCStatusCode, "string; int (kept in base 10)",
		"OpenTelemetry: the JSON-RPC error code of the response, such as `-32602`. Any value but `OK` marks the span failed, but an error in the request on a SERVER span; kept in the event's attributes; the error code when `" + AttrErrorCode + "` is not set."},
	{SpanAttrClientInfo, "map or JSON string with string `name`, `version`",
		"MCP 2026-07-28: the `_meta` key of the client's identity, when the instrumentation copied it; also read flattened as `" + SpanAttrClientInfo + ".name` and `.version`. Used only when neither `" + AttrClientName + "` nor `" + AttrClientVersion + "` is set."},
	{SpanAttrFastMCPKey, "string",
		"FastMCP: the component key, `tool:{name}@{version}` on a server span once the tool is found. Its version is `" + AttrRevisionServer + "` when that is not set; kept in the event's attributes."},
	{SpanAttrToolCallArguments + ", " + SpanAttrToolCallResult, "any",
		"OpenTelemetry (opt-in): dropped, as they may hold secrets; audit arguments through `" + AttrArgsRaw + "`, which ingest redacts."},
}

// writeSpanConventions writes the Spans section of CONVENTIONS.md: the
// rules of DecodeTraces.
func writeSpanConventions(p func(format string, args ...any)) {
	p("\n## Spans\n\n")
	p("Spans that follow the OpenTelemetry MCP semantic conventions\n")
	p("(`open-telemetry/semantic-conventions-genai`, `model/mcp` and `docs/gen-ai/mcp.md`,\n")
	p("status Development: `mcp.server` spans of kind SERVER, `mcp.client` spans of kind\n")
	p("CLIENT, named `{mcp.method.name} {target}`) become drift events too. The MCP\n")
	p("method is the string attribute `%s`, else the first word of the span name:\n\n", AttrMethodName)
	p("| Method | Span kind | Event |\n")
	p("| --- | --- | --- |\n")
	p("| `%s` | any | `%s` |\n", MethodToolsCall, EventCall)
	p("| `%s` | CLIENT (a SERVER span is ignored) | `%s` |\n", MethodToolsList, EventRefresh)
	p("| `%s` | any: CLIENT where sent, SERVER where received | `%s` |\n", MethodToolsListChanged, EventListChanged)
	p("\nEvery other span (other MCP methods such as `initialize`, `ping` or `resources/read`,\n")
	p("and spans that are not MCP spans) is ignored and counted, whatever it carries.\n\n")
	p("The attributes of a drift span are read as those of a log record, `dev.mcpdrift.*`\n")
	p("included, with these differences:\n\n")
	p("- the event time is the span's start time, else its end time, else the time it\n")
	p("  was received; the trace and span ids are the span's;\n")
	p("- a call without `%s` takes the span name's target, the rest of\n", AttrToolName)
	p("  `{mcp.method.name} {target}`, after any words before the method (the Python\n")
	p("  SDK v2 names its CLIENT spans `MCP send tools/call {tool}`);\n")
	p("- a call without `%s` takes the version of FastMCP's `%s`,\n", AttrRevisionServer, SpanAttrFastMCPKey)
	p("  `tool:{name}@{version}` (and its tool, when the call has none);\n")
	p("- the event's error code is `%s`, else `%s`, else `%s`;\n", AttrErrorCode, SpanAttrRPCStatusCode, SpanAttrErrorType)
	p("- a span is *failed* when it has `%s`, an `%s` other than `OK`,\n", SpanAttrErrorType, SpanAttrRPCStatusCode)
	p("  or an ERROR status, except a SERVER span whose JSON-RPC code is an error in the\n")
	p("  request (%s): the conventions say those SHOULD NOT mark a server span\n", codeList(sortedKeys(requestErrors)))
	p("  as an error. A refresh without `%s` is `failed` or `ok` accordingly;\n", AttrRefreshResult)
	p("- the other attributes of the span are kept as the event's extra attributes.\n")
	p("\n### Client views\n\n")
	p("A CLIENT span of `%s` is the client's view of a call, which the server may\n", MethodToolsCall)
	p("report too. The server's span is authoritative, so a call seen from both sides\n")
	p("counts once:\n\n")
	p("- the event is stored as a client view (`client_view` = `%s`), outside the\n", ClientViewHeld)
	p("  events that reports read;\n")
	p("- when the span has `%s` (and `%s`), that is the event's service, the\n", SpanAttrServerAddress, SpanAttrServerPort)
	p("  server it called; the resource's `service.name` and `service.version` then\n")
	p("  become the client's name and version, unless the span declares them;\n")
	p("- after a hold time (`-client-views.hold`), a client view whose call has no\n")
	p("  server span (the same trace id, `%s` and tool) is counted as the call's\n", AttrRequestID)
	p("  only record (`client_view` = `%s`); one with a server span is dropped. A\n", ClientViewAlone)
	p("  server span that arrives after the hold counts the call a second time.\n")
	p("\nThese attributes inform the decoding of a span and have no column of their own:\n\n")
	p("| Attribute | Type | Description |\n")
	p("| --- | --- | --- |\n")
	for _, a := range spanInputDocs {
		p("| `%s` | %s | %s |\n", strings.ReplaceAll(a.name, ", ", "`, `"), cell(a.typ), cell(a.doc))
	}
	p("\n### Inferred outcomes\n\n")
	p("A call span without `%s` gets an outcome inferred by the first rule that\n", AttrOutcome)
	p("applies, and the attribute `%s` = `true` so that reports can tell it from a\n", OutcomeInferredAttr)
	p("declared one:\n\n")
	p("1. `%s` and `%s` both set and different: nothing can be\n", AttrRevisionClient, AttrRevisionServer)
	p("   inferred (the call may have been normalised, or rejected as stale); the span is\n")
	p("   rejected for its missing `%s`.\n", AttrOutcome)
	p("2. JSON-RPC code `%s` (`%s`, else `%s`), or an ERROR status with no code\n", jsonrpcInvalidParams, SpanAttrRPCStatusCode, SpanAttrErrorType)
	p("   (FastMCP records only the exception), with a status message or an\n")
	p("   exception event's `exception.message` that says the tool is unknown\n")
	p("   (`unknown tool`, `tool … not found`): `%s`. Since MCP 2025-11-25 (SEP-1303)\n", OutcomeRemoved)
	p("   `%s` means an unknown tool or a malformed request. A span cannot tell a\n", jsonrpcInvalidParams)
	p("   removed tool from one that never existed.\n")
	p("3. A SERVER span with an error in the request (any code listed above): `%s`,\n", OutcomeRejectedInvalid)
	p("   refused before any tool code ran.\n")
	p("4. A failed span: `%s`. `tool_error` is one: since SEP-1303 a tool answers\n", OutcomeFailed)
	p("   arguments it rejects with an `isError` result, which a span cannot tell from\n")
	p("   any other tool error; only `%s` = `%s` can.\n", AttrOutcome, OutcomeRejectedInvalid)
	p("5. Any other call: `%s`. Nothing says the client planned with another revision;\n", OutcomeCurrent)
	p("   nothing proves it did not either, which the marker records.\n")
	p("\n### Sessions and clients\n\n")
	p("MCP 2025-06-18 and 2025-11-25 have sessions: `%s` groups a session's calls. The\n", AttrSessionID)
	p("client identity is sent once, in `initialize.clientInfo`; spans carry it only when\n")
	p("the instrumentation copies it into `%s` and `%s`.\n", AttrClientName, AttrClientVersion)
	p("MCP 2026-07-28 has no sessions: `%s` is the key that groups a run's calls, and\n", AttrRunID)
	p("the client identity comes with every request in the `_meta` key `%s`,\n", SpanAttrClientInfo)
	p("read as the table above says. The decoder invents neither a session nor a run.\n")
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
