package mcpgo

import "github.com/mcpdrift/mcpdrift/otelschema"

// The _meta keys mcpgo reads and writes on MCP requests, results and tool
// definitions. They live under the reverse-DNS prefix "dev.mcpdrift/", as the
// MCP specification asks of vendor _meta keys.
const (
	// MetaRevision holds, on a tools/call request, the tool revision the
	// client planned the call with; on a tool definition in a tools/list
	// result, the revision the server advertises.
	MetaRevision = "dev.mcpdrift/revision"
	// MetaRequestID holds the call's identity, chosen by the client. The
	// SDK does not expose JSON-RPC ids to middleware, so this id is what
	// both sides record as jsonrpc.request.id.
	MetaRequestID = "dev.mcpdrift/request_id"
	// MetaRetryOf holds, on a retry, the MetaRequestID of the call it
	// retries; MetaRetryAttempt its attempt number, 1 for the first retry;
	// MetaRetryAutomatic whether the retry was decided without a person
	// (a boolean); MetaRetryRevision the revision the retried call was
	// planned with. The server records them on the retry's call event, so
	// that a retry across a change is seen where the call runs.
	MetaRetryOf        = "dev.mcpdrift/retry_of"
	MetaRetryAttempt   = "dev.mcpdrift/retry_attempt"
	MetaRetryAutomatic = "dev.mcpdrift/retry_automatic"
	MetaRetryRevision  = "dev.mcpdrift/retry_revision"
	// MetaRetryAfter holds, on a retry, the outcome of the call it retries
	// as the client saw it (rejected_stale, rejected_incompatible,
	// rejected_invalid or removed: Rejection.Outcome), recorded as
	// dev.mcpdrift.retry.after.
	MetaRetryAfter = "dev.mcpdrift/retry_after"
	// MetaAdapterID holds, on the result of a call an adapter normalised,
	// the adapter's ID; the result then also carries, under MetaRevision,
	// the revision that executed the call. A result without it was not
	// normalised.
	MetaAdapterID = "dev.mcpdrift/adapter_id"
	// MetaRunID holds the agent run the request belongs to.
	MetaRunID = "dev.mcpdrift/run_id"
	// MetaApproval holds the approval decision the call runs under: none,
	// session, per_call or denied.
	MetaApproval = "dev.mcpdrift/approval"
	// MetaIdempotencyKey holds the idempotency key of the call's action.
	MetaIdempotencyKey = "dev.mcpdrift/idempotency_key"
)

// Error codes of the rejections the server middleware returns, in the
// structured content's error_code.
const (
	// CodeStaleToolSchema: the call was planned against an older revision
	// that cannot be served; refreshing tools may help.
	CodeStaleToolSchema = "STALE_TOOL_SCHEMA"
	// CodeIncompatibleToolSchema: a field of the old revision changed
	// meaning; the call must be planned again, usually with another tool.
	CodeIncompatibleToolSchema = "INCOMPATIBLE_TOOL_SCHEMA"
	// CodeInvalidArguments: the arguments are invalid under the revision
	// that would run them (its input schema rejects them), or an adapter
	// could not normalise them.
	CodeInvalidArguments = "INVALID_ARGUMENTS"
	// CodeToolRemoved: the tool no longer exists.
	CodeToolRemoved = "TOOL_REMOVED"
)

// codeOutcomes maps each rejection's error code to the outcome of the
// rejected call.
var codeOutcomes = map[string]otelschema.Outcome{
	CodeStaleToolSchema:        otelschema.OutcomeRejectedStale,
	CodeIncompatibleToolSchema: otelschema.OutcomeRejectedIncompatible,
	CodeInvalidArguments:       otelschema.OutcomeRejectedInvalid,
	CodeToolRemoved:            otelschema.OutcomeRemoved,
}

// Required actions, in the structured content's required_action.
const (
	// ActionRefreshTools: list tools again and plan the call anew; the
	// required_action of stale rejections.
	ActionRefreshTools = "refresh_tools"
	// ActionFixArguments: the client planned with the current revision
	// and sent arguments it rejects; fix them and retry.
	ActionFixArguments = "fix_arguments"
)

// metaString returns the string value of key in m; numbers are formatted as
// JSON would.
func metaString(m map[string]any, key string) string {
	switch v := m[key].(type) {
	case string:
		return v
	case float64:
		return formatNumber(v)
	case int:
		return itoa(int64(v))
	case int64:
		return itoa(v)
	}
	return ""
}

// metaBool returns the boolean value of key in m, and whether it holds one.
func metaBool(m map[string]any, key string) (v, ok bool) {
	v, ok = m[key].(bool)
	return v, ok
}

// metaInt returns the integer value of key in m, 0 when absent.
func metaInt(m map[string]any, key string) int64 {
	switch v := m[key].(type) {
	case float64:
		return int64(v)
	case int:
		return int64(v)
	case int64:
		return v
	}
	return 0
}
