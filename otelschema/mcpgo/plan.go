package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/internal/argschema"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// maxPlans is how many planned calls a session remembers (their
// definitions and needs) until they are sent; the oldest is forgotten
// beyond it, and is then checked by its revision alone.
const maxPlans = 1024

// PlanOption declares something about a planned call that stays in the
// client: see Needs.
type PlanOption func(*planConfig)

type planConfig struct {
	needs []string
}

// plan is what the client remembers of one planned call, by request id.
type plan struct {
	// def is the definition the call was planned with; nil when the tool
	// was not in the snapshot.
	def   *definition
	needs []string
}

// plans remembers planned calls by request id, at most maxPlans.
type plans struct {
	m     map[string]*plan
	order []string // insertion order; may hold ids already dropped
}

func (ps *plans) put(id string, p *plan) {
	if ps.m == nil {
		ps.m = map[string]*plan{}
	}
	if _, ok := ps.m[id]; !ok {
		ps.order = append(ps.order, id)
	}
	ps.m[id] = p
	for len(ps.m) > maxPlans && len(ps.order) > 0 {
		delete(ps.m, ps.order[0])
		ps.order = ps.order[1:]
	}
	if len(ps.order) > 2*maxPlans {
		ps.order = slices.DeleteFunc(ps.order, func(id string) bool { _, ok := ps.m[id]; return !ok })
	}
}

func (ps *plans) get(id string) *plan {
	if id == "" {
		return nil
	}
	return ps.m[id]
}

func (ps *plans) drop(id string) { delete(ps.m, id) }

// StalePlanError is the error CallTool returns, through the client
// middleware, for a call planned against a revision that a refresh has
// since replaced, when the current definition refuses the call's
// arguments, or no longer lists the tool. No request was sent, so no side
// effect started. It wraps ErrStalePlan.
//
// What to do: the snapshot is already refreshed. Give the model the
// current definition (Current) and this error — Result renders it as the
// repairable tool error the seed describes — and plan the call again; or
// hand Result to Client.Repair, whose policy decides whether a retry may
// be automatic.
type StalePlanError struct {
	// Tool is the tool called; RequestID the call's MetaRequestID.
	Tool, RequestID string
	// PlannedRevision is the revision the call was planned with;
	// CurrentRevision the one the session's snapshot holds now, empty when
	// the tool is no longer listed (Removed).
	PlannedRevision, CurrentRevision string
	Removed                          bool
	// Missing lists the required fields the arguments lack, Invalid the
	// fields whose values the current schema refuses (wrong type, not in
	// an enum, no longer allowed …), as property paths: "region",
	// "target/host". Reasons says, one line per violation, what is wrong
	// with the arguments other than missing fields.
	Missing, Invalid, Reasons []string
	// Planned is the definition the call was planned with, nil when the
	// session no longer remembers it; Current the definition listed now,
	// nil when Removed.
	Planned, Current *mcp.Tool
	// RequiredAction is what the caller must do: ActionRefreshTools (the
	// refresh is done; what remains is planning again with Current).
	RequiredAction string
}

func (e *StalePlanError) Error() string {
	var b strings.Builder
	if e.Removed {
		fmt.Fprintf(&b, "%s was not called: it was planned with revision %s and is no longer listed", e.Tool, Short(e.PlannedRevision))
	} else {
		fmt.Fprintf(&b, "%s was not called: it was planned with revision %s, and revision %s, listed since, refuses its arguments",
			e.Tool, Short(e.PlannedRevision), Short(e.CurrentRevision))
		var why []string
		if len(e.Missing) > 0 {
			why = append(why, "missing "+joinAnd(e.Missing))
		}
		if len(e.Invalid) > 0 {
			why = append(why, "invalid "+joinAnd(e.Invalid))
		}
		if len(why) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(why, "; "))
		}
	}
	fmt.Fprintf(&b, "; no request was sent (request %s); plan the call again with the current tools", e.RequestID)
	return b.String()
}

// Unwrap returns ErrStalePlan.
func (e *StalePlanError) Unwrap() error { return ErrStalePlan }

// Result renders the error as the repairable tool error the seed asks for,
// in the shape of the server middleware's rejections (ParseRejection reads
// it): error_code STALE_TOOL_SCHEMA (TOOL_REMOVED when the tool is gone),
// the tool, required_action, side_effect_started = false, the current and
// planned revisions and the missing fields, with a text for the model.
func (e *StalePlanError) Result() *mcp.CallToolResult {
	sc := map[string]any{
		"error_code":          CodeStaleToolSchema,
		"tool":                e.Tool,
		"required_action":     e.RequiredAction,
		"side_effect_started": false,
		"client_revision":     e.PlannedRevision,
	}
	var b strings.Builder
	if e.Removed {
		sc["error_code"] = CodeToolRemoved
		fmt.Fprintf(&b, "%s is no longer listed by the server; the call planned with revision %s was not sent.", e.Tool, Short(e.PlannedRevision))
	} else {
		sc["current_revision"] = e.CurrentRevision
		fmt.Fprintf(&b, "%s changed since this call was planned (revision %s, now %s); the call was not sent. Refresh tools before retrying.",
			e.Tool, Short(e.PlannedRevision), Short(e.CurrentRevision))
		if req := requiredFields(e.Current.InputSchema); len(req) > 0 {
			fmt.Fprintf(&b, " The current schema requires %s.", joinAnd(req))
		}
		if len(e.Missing) > 0 {
			fmt.Fprintf(&b, " Missing: %s.", joinAnd(e.Missing))
		}
		for _, r := range e.Reasons {
			fmt.Fprintf(&b, " At %s.", r)
		}
	}
	b.WriteString(" No side effect was started.")
	// Lists as they read once sent as JSON, as a server's rejection does.
	if len(e.Missing) > 0 {
		sc["missing_fields"] = anys(e.Missing)
	}
	if len(e.Invalid) > 0 {
		sc["invalid_fields"] = anys(e.Invalid)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}, StructuredContent: sc}
}

// checkPlan runs before a call is sent. A call planned against a revision
// the session's snapshot has since replaced (its _meta carries
// MetaRevision, different from the current one) is validated again, with
// argschema, against the current definition, after waiting for an
// automatic refresh under way. Still valid, it goes as planned: the server,
// which knows the change's class and its adapters, decides. Refused, or its
// tool no longer listed, it is held back: checkPlan emits its client
// dev.mcpdrift.call event and returns a *StalePlanError. It also returns what
// the session remembers of the plan.
//
// A definition that argschema cannot compile, or arguments that do not
// marshal to JSON, are left to the server: the client cannot say more.
func (d *Client) checkPlan(ctx context.Context, cs *mcp.ClientSession, p *mcp.CallToolParams) (*plan, error) {
	s := d.session(cs)
	id := metaString(p.Meta, MetaRequestID)
	planned := metaString(p.Meta, MetaRevision)
	if planned != "" {
		if err := d.awaitRefresh(ctx, cs, s); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	pl := s.plans.get(id)
	if pl == nil {
		pl = s.plans.get(metaString(p.Meta, MetaRetryOf)) // a retry needs what the call it retries needed
	}
	cur, listed := s.current[p.Name], s.listed
	var was *definition
	if pl != nil && pl.def != nil && pl.def.revision == planned {
		was = pl.def
	} else if planned != "" {
		was = s.definition(p.Name, planned)
	}
	s.mu.Unlock()

	if planned == "" || (cur != nil && cur.revision == planned) {
		return pl, nil
	}
	se := &StalePlanError{Tool: p.Name, RequestID: id, PlannedRevision: planned, RequiredAction: ActionRefreshTools}
	if was != nil {
		se.Planned = was.tool
	}
	if cur == nil {
		if !listed || was == nil {
			return pl, nil // a tool the client never listed: the server answers
		}
		se.Removed = true
	} else {
		schema, err := cur.compiled()
		if err != nil {
			return pl, nil
		}
		raw, err := json.Marshal(p.Arguments)
		if err != nil {
			return pl, nil
		}
		var ae *argschema.Error
		if err := schema.Validate(raw); !errors.As(err, &ae) {
			return pl, nil // valid (or not JSON): sent as planned
		}
		se.CurrentRevision, se.Current = cur.revision, cur.tool
		se.Missing = ae.Fields("required")
		for _, v := range ae.Violations {
			if v.Kind == "required" {
				continue
			}
			se.Reasons = append(se.Reasons, v.String())
			if f := strings.TrimPrefix(v.Field, "/"); f != "" && !slices.Contains(se.Invalid, f) {
				se.Invalid = append(se.Invalid, f)
			}
		}
	}
	d.heldBack(ctx, cs, p, se)
	return pl, se
}

// heldBack emits the client's dev.mcpdrift.call event of a call it did not
// send. The server never sees the call, so this is its only call event.
func (d *Client) heldBack(ctx context.Context, cs *mcp.ClientSession, p *mcp.CallToolParams, se *StalePlanError) {
	e, _ := d.base(cs, otelschema.EventCall, d.em.now())
	e.method, e.tool, e.requestID = methodCallTool, se.Tool, se.RequestID
	e.revClient, e.revSource, e.revServer = se.PlannedRevision, otelschema.RevisionSourceDeclared, se.CurrentRevision
	e.outcome, e.errorCode, e.requiredAction = otelschema.OutcomeRejectedStale, CodeStaleToolSchema, se.RequiredAction
	if se.Removed {
		e.outcome, e.errorCode, e.change = otelschema.OutcomeRemoved, CodeToolRemoved, otelschema.ChangeClassRemoval
	}
	e.retryOf, e.retryAttempt = metaString(p.Meta, MetaRetryOf), metaInt(p.Meta, MetaRetryAttempt)
	if e.retryOf != "" {
		e.repairAutomatic, e.hasAutomatic = metaBool(p.Meta, MetaRetryAutomatic)
		e.retryAfter, _ = otelschema.ParseOutcome(metaString(p.Meta, MetaRetryAfter))
	}
	e.idempotencyKey = metaString(p.Meta, MetaIdempotencyKey)
	e.approval, _ = otelschema.ParseApproval(metaString(p.Meta, MetaApproval))
	d.em.emit(ctx, &e, false)
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
