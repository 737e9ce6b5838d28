package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/internal/argschema"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// listedPage records one page of a tools/list result answered to the
// session: the first page of a listing starts the session's listed
// snapshot afresh, the next ones add to it.
func (st *serverSession) listedPage(res *mcp.ListToolsResult, first bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if first || st.listed == nil {
		st.listed = make(map[string]string, len(res.Tools))
	}
	for _, t := range res.Tools {
		if t == nil {
			continue
		}
		if rev := metaString(t.Meta, MetaRevision); rev != "" {
			st.listed[t.Name] = rev
		}
	}
}

// listedRevision returns the revision of tool this server last listed to
// the session, "" when it listed none.
func (st *serverSession) listedRevision(tool string) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.listed[tool]
}

// snapshot is the client revision of one call and where it came from.
type snapshot struct {
	revision string
	source   otelschema.RevisionSource
	// valid is the current revision's verdict on the arguments, when it was
	// already computed (nil otherwise): inference computes it.
	valid *bool
}

// admission is what the middleware knows of one tool when a call arrives:
// its current contract, its earlier revisions and the adapters to the
// current one, read together under the server's lock.
type admission struct {
	current  *contract
	earlier  []*contract
	adapters map[string]*Adapter // from revision → adapter to current
}

// known returns the contract of revision rev, nil when the server does not
// know it.
func (a *admission) known(rev string) *contract {
	if rev == a.current.revision {
		return a.current
	}
	for _, e := range a.earlier {
		if e.revision == rev {
			return e
		}
	}
	return nil
}

// fits reports whether args are valid under c.
func fits(c *contract, args json.RawMessage) bool { return c.schema.Validate(args) == nil }

// resolve finds the client snapshot of a call: declared, else listed while
// the arguments fit it, else inferred from the arguments, else unknown.
func (a *admission) resolve(declared, listed string, args json.RawMessage) snapshot {
	if declared != "" {
		return snapshot{revision: declared, source: otelschema.RevisionSourceDeclared}
	}
	if listed != "" {
		c := a.known(listed)
		if c == nil || fits(c, args) {
			return snapshot{revision: listed, source: otelschema.RevisionSourceListed}
		}
		// The arguments contradict what was listed: the client plans
		// with another snapshot (a cache from an earlier session, say).
		if s := a.infer(args); s.source == otelschema.RevisionSourceInferred {
			return s
		}
		return snapshot{revision: listed, source: otelschema.RevisionSourceListed}
	}
	return a.infer(args)
}

// infer returns the one known revision whose input schema accepts args
// (source inferred). When several older revisions do and the current one
// does not, it is the oldest that an adapter serves, else the oldest:
// counting the call against the oldest keeps the oldest adapter from
// looking unused. When the current revision and an older one both accept
// them, or none does, the snapshot is unknown.
func (a *admission) infer(args json.RawMessage) snapshot {
	cur := fits(a.current, args)
	var older []*contract
	for _, e := range a.earlier {
		if fits(e, args) {
			older = append(older, e)
		}
	}
	switch {
	case cur && len(older) == 0:
		return snapshot{revision: a.current.revision, source: otelschema.RevisionSourceInferred, valid: &cur}
	case cur || len(older) == 0:
		return snapshot{valid: &cur}
	}
	pick := older[0]
	for _, e := range older {
		if a.adapters[e.revision] != nil {
			pick = e
			break
		}
	}
	return snapshot{revision: pick.revision, source: otelschema.RevisionSourceInferred, valid: &cur}
}

// call admits, runs and records one tools/call.
func (d *Server) call(ctx context.Context, next mcp.MethodHandler, r *mcp.CallToolRequest) (mcp.Result, error) {
	now := d.em.now()
	p := r.Params
	st := d.session(r.Session, p.Meta)
	e := event{name: otelschema.EventCall, time: now, method: methodCallTool, tool: p.Name,
		requestID:      metaString(p.Meta, MetaRequestID),
		retryOf:        metaString(p.Meta, MetaRetryOf),
		retryAttempt:   metaInt(p.Meta, MetaRetryAttempt),
		idempotencyKey: metaString(p.Meta, MetaIdempotencyKey),
	}
	e.approval, _ = otelschema.ParseApproval(metaString(p.Meta, MetaApproval))
	var retriedRev string
	if e.retryOf != "" {
		e.repairAutomatic, e.hasAutomatic = metaBool(p.Meta, MetaRetryAutomatic)
		retriedRev = metaString(p.Meta, MetaRetryRevision)
		e.retryAfter, _ = otelschema.ParseOutcome(metaString(p.Meta, MetaRetryAfter))
	}
	st.identity(&e, r.Session, now)
	if d.audit {
		e.argsRaw = string(p.Arguments)
	}
	declared, listed := metaString(p.Meta, MetaRevision), st.listedRevision(p.Name)

	d.mu.RLock()
	adm := admission{current: d.tools[p.Name]}
	replacement, removed := d.removed[p.Name]
	if adm.current != nil {
		adm.earlier = d.earlier[p.Name]
		for k, ad := range d.adapters {
			if k.tool == p.Name && k.to == adm.current.revision {
				if adm.adapters == nil {
					adm.adapters = map[string]*Adapter{}
				}
				adm.adapters[k.from] = ad
			}
		}
	}
	d.mu.RUnlock()

	if adm.current == nil {
		if removed {
			e.revClient, e.revSource = declared, otelschema.RevisionSourceDeclared
			if declared == "" && listed != "" {
				e.revClient, e.revSource = listed, otelschema.RevisionSourceListed
			} else if declared == "" {
				e.revSource = otelschema.RevisionSourceUnspecified
			}
			e.outcome, e.change, e.errorCode = otelschema.OutcomeRemoved, otelschema.ChangeClassRemoval, CodeToolRemoved
			d.em.emit(ctx, &e, d.audit)
			return removedResult(p.Name, replacement), nil
		}
		// A tool this middleware does not manage: recorded as it ran.
		e.revClient, e.revSource = declared, otelschema.RevisionSourceUnspecified
		if declared != "" {
			e.revSource = otelschema.RevisionSourceDeclared
		}
		e.outcome = otelschema.OutcomeCurrent
		return d.run(ctx, next, r, &e, &callState{})
	}

	c := adm.current
	snap := adm.resolve(declared, listed, p.Arguments)
	e.revClient, e.revSource = snap.revision, snap.source
	e.revServer, e.privilege = c.revision, c.privilege
	state := &callState{contract: c}

	if snap.revision != "" && snap.revision != c.revision && !c.sameContract(snap.revision) {
		ad := adm.adapters[snap.revision]
		if ad == nil {
			e.change = c.change
			res := d.reject(&e, c, p.Arguments)
			d.em.emit(ctx, &e, d.audit)
			return res, nil
		}
		e.adapterID, e.change = ad.ID, ad.Class
		args := p.Arguments
		if ad.Normalize != nil {
			var err error
			if args, err = ad.Normalize(ctx, p.Arguments); err != nil {
				e.outcome, e.errorCode = otelschema.OutcomeRejectedInvalid, CodeInvalidArguments
				d.em.emit(ctx, &e, d.audit)
				return invalidResult(p.Name, ad, err), nil
			}
		}
		if d.audit {
			e.argsNormalized = string(args)
		}
		if err := c.schema.Validate(args); err != nil {
			// The adapter's output is no valid call of the revision it
			// serves: the handler would run on arguments it rejects.
			res := d.invalid(&e, c, err, fmt.Sprintf("the adapter %s from revision %s produced arguments that revision %s rejects",
				ad.ID, Short(ad.From), Short(c.revision)), ActionRefreshTools)
			d.em.emit(ctx, &e, d.audit)
			return res, nil
		}
		p.Arguments = args
		e.outcome = otelschema.OutcomeNormalized
		res, err := d.run(ctx, next, r, &e, state)
		if tr, ok := res.(*mcp.CallToolResult); ok && tr != nil {
			// The result says it was normalised, so that the client (and
			// mcpdrift drifttest) can tell an adapted call from one the
			// current revision accepted as it came.
			tr.Meta = maps.Clone(tr.Meta)
			if tr.Meta == nil {
				tr.Meta = mcp.Meta{}
			}
			tr.Meta[MetaAdapterID] = ad.ID
			tr.Meta[MetaRevision] = c.revision
		}
		return res, err
	}

	// Planned with the current revision, or with an unknown snapshot: the
	// arguments must be valid under the current revision.
	var verr error
	if snap.valid == nil || !*snap.valid {
		verr = c.schema.Validate(p.Arguments)
	}
	if verr != nil {
		action, why := ActionFixArguments, "its arguments do not match revision "+Short(c.revision)
		if snap.revision == "" {
			// An unknown snapshot: perhaps of a revision this server does
			// not know; a refresh gives the client the current one.
			action, why = ActionRefreshTools, "its arguments match no revision this server knows"
		}
		res := d.invalid(&e, c, verr, why, action)
		d.em.emit(ctx, &e, d.audit)
		return res, nil
	}
	e.outcome = otelschema.OutcomeCurrent
	if retriedRev != "" && retriedRev != c.revision {
		// A retry planned after a change, of a call planned before it:
		// it crosses the change the current revision declares.
		e.change = c.change
	}
	return d.run(ctx, next, r, &e, state)
}

// run runs an admitted call's handler and records its outcome.
func (d *Server) run(ctx context.Context, next mcp.MethodHandler, r *mcp.CallToolRequest, e *event, state *callState) (mcp.Result, error) {
	res, err := next(context.WithValue(ctx, callKey{}, state), methodCallTool, r)
	e.sideEffect = state.started.Load()
	e.externalRequests = state.requests.Load()
	if t := state.target.Load(); t != nil {
		e.externalTarget = *t
	}
	if err != nil {
		e.outcome = otelschema.OutcomeFailed
	} else if tr, ok := res.(*mcp.CallToolResult); ok && tr.IsError {
		e.outcome = otelschema.OutcomeFailed
		e.errorCode = resultCode(tr)
	}
	d.em.emit(ctx, e, d.audit)
	return res, err
}

// maxViolations bounds the violations an invalid-arguments error lists.
const maxViolations = 8

// invalid answers a call whose arguments its revision's input schema
// rejects, before its handler runs, with the facts the seed asks of an
// error a model can repair from: the revision expected, the fields at
// fault, what to do, and that nothing was started.
func (d *Server) invalid(e *event, c *contract, verr error, why, action string) *mcp.CallToolResult {
	e.outcome, e.errorCode, e.requiredAction = otelschema.OutcomeRejectedInvalid, CodeInvalidArguments, action
	var ve *argschema.Error
	var violations []argschema.Violation
	if errors.As(verr, &ve) {
		violations = ve.Violations
	} else {
		violations = []argschema.Violation{{Kind: "json", Message: verr.Error()}}
	}
	if len(violations) > maxViolations {
		violations = violations[:maxViolations]
	}
	var missing, bad []string
	for _, v := range violations {
		f := strings.TrimPrefix(v.Field, "/")
		switch {
		case v.Kind == "required":
			missing = append(missing, f)
		case f != "":
			bad = append(bad, f)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s rejected this request because %s.", c.name, why)
	if len(c.required) > 0 {
		fmt.Fprintf(&b, " Revision %s requires %s.", Short(c.revision), joinAnd(c.required))
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, " Missing: %s.", joinAnd(missing))
	}
	for _, v := range violations {
		if v.Kind != "required" {
			fmt.Fprintf(&b, " %s.", v)
		}
	}
	if action == ActionRefreshTools {
		b.WriteString(" Refresh tools before retrying.")
	} else {
		b.WriteString(" Fix the arguments before retrying.")
	}
	b.WriteString(" No side effect was started.")
	field := ""
	if len(violations) > 0 {
		field = strings.TrimPrefix(violations[0].Field, "/")
	}
	sc := map[string]any{
		"error_code":          CodeInvalidArguments,
		"tool":                c.name,
		"required_action":     action,
		"side_effect_started": false,
		"current_revision":    c.revision,
		"field":               field,
		"violations":          violations,
	}
	if e.revClient != "" {
		sc["client_revision"] = e.revClient
	}
	if len(missing) > 0 {
		sc["missing_fields"] = missing
	}
	if len(bad) > 0 {
		sc["invalid_fields"] = bad
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}, StructuredContent: sc}
}
