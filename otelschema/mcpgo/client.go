package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/log"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// ClientOptions configures the client instrumentation. The zero value is
// ready to use.
type ClientOptions struct {
	// LoggerProvider provides the logger the drift events are emitted
	// with; nil means the global provider (otel.GetLoggerProvider).
	LoggerProvider log.LoggerProvider
	// RunID identifies the agent run (the seed's Activity). It is sent
	// under MetaRunID with every tools/list and tools/call and set on
	// every event; empty means a random id. Protocols without sessions
	// (2026-07-28) use it as the session key.
	RunID string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// ManualRefresh turns the automatic refresh off, for callers that
	// refresh themselves. By default, on notifications/tools/list_changed
	// the client lists every page of tools/list by itself (Refresh), on its
	// own goroutine, and a planned call sent meanwhile waits for that list
	// before it is checked. With ManualRefresh the snapshot changes only
	// when the caller lists (ClientSession.ListTools, every page, or
	// Refresh); planned calls are still checked against it when sent.
	ManualRefresh bool
	// RefreshTimeout bounds each automatic refresh; 0 means 30 seconds.
	RefreshTimeout time.Duration
	// KeepDefinitions is how many tool definitions that a refresh replaced
	// or removed each session keeps, so that a call planned against one is
	// still associated with it; 0 means 64.
	KeepDefinitions int
}

// Sentinel errors of the client.
var (
	// ErrStalePlan is wrapped by the *StalePlanError CallTool returns for
	// a planned call the client held back.
	ErrStalePlan = errors.New("planned call is stale")
	// ErrContract is wrapped by the *ContractError CallTool returns for a
	// result that lacks a field the plan needs.
	ErrContract = errors.New("result lacks a field the plan needs")
)

// Client instruments an mcp.Client with the seed's client duties. It keeps
// each session's snapshot of tool definitions and, after
// notifications/tools/list_changed, lists again by itself and swaps the
// snapshot at once (ClientOptions.ManualRefresh turns that off); it keeps
// the definitions a refresh retired, sends the planned revision with every
// tools/call, validates a call planned before a swap again against the new
// definition before sending it (StalePlanError), and checks results
// against the fields the plan needs (Needs, ContractError). It records
// refreshes (dev.mcpdrift.refresh, ok or failed), received notifications
// (dev.mcpdrift.list_changed), repairs (dev.mcpdrift.repair) and contract errors
// (dev.mcpdrift.contract_error). The server is authoritative for the calls it
// receives, so the client emits a dev.mcpdrift.call event only for a call it
// held back, which the server never sees. Create it with NewClient; its
// methods are safe for concurrent use.
type Client struct {
	em             emitter
	runID          string
	manual         bool
	refreshTimeout time.Duration
	keep           int
	sessions       sessions[mcp.ClientSession, clientSession]
	// stamps remembers the identity given to each params a caller sent
	// without one, so that Repair can name the call it retries.
	stamps sessions[mcp.CallToolParams, stamp]
}

// clientSession is one session's snapshot and bookkeeping.
type clientSession struct {
	started time.Time

	mu sync.Mutex
	// current is the client snapshot, tool → definition, replaced as a
	// whole by a complete list; listed says one has been.
	current map[string]*definition
	listed  bool
	// retired holds the definitions refreshes replaced or removed.
	retired retired
	// chains are the caller's own multi-page lists under way.
	chains []*listing
	// plans remembers planned calls by request id.
	plans plans
	// notified counts the list_changed notifications received, synced
	// those a complete list has answered since; notifiedAt is when the
	// first unanswered one arrived.
	notified, synced uint64
	notifiedAt       time.Time
	// refreshDone is closed when the automatic refresh under way ends;
	// nil when none is.
	refreshDone chan struct{}
	name, ver   string
	protocol    string
	// acked is closed when the server acknowledges the session's
	// subscriptions/listen (ackOnce closes it once).
	acked   chan struct{}
	ackOnce sync.Once
}

type stamp struct{ id, revision string }

// NewClient instruments c: it adds sending and receiving middleware to it.
// For notifications/tools/list_changed to be received, c needs a
// ToolListChangedHandler in its mcp.ClientOptions.
func NewClient(c *mcp.Client, opts *ClientOptions) *Client {
	if opts == nil {
		opts = &ClientOptions{}
	}
	d := &Client{em: newEmitter(opts.LoggerProvider, opts.Now), runID: opts.RunID, manual: opts.ManualRefresh,
		refreshTimeout: opts.RefreshTimeout, keep: opts.KeepDefinitions}
	if d.runID == "" {
		d.runID = newID()
	}
	if d.refreshTimeout <= 0 {
		d.refreshTimeout = defaultRefreshTimeout
	}
	if d.keep <= 0 {
		d.keep = defaultKeepDefinitions
	}
	c.AddSendingMiddleware(d.send)
	c.AddReceivingMiddleware(d.receive)
	return d
}

// RunID returns the agent run id sent with every request.
func (d *Client) RunID() string { return d.runID }

func (d *Client) session(cs *mcp.ClientSession) *clientSession {
	return d.sessions.get(cs, func() *clientSession {
		return &clientSession{started: d.em.now(), current: map[string]*definition{}, retired: retired{max: d.keep}, acked: make(chan struct{})}
	})
}

// Subscribed waits until the server has acknowledged the session's
// subscriptions/listen, or ctx is done. On the protocol of 2026-07-28
// (SEP-2575) a server sends notifications/tools/list_changed only to the
// sessions whose subscription it has registered, and the SDK's Connect
// sends that request without waiting for it: a tool changed between
// Connect and the registration is announced to no one, and a snapshot
// listed meanwhile stays stale. Call it after Connect, before the first
// list. It returns at once on earlier protocols, where every session is
// notified, and when the server does not announce tool list changes. The
// client subscribes only if its mcp.ClientOptions has a
// ToolListChangedHandler (or another list-changed handler): without one
// there is nothing to wait for, and Subscribed waits until ctx is done.
func (d *Client) Subscribed(ctx context.Context, cs *mcp.ClientSession) error {
	res := cs.InitializeResult()
	if res == nil || res.ProtocolVersion < protocolSubscriptions || res.Capabilities == nil ||
		res.Capabilities.Tools == nil || !res.Capabilities.Tools.ListChanged {
		return nil
	}
	select {
	case <-d.session(cs).acked:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no acknowledgement of subscriptions/listen from the server: %w", ctx.Err())
	}
}

// protocolSubscriptions is the first protocol whose sessions subscribe to
// notifications (subscriptions/listen).
const protocolSubscriptions = "2026-07-28"

// methodSubscriptionsAck is the server's acknowledgement of a
// subscriptions/listen.
const methodSubscriptionsAck = "notifications/subscriptions/acknowledged"

// Revision returns the revision of tool in the session's snapshot.
func (d *Client) Revision(cs *mcp.ClientSession, tool string) (string, bool) {
	s := d.session(cs)
	s.mu.Lock()
	defer s.mu.Unlock()
	if def := s.current[tool]; def != nil {
		return def.revision, true
	}
	return "", false
}

// Plan returns a copy of params stamped at planning time: the revision of
// the tool in the session's current snapshot and a new request id, under
// MetaRevision and MetaRequestID (values already there are kept). Send the
// copy with ClientSession.CallTool, even after a refresh: the server then
// knows which revision the call was planned with, and the client checks it
// again if the snapshot changed in between (StalePlanError). Calls sent
// without Plan are stamped when sent, and not checked.
//
// The session remembers the plan under its request id — the definition it
// was planned with and what opts declare, such as the result fields the
// plan needs (Needs) — until its result arrives; nothing of it but the
// _meta stamps is sent.
func (d *Client) Plan(cs *mcp.ClientSession, params *mcp.CallToolParams, opts ...PlanOption) *mcp.CallToolParams {
	var cfg planConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	p := *params
	p.Meta = maps.Clone(params.Meta)
	if p.Meta == nil {
		p.Meta = mcp.Meta{}
	}
	s := d.session(cs)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := p.Meta[MetaRevision]; !ok {
		if def := s.current[p.Name]; def != nil {
			p.Meta[MetaRevision] = def.revision
		}
	}
	if _, ok := p.Meta[MetaRequestID]; !ok {
		p.Meta[MetaRequestID] = newID()
	}
	p.Meta[MetaRunID] = d.runID
	s.plans.put(metaString(p.Meta, MetaRequestID),
		&plan{def: s.definition(p.Name, metaString(p.Meta, MetaRevision)), needs: cfg.needs})
	return &p
}

func (d *Client) send(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		cs, ok := req.GetSession().(*mcp.ClientSession)
		if !ok {
			return next(ctx, method, req)
		}
		switch method {
		case methodCallTool:
			p, ok := req.GetParams().(*mcp.CallToolParams)
			if !ok || p == nil {
				break
			}
			d.learn(cs, p.Meta)
			return d.call(ctx, cs, next, p)
		case methodListTools:
			p, _ := req.GetParams().(*mcp.ListToolsParams)
			var q mcp.ListToolsParams
			if p != nil {
				q = *p
			}
			q.Meta = maps.Clone(q.Meta)
			if q.Meta == nil {
				q.Meta = mcp.Meta{}
			}
			q.Meta[MetaRunID] = d.runID
			d.learn(cs, q.Meta)
			return d.listPage(ctx, cs, next, &q)
		case methodSubscriptionsListen:
			// The SDK's own request: the server learns the run id of the
			// stream its notifications are sent on.
			if p := req.GetParams(); p != nil && !isNil(p) {
				m := maps.Clone(p.GetMeta())
				if m == nil {
					m = map[string]any{}
				}
				m[MetaRunID] = d.runID
				p.SetMeta(m)
			}
		case methodInitialize:
			if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p.ClientInfo != nil {
				s := d.session(cs)
				s.mu.Lock()
				s.name, s.ver, s.protocol = p.ClientInfo.Name, p.ClientInfo.Version, p.ProtocolVersion
				s.mu.Unlock()
			}
		}
		return next(ctx, method, req)
	}
}

// learn records the client identity and protocol a request's _meta
// carries (protocol 2026-07-28 sends them with every request).
func (d *Client) learn(cs *mcp.ClientSession, meta map[string]any) {
	ci, _ := meta[mcp.MetaKeyClientInfo].(*mcp.Implementation)
	pv, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	if ci == nil && pv == "" {
		return
	}
	s := d.session(cs)
	s.mu.Lock()
	if ci != nil {
		s.name, s.ver = ci.Name, ci.Version
	}
	if pv != "" {
		s.protocol = pv
	}
	s.mu.Unlock()
}

// stamp returns a copy of p carrying the run id, and the revision and
// request id when p has none.
func (d *Client) stamp(cs *mcp.ClientSession, p *mcp.CallToolParams) *mcp.CallToolParams {
	q := *p
	q.Meta = maps.Clone(p.Meta)
	if q.Meta == nil {
		q.Meta = mcp.Meta{}
	}
	q.Meta[MetaRunID] = d.runID
	_, hasRev := q.Meta[MetaRevision]
	_, hasID := q.Meta[MetaRequestID]
	if !hasRev || !hasID {
		st := d.stamps.get(p, func() *stamp { return &stamp{} })
		if !hasRev {
			if rev, ok := d.Revision(cs, p.Name); ok {
				q.Meta[MetaRevision] = rev
			}
		}
		if !hasID {
			q.Meta[MetaRequestID] = newID()
		}
		*st = stamp{id: metaString(q.Meta, MetaRequestID), revision: metaString(q.Meta, MetaRevision)}
	}
	return &q
}

// base returns an event of the session with its identity fields set.
func (d *Client) base(cs *mcp.ClientSession, name otelschema.EventName, now time.Time) (event, *clientSession) {
	s := d.session(cs)
	e := event{name: name, time: now, runID: d.runID, sessionID: cs.ID(), sessionAge: now.Sub(s.started)}
	s.mu.Lock()
	e.clientName, e.clientVersion, e.protocol = s.name, s.ver, s.protocol
	s.mu.Unlock()
	return e, s
}

func (d *Client) receive(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == methodSubscriptionsAck {
			if cs, ok := req.GetSession().(*mcp.ClientSession); ok {
				s := d.session(cs)
				s.ackOnce.Do(func() { close(s.acked) })
			}
		}
		if method == methodToolListChanged {
			if cs, ok := req.GetSession().(*mcp.ClientSession); ok {
				now := d.em.now()
				e, _ := d.base(cs, otelschema.EventListChanged, now)
				e.method = methodToolListChanged
				d.em.emit(ctx, &e, false)
				// The SDK drops its cached lists in next, so the refresh
				// starts once next has returned (or panicked).
				if start := d.noticed(cs, now); start != nil {
					defer start()
				}
			}
		}
		return next(ctx, method, req)
	}
}

// call sends one tools/call: a planned call is checked against the
// session's snapshot first (checkPlan) and, once its result is in, the
// result against the fields its plan needs (checkContract).
func (d *Client) call(ctx context.Context, cs *mcp.ClientSession, next mcp.MethodHandler, p *mcp.CallToolParams) (mcp.Result, error) {
	pl, err := d.checkPlan(ctx, cs, p)
	if err != nil {
		return nil, err
	}
	q := d.stamp(cs, p)
	res, err := next(ctx, methodCallTool, &mcp.ClientRequest[mcp.Params]{Session: cs, Params: q})
	if err != nil || pl == nil {
		return res, err
	}
	tr, _ := res.(*mcp.CallToolResult)
	if tr == nil || tr.IsError {
		return res, err // kept: a retry of the call needs what it needed
	}
	s := d.session(cs)
	s.mu.Lock()
	s.plans.drop(metaString(q.Meta, MetaRequestID))
	s.plans.drop(metaString(q.Meta, MetaRetryOf))
	s.mu.Unlock()
	if err := d.checkContract(ctx, cs, q, pl, tr); err != nil {
		return nil, err
	}
	return res, nil
}

// Rejection is a server's repairable rejection of a tool call, as carried
// in the result's structured content (see ParseRejection).
type Rejection struct {
	ErrorCode         string
	Tool              string
	RequiredAction    string
	SideEffectStarted bool
	CurrentRevision   string
	ClientRevision    string
	ChangeClass       otelschema.ChangeClass
	MissingFields     []string
	Replacement       string
}

// Outcome returns the outcome of the rejected call the rejection answered,
// from its error code; OutcomeUnspecified for a code mcpgo does not send.
func (r Rejection) Outcome() otelschema.Outcome {
	return codeOutcomes[r.ErrorCode]
}

// ParseRejection returns the rejection a tool result carries: an error
// result whose structured content has an error_code.
func ParseRejection(res *mcp.CallToolResult) (Rejection, bool) {
	if res == nil || !res.IsError {
		return Rejection{}, false
	}
	var m map[string]any
	switch sc := res.StructuredContent.(type) {
	case map[string]any:
		m = sc
	default:
		raw, err := json.Marshal(sc)
		if err != nil || json.Unmarshal(raw, &m) != nil {
			return Rejection{}, false
		}
	}
	r := Rejection{
		ErrorCode:       metaString(m, "error_code"),
		Tool:            metaString(m, "tool"),
		RequiredAction:  metaString(m, "required_action"),
		CurrentRevision: metaString(m, "current_revision"),
		ClientRevision:  metaString(m, "client_revision"),
		Replacement:     metaString(m, "replacement"),
	}
	if r.ErrorCode == "" {
		return Rejection{}, false
	}
	r.SideEffectStarted, _ = m["side_effect_started"].(bool)
	r.ChangeClass, _ = otelschema.ParseChangeClass(metaString(m, "change_class"))
	if fs, ok := m["missing_fields"].([]any); ok {
		for _, f := range fs {
			if s, ok := f.(string); ok {
				r.MissingFields = append(r.MissingFields, s)
			}
		}
	}
	return r, true
}

// RepairRequest is what a RepairPolicy decides on.
type RepairRequest struct {
	// Call is the rejected call, as it was planned.
	Call *mcp.CallToolParams
	// Rejection is the server's rejection.
	Rejection Rejection
	// Tool is the tool's definition after the refresh; nil when the tool
	// is no longer listed.
	Tool *mcp.Tool
}

// Decision is a RepairPolicy's answer.
type Decision struct {
	// Action is what the client does: RepairActionRefreshRetry or
	// RepairActionModelRepair retry automatically with Arguments,
	// RepairActionHumanApproval retries with Arguments under Approval
	// unless it is ApprovalDenied, RepairActionAbandon gives up.
	Action otelschema.RepairAction
	// Arguments are the retry's arguments.
	Arguments any
	// Approval is the decision the retry runs under, sent under
	// MetaApproval.
	Approval otelschema.Approval
}

// RepairPolicy decides what to do about a stale rejection.
type RepairPolicy func(ctx context.Context, r RepairRequest) (Decision, error)

// Approver asks a person about a repair no policy may make alone. It
// returns the retry's arguments and the decision: ApprovalPerCall or
// ApprovalSession to retry, ApprovalDenied not to.
type Approver func(ctx context.Context, r RepairRequest) (args any, approval otelschema.Approval, err error)

// sensitiveFields are the fields a retry never fills in by itself: they can
// widen or redirect the action (the seed's list).
var sensitiveFields = []string{"environment", "account_id", "account", "repository", "repo", "host", "user",
	"confirmation", "confirm", "target", "scope"}

// SafeRetry returns the seed's repair policy. It refreshes and retries
// automatically only when all of these hold: the server identified a stale
// schema (STALE_TOOL_SCHEMA); the change is known to be additive or a
// bounded migration (a semantic, authority or removal change, or one whose
// class the rejection does not state, is not); the first attempt started
// no side effect; and every required
// field the call lacks has a default in the refreshed schema and is not
// sensitive (environment, account, repository, host, user, confirmation,
// target, scope). Otherwise it asks ask, or abandons when ask is nil.
func SafeRetry(ask Approver) RepairPolicy {
	return func(ctx context.Context, r RepairRequest) (Decision, error) {
		if args, ok := autoRetryArgs(r); ok {
			return Decision{Action: otelschema.RepairActionRefreshRetry, Arguments: args, Approval: approvalOf(r.Call)}, nil
		}
		if ask == nil || r.Tool == nil {
			return Decision{Action: otelschema.RepairActionAbandon}, nil
		}
		args, approval, err := ask(ctx, r)
		if err != nil {
			return Decision{}, fmt.Errorf("cannot ask for approval: %w", err)
		}
		return Decision{Action: otelschema.RepairActionHumanApproval, Arguments: args, Approval: approval}, nil
	}
}

func approvalOf(p *mcp.CallToolParams) otelschema.Approval {
	a, _ := otelschema.ParseApproval(metaString(p.Meta, MetaApproval))
	return a
}

// autoRetryArgs returns the arguments of an automatic retry, when the seed
// allows one.
func autoRetryArgs(r RepairRequest) (map[string]any, bool) {
	rej := r.Rejection
	if r.Tool == nil || rej.ErrorCode != CodeStaleToolSchema || rej.SideEffectStarted {
		return nil, false
	}
	switch rej.ChangeClass {
	case otelschema.ChangeClassAdditive, otelschema.ChangeClassBoundedMigration:
	default:
		// Semantic, authority, removal, or a class nobody stated: a
		// change whose class is unknown may widen or redirect the action,
		// so it needs a fresh decision, never an automatic retry.
		return nil, false
	}
	var args map[string]any
	raw, err := json.Marshal(r.Call.Arguments)
	if err != nil || json.Unmarshal(raw, &args) != nil {
		return nil, false
	}
	if args == nil {
		args = map[string]any{}
	}
	var schema struct {
		Properties           map[string]map[string]any `json:"properties"`
		Required             []string                  `json:"required"`
		AdditionalProperties *bool                     `json:"additionalProperties"`
	}
	raw, err = json.Marshal(r.Tool.InputSchema)
	if err != nil || json.Unmarshal(raw, &schema) != nil {
		return nil, false
	}
	if schema.AdditionalProperties != nil && !*schema.AdditionalProperties {
		for k := range args {
			if _, ok := schema.Properties[k]; !ok {
				return nil, false // a field of the old shape the new one refuses
			}
		}
	}
	for _, f := range schema.Required {
		if _, ok := args[f]; ok {
			continue
		}
		def, ok := schema.Properties[f]["default"]
		if !ok || slices.Contains(sensitiveFields, f) {
			return nil, false
		}
		args[f] = def
	}
	return args, true
}

// Repair handles a rejected call: when res is a repairable rejection — a
// server's, or a StalePlanError's Result — it refreshes the tool list
// (Refresh: every page, dev.mcpdrift.refresh events), asks policy what to
// do, retries if the decision allows it — a new request whose MetaRetryOf
// names the rejected one, with its attempt, whether it is automatic and
// the rejected call's revision, so that the server's call event carries
// the retry's identity — and emits a dev.mcpdrift.repair event, whose
// jsonrpc.request.id is the retry's. It returns
// the retry's result; when there was no retry, res and an error wrapping
// ErrNoRetry. A result that is not a rejection is returned as is.
func (d *Client) Repair(ctx context.Context, cs *mcp.ClientSession, call *mcp.CallToolParams, res *mcp.CallToolResult, policy RepairPolicy) (*mcp.CallToolResult, error) {
	rej, ok := ParseRejection(res)
	if !ok {
		return res, nil
	}
	start := d.em.now()
	origID, origRev := metaString(call.Meta, MetaRequestID), metaString(call.Meta, MetaRevision)
	if origID == "" {
		if st := d.stamps.get(call, func() *stamp { return &stamp{} }); st.id != "" {
			origID, origRev = st.id, st.revision
		}
	}
	e, _ := d.base(cs, otelschema.EventRepair, start)
	e.tool, e.retryOf, e.revClient = call.Name, origID, origRev
	e.change, e.errorCode, e.requiredAction = rej.ChangeClass, rej.ErrorCode, rej.RequiredAction

	if err := d.refresh(ctx, cs, false); err != nil {
		e.repairAction, e.repairAutomatic, e.repairResult = otelschema.RepairActionRefreshRetry, true, otelschema.RepairResultFailure
		e.repairDuration = d.em.now().Sub(start)
		d.em.emit(ctx, &e, false)
		return res, fmt.Errorf("cannot refresh tools to repair %s: %w", call.Name, err)
	}
	var tool *mcp.Tool
	s := d.session(cs)
	s.mu.Lock()
	if def := s.current[call.Name]; def != nil {
		tool = def.tool
	}
	s.mu.Unlock()
	dec, err := policy(ctx, RepairRequest{Call: call, Rejection: rej, Tool: tool})
	if err != nil {
		return res, fmt.Errorf("cannot decide how to repair %s: %w", call.Name, err)
	}
	e.repairAction, e.approval = dec.Action, dec.Approval
	e.repairAutomatic = dec.Action == otelschema.RepairActionRefreshRetry || dec.Action == otelschema.RepairActionModelRepair
	if dec.Action == otelschema.RepairActionAbandon || dec.Action == otelschema.RepairActionUnspecified ||
		dec.Approval == otelschema.ApprovalDenied {
		e.repairResult = otelschema.RepairResultFailure
		e.repairDuration = d.em.now().Sub(start)
		d.em.emit(ctx, &e, false)
		return res, fmt.Errorf("%s rejected with %s, repair %s: %w", call.Name, rej.ErrorCode, dec.Action, ErrNoRetry)
	}

	attempt := metaInt(call.Meta, MetaRetryAttempt) + 1
	retry := &mcp.CallToolParams{Name: call.Name, Arguments: dec.Arguments, Meta: mcp.Meta{}}
	for k, v := range call.Meta {
		switch k {
		case MetaRevision, MetaRequestID, MetaRetryOf, MetaRetryAttempt, MetaRetryAutomatic, MetaRetryRevision, MetaRetryAfter, MetaApproval:
		default:
			retry.Meta[k] = v
		}
	}
	retry.Meta[MetaRequestID] = newID()
	if origID != "" {
		retry.Meta[MetaRetryOf] = origID
	}
	retry.Meta[MetaRetryAttempt] = attempt
	retry.Meta[MetaRetryAutomatic] = e.repairAutomatic
	if origRev != "" {
		retry.Meta[MetaRetryRevision] = origRev
	}
	if o := rej.Outcome(); o != otelschema.OutcomeUnspecified {
		retry.Meta[MetaRetryAfter] = o.String()
	}
	if rev, ok := d.Revision(cs, call.Name); ok {
		retry.Meta[MetaRevision] = rev
	}
	if dec.Approval != otelschema.ApprovalUnspecified {
		retry.Meta[MetaApproval] = dec.Approval.String()
	}
	e.requestID, e.retryAttempt = metaString(retry.Meta, MetaRequestID), attempt

	rres, err := cs.CallTool(ctx, retry)
	e.repairResult = otelschema.RepairResultSuccess
	if err != nil || rres == nil || rres.IsError {
		e.repairResult = otelschema.RepairResultFailure
	}
	e.repairDuration = d.em.now().Sub(start)
	d.em.emit(ctx, &e, false)
	if err != nil {
		return nil, fmt.Errorf("cannot retry %s: %w", call.Name, err)
	}
	return rres, nil
}

// newID returns a random 64-bit id in hex.
func newID() string { return strconv.FormatUint(rand.Uint64(), 16) }
