package mcpgo

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// Needs declares, on Client.Plan, the fields of the call's result that the
// plan depends on — what a later step will read, such as the seed's
// create_issue result's "issue.id", which add_comment needs. The
// declaration stays in the client (remembered by request id, never sent
// to the server). When the call returns a result that is not an error and
// whose structured content lacks one of these fields, the client emits a
// dev.mcpdrift.contract_error event per missing field and CallTool returns a
// *ContractError (wrapping ErrContract) that carries the result.
//
// Each path is written as LookupPath reads it. Text content is never read:
// a result without structured content lacks every needed field.
func Needs(paths ...string) PlanOption {
	return func(c *planConfig) { c.needs = append(c.needs, paths...) }
}

// LookupPath returns the value at path in v, a tool result's structured
// content, and whether it is there. It is how Needs is checked.
//
// A path is a sequence of segments separated by dots: "issue.id" is the
// key "id" of the object under the key "issue". A segment is an object key,
// taken literally; within it, "\." is a dot and "\\" a backslash (any other
// backslash is kept as it is). A segment of decimal digits without a
// leading zero ("0", "12") indexes an array when the value it is applied to
// is an array ("items.0.id"), and is a key like any other on an object.
// There are no wildcards: "every element" is not a dependency a single
// later call can have. The empty path is the structured content itself.
//
// A field that is present with the value null counts as absent: a
// dependent call cannot use it. v may be a decoded JSON value (maps,
// slices) or any value that marshals to JSON.
func LookupPath(v any, path string) (any, bool) {
	v = jsonValue(v)
	if v == nil {
		return nil, false
	}
	if path == "" {
		return v, true
	}
	for _, seg := range splitPath(path) {
		switch x := jsonValue(v).(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			i, ok := arrayIndex(seg)
			if !ok || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
		if v == nil {
			return nil, false
		}
	}
	return v, true
}

// splitPath splits a path at its unescaped dots, unescaping "\." and "\\".
func splitPath(path string) []string {
	var segs []string
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '\\' && i+1 < len(path) && (path[i+1] == '.' || path[i+1] == '\\'):
			i++
			b.WriteByte(path[i])
		case c == '.':
			segs = append(segs, b.String())
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(segs, b.String())
}

// arrayIndex reads a segment as an array index: decimal digits, no sign,
// no leading zero.
func arrayIndex(seg string) (int, bool) {
	if seg == "" || len(seg) > 9 || (len(seg) > 1 && seg[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(seg)
	return i, err == nil
}

// jsonValue returns v as decoded JSON (maps, slices, strings, float64,
// bools, nil): a value of another type is marshalled and read back, nil
// when that fails.
func jsonValue(v any) any {
	switch v.(type) {
	case nil, map[string]any, []any, string, float64, bool, json.Number:
		return v
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return out
}

// ContractError is the error CallTool returns, through the client
// middleware, when a result lacks fields the call's plan needs (Needs). It
// wraps ErrContract. The server's result is kept: the call ran, and its
// side effects may have happened; only the plan's next step is stopped.
type ContractError struct {
	// Tool is the tool called; RequestID the call's MetaRequestID.
	Tool, RequestID string
	// Missing lists the needed paths the result lacks, in the order they
	// were declared.
	Missing []string
	// PlannedRevision is the revision the call was planned with;
	// ServerRevision the one the result declares in its _meta under
	// MetaRevision, empty when it declares none.
	PlannedRevision, ServerRevision string
	// Result is the server's result, as received.
	Result *mcp.CallToolResult
}

func (e *ContractError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s result (request %s", e.Tool, e.RequestID)
	if e.PlannedRevision != "" {
		fmt.Fprintf(&b, ", planned with revision %s", Short(e.PlannedRevision))
	}
	if e.ServerRevision != "" {
		fmt.Fprintf(&b, ", server revision %s", Short(e.ServerRevision))
	}
	what := "lacks"
	if e.Result != nil && e.Result.StructuredContent == nil {
		what = "has no structured content, so it lacks"
	}
	fmt.Fprintf(&b, ") %s %s, which the plan needs: the call ran, but its result no longer has the shape the plan was made for; refresh the tools and plan the next step again",
		what, joinAnd(quoteAll(e.Missing)))
	return b.String()
}

// Unwrap returns ErrContract.
func (e *ContractError) Unwrap() error { return ErrContract }

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// checkContract checks a call's result against the fields its plan needs.
// It returns nil when the result is an error result (the plan's next step
// does not run on an error anyway) or has every needed field; otherwise it
// emits one dev.mcpdrift.contract_error event per missing field and returns
// the *ContractError.
func (d *Client) checkContract(ctx context.Context, cs *mcp.ClientSession, p *mcp.CallToolParams, pl *plan, res *mcp.CallToolResult) error {
	if pl == nil || len(pl.needs) == 0 || res == nil || res.IsError {
		return nil
	}
	var missing []string
	for _, path := range pl.needs {
		if _, ok := LookupPath(res.StructuredContent, path); !ok {
			missing = append(missing, path)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	ce := &ContractError{Tool: p.Name, RequestID: metaString(p.Meta, MetaRequestID), Missing: missing,
		PlannedRevision: metaString(p.Meta, MetaRevision), ServerRevision: metaString(res.Meta, MetaRevision), Result: res}
	e, _ := d.base(cs, otelschema.EventContractError, d.em.now())
	e.sessionAge, e.protocol = 0, "" // not attributes of contract errors
	e.tool, e.requestID, e.revClient, e.revServer = ce.Tool, ce.RequestID, ce.PlannedRevision, ce.ServerRevision
	if e.revClient != "" {
		e.revSource = otelschema.RevisionSourceDeclared
	}
	for _, f := range missing {
		ev := e
		ev.contractField = f
		d.em.emit(ctx, &ev, false)
	}
	return ce
}
