package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/log"

	"github.com/mcpdrift/mcpdrift/internal/argschema"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// MCP method names the middleware acts on.
const (
	methodCallTool            = "tools/call"
	methodListTools           = "tools/list"
	methodToolListChanged     = "notifications/tools/list_changed"
	methodInitialize          = "initialize"
	methodDiscover            = "server/discover"
	methodSubscriptionsListen = "subscriptions/listen"
	maxRememberedChanges      = 256
)

// Sentinel errors.
var (
	// ErrInvalidAdapter is returned by AddAdapter for a declaration it
	// cannot serve.
	ErrInvalidAdapter = errors.New("invalid adapter")
	// ErrInvalidTool is returned by AddTool for a nil tool or handler.
	ErrInvalidTool = errors.New("invalid tool")
	// ErrNoRetry is returned by Client.Repair when its policy did not retry
	// the call (abandon, or a denied approval).
	ErrNoRetry = errors.New("call not retried")
)

// ServerOptions configures the server instrumentation. The zero value is
// ready to use.
type ServerOptions struct {
	// LoggerProvider provides the logger the drift events are emitted
	// with; nil means the global provider (otel.GetLoggerProvider).
	LoggerProvider log.LoggerProvider
	// OmitArguments leaves the call arguments as received and as
	// normalised (dev.mcpdrift.args.raw, dev.mcpdrift.args.normalized) out of
	// the call events. They are recorded by default, for the audit; the
	// ingester redacts them per its configuration.
	OmitArguments bool
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// ListTTL and ListCacheScope are the cache hint of the tool list
	// (ttlMs and cacheScope, MCP 2026-07-28, SEP-2549): when ListTTL is
	// positive, every tools/list result the server answers carries them
	// (ListTTL in whole milliseconds, ListCacheScope when not empty; the
	// SDK's default scope otherwise), overriding what the SDK's
	// ServerOptions.SetCacheable set, and every dev.mcpdrift.advertised
	// event carries them too (dev.mcpdrift.list.ttl_ms,
	// dev.mcpdrift.list.cache_scope): the release check and the
	// propagation report read from them how long a client may keep the
	// old list after a change. Zero leaves the results as the SDK makes
	// them and the events without a hint.
	ListTTL        time.Duration
	ListCacheScope string
}

// Contract describes one revision of a tool's execution contract: what the
// server accepts and does on tools/call.
type Contract struct {
	// Revision names the revision, such as "2"; empty means the tool
	// definition's Digest. It is advertised in the tool's _meta under
	// MetaRevision.
	Revision string
	// ToolDigest is a SEP-2636 tool digest the server declares for the
	// tool ("sha256:" and the hex, as its tools/manifest serves it, or
	// ToolDigest of the definition); when Revision is empty, the revision
	// is its ToolRevision, whose form says the algorithm. A digest of
	// another form is an error of AddTool. A call planned with the v1
	// Digest of the same definition (what mcpgo advertised without it)
	// runs as current, unless Change is semantic or authority.
	ToolDigest string
	// Change classifies the change from earlier revisions. Calls planned
	// against an earlier revision that no Adapter serves are rejected:
	// rejected_incompatible for a semantic change, rejected_stale
	// (STALE_TOOL_SCHEMA) otherwise.
	Change otelschema.ChangeClass
	// Privilege is the highest privilege a call needs.
	Privilege otelschema.Privilege
	// Earlier are definitions of the tool's earlier revisions that
	// clients may still plan with, oldest first; each one's revision is
	// its MetaRevision, else its Digest. A server knows the revisions it
	// replaced in this process by itself; Earlier tells a freshly started
	// one (a restart, another replica) what it no longer advertises, so
	// that it can recognise a call planned with one of them from its
	// arguments when the client declares nothing (see Server).
	Earlier []*mcp.Tool
}

// Adapter serves calls planned against an older revision of a tool by
// normalising their arguments to a newer one, during a compatibility window.
// Only additive changes and bounded migrations can be adapted: a semantic or
// authority change needs a new decision (or a new tool name), not a
// reinterpretation.
type Adapter struct {
	// ID identifies the adapter in reports, such as
	// "deploy_preview-1-to-2".
	ID string
	// Tool is the tool's name; From the revision whose calls the adapter
	// accepts, To the revision it normalises them to (the one executing).
	Tool, From, To string
	// Class is ChangeClassAdditive or ChangeClassBoundedMigration.
	Class otelschema.ChangeClass
	// WindowEnd is the declared end of the compatibility window; zero when
	// none was declared.
	WindowEnd time.Time
	// Normalize rewrites arguments of revision From into arguments of
	// revision To, deterministically; an error rejects the call as
	// rejected_invalid, before the handler runs. nil (additive changes
	// only) passes the arguments through unchanged.
	Normalize func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

// Server instruments an mcp.Server: it holds each tool's execution contract
// and compatibility adapters, records every tools/call as a dev.mcpdrift.call
// event, answers calls planned against a revision it can no longer serve
// with a repairable error, and records the list_changed notifications it
// sends. Create it with NewServer; its methods are safe for concurrent use.
//
// The client snapshot a call was planned with is, in this order: the
// revision the client declares in the call's _meta (MetaRevision, source
// declared); else the revision this server last listed to the session
// (listed), while the arguments fit it; else the one revision, among
// those the server knows (the current one, the ones it replaced, and
// Contract.Earlier), whose input schema accepts the arguments (inferred;
// when several older ones do and the current one does not, the oldest
// that an adapter serves, else the oldest); else unknown, never the
// current one. A call of an older revision gets its adapter or a clean
// rejection, whatever the source. No handler runs on arguments that its
// own revision's input schema rejects: those calls are rejected_invalid
// with the fields at fault, before any side effect.
//
// What an instance can know: the sessions it listed to itself. Behind a
// load balancer without session affinity, after a restart, or on a
// stateless transport (where each request is a session of its own), it
// has listed nothing to the session, and knows the snapshot only from a
// declaration or from the arguments. Arguments that fit both an older
// revision and the current one (an additive change, or a semantic one
// whose old arguments stay valid) tell nothing: the call runs under the
// current revision with its client revision unknown, and the reports count
// it as unknown, never as current.
type Server struct {
	srv   *mcp.Server
	em    emitter
	audit bool
	// listTTLMs and listScope are ServerOptions.ListTTL and ListCacheScope.
	listTTLMs int64
	listScope string

	// mu is held for writing while a tool's contract and the SDK's tool
	// list change together, and for reading while a tools/list is answered
	// and a call is admitted, so that the advertised schema and the
	// execution contract never disagree.
	mu       sync.RWMutex
	tools    map[string]*contract
	earlier  map[string][]*contract // tool → its known earlier revisions, oldest first
	removed  map[string]string      // removed tool → its replacement, if any
	adapters map[adapterKey]*Adapter
	byID     map[string]*Adapter

	// changes remembers the recent contract changes, for the list_changed
	// events; gen is the generation of the last one.
	changesMu sync.Mutex
	changes   []change
	gen       uint64

	sessions sessions[mcp.ServerSession, serverSession]
}

// contract is one revision of a tool: the current one, with its handler,
// or an earlier one the server still recognises (handler nil).
type contract struct {
	name      string
	revision  string
	change    otelschema.ChangeClass
	privilege otelschema.Privilege
	required  []string
	schema    *argschema.Schema // the compiled input schema
	handler   mcp.ToolHandler
	// definition is the advertised definition (Definition), on the current
	// revision only.
	definition string
	// digest is the definition's v1 Digest, whatever its revision
	// (sameContract).
	digest string
}

// sameContract reports whether a call planned with revision rev was
// planned with c's contract under another name: c's revision is a
// declared tool digest (Contract.ToolDigest), rev the v1 Digest of the
// same definition, and c declares no change of meaning or authority. A
// server that moves from v1 digests to tool digests so keeps serving the
// calls its clients planned with the old name. Explicit names never
// match: a new one may mark a change the definition does not show.
func (c *contract) sameContract(rev string) bool {
	return c.digest != "" && rev == c.digest &&
		otelschema.AlgorithmOf(c.revision) == otelschema.AlgorithmTool &&
		c.change != otelschema.ChangeClassSemantic && c.change != otelschema.ChangeClassAuthority
}

// maxEarlier bounds the earlier revisions remembered per tool.
const maxEarlier = 16

type adapterKey struct{ tool, from, to string }

type change struct {
	gen                 uint64
	tool, before, after string
}

// serverSession is what the middleware knows of one client session.
type serverSession struct {
	started time.Time

	mu                  sync.Mutex
	runID               string
	clientName, clientV string
	protocol            string
	notifiedGen         uint64
	// listed is what this server last listed to the session: tool →
	// revision, from the tools/list results it answered.
	listed map[string]string
}

// NewServer instruments srv: it adds receiving and sending middleware to it.
// Declare tools with Server.AddTool (not srv.AddTool) so that each carries
// its revision, and adapters with Server.AddAdapter.
func NewServer(srv *mcp.Server, opts *ServerOptions) *Server {
	if opts == nil {
		opts = &ServerOptions{}
	}
	d := &Server{
		srv:       srv,
		em:        newEmitter(opts.LoggerProvider, opts.Now),
		audit:     !opts.OmitArguments,
		listScope: opts.ListCacheScope,
		tools:     map[string]*contract{},
		earlier:   map[string][]*contract{},
		removed:   map[string]string{},
		adapters:  map[adapterKey]*Adapter{},
		byID:      map[string]*Adapter{},
	}
	if opts.ListTTL > 0 {
		d.listTTLMs = opts.ListTTL.Milliseconds()
	}
	srv.AddReceivingMiddleware(d.receive)
	srv.AddSendingMiddleware(d.send)
	return d
}

// AddTool adds (or replaces) tool t with handler h under contract c. The
// execution contract and the advertised definition change together: a call
// admitted before the change runs the old handler, one admitted after runs
// the new one, and the SDK sends notifications/tools/list_changed only once
// the new list is served. The revision replaced, and c.Earlier, are
// remembered, so that calls still planned with them are recognised. Input
// schemas must compile as JSON Schema 2020-12 without remote references:
// every call is validated against its revision's before its handler runs.
// The SDK's own AddTool rules apply (it panics on an input schema that is
// not an object).
func (d *Server) AddTool(t *mcp.Tool, h mcp.ToolHandler, c Contract) error {
	if t == nil || h == nil {
		return fmt.Errorf("cannot add a nil tool or handler: %w", ErrInvalidTool)
	}
	rev := c.Revision
	if rev == "" && c.ToolDigest != "" {
		var err error
		if rev, err = ToolRevision(c.ToolDigest); err != nil {
			return fmt.Errorf("tool %q: %w: %w", t.Name, err, ErrInvalidTool)
		}
	}
	ct, err := newContract(t, rev)
	if err != nil {
		return err
	}
	ct.change, ct.privilege, ct.handler = c.Change, c.Privilege, h
	var earlier []*contract
	for i, e := range c.Earlier {
		if e == nil || e.Name != t.Name {
			return fmt.Errorf("tool %q: earlier definition %d is not of this tool: %w", t.Name, i, ErrInvalidTool)
		}
		ec, err := newContract(e, "")
		if err != nil {
			return err
		}
		earlier = append(earlier, ec)
	}
	tt := *t
	tt.Meta = maps.Clone(t.Meta)
	if tt.Meta == nil {
		tt.Meta = mcp.Meta{}
	}
	tt.Meta[MetaRevision] = ct.revision
	if ct.definition, err = Definition(&tt); err != nil {
		return err
	}

	d.mu.Lock()
	before := ""
	old := d.tools[t.Name]
	if old != nil {
		before = old.revision
	}
	hist := d.earlier[t.Name]
	for _, e := range earlier {
		hist = remember(hist, e)
	}
	if old != nil && old.revision != ct.revision {
		o := *old
		o.handler = nil
		hist = remember(hist, &o)
	}
	hist = slices.DeleteFunc(hist, func(e *contract) bool { return e.revision == ct.revision })
	d.earlier[t.Name] = hist
	d.tools[t.Name] = ct
	delete(d.removed, t.Name)
	if before != ct.revision {
		d.recordChange(t.Name, before, ct.revision)
	}
	d.srv.AddTool(&tt, d.dispatch(h))
	d.mu.Unlock()
	if before != ct.revision {
		d.emitAdvertised(context.Background(), ct)
	}
	return nil
}

// newContract compiles a definition's input schema; rev empty means the
// definition's advertised revision.
func newContract(t *mcp.Tool, rev string) (*contract, error) {
	if rev == "" {
		var err error
		if rev, err = Advertised(t); err != nil {
			return nil, fmt.Errorf("cannot add tool: %w", err)
		}
	}
	sch, err := argschema.Compile(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q revision %s: the input schema cannot validate calls: %w: %w", t.Name, Short(rev), err, ErrInvalidTool)
	}
	digest, _ := Digest(t) // "" when the definition cannot be digested: no other name is the same contract
	return &contract{name: t.Name, revision: rev, required: requiredFields(t.InputSchema), schema: sch, digest: digest}, nil
}

// remember appends c to the earlier revisions hist, oldest first, once per
// revision and at most maxEarlier.
func remember(hist []*contract, c *contract) []*contract {
	hist = slices.DeleteFunc(slices.Clone(hist), func(e *contract) bool { return e.revision == c.revision })
	hist = append(hist, c)
	if len(hist) > maxEarlier {
		hist = hist[len(hist)-maxEarlier:]
	}
	return hist
}

// RemoveTool removes a tool. Later calls to it fail clearly, as removed,
// naming replacement when it is not empty.
func (d *Server) RemoveTool(name, replacement string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	before := ""
	if old := d.tools[name]; old != nil {
		before = old.revision
	}
	if old := d.tools[name]; old != nil {
		o := *old
		o.handler = nil
		d.earlier[name] = remember(d.earlier[name], &o)
	}
	delete(d.tools, name)
	d.removed[name] = replacement
	d.recordChange(name, before, "")
	d.srv.RemoveTools(name)
}

// Revision returns the revision of tool's execution contract.
func (d *Server) Revision(tool string) (string, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if c := d.tools[tool]; c != nil {
		return c.revision, true
	}
	return "", false
}

// AddAdapter registers (or replaces, by ID) a compatibility adapter and
// emits it as a dev.mcpdrift.adapter event.
func (d *Server) AddAdapter(ctx context.Context, a Adapter) error {
	switch {
	case a.ID == "" || a.Tool == "" || a.From == "" || a.To == "":
		return fmt.Errorf("adapter %q: id, tool, from and to are required: %w", a.ID, ErrInvalidAdapter)
	case a.From == a.To:
		return fmt.Errorf("adapter %q: from and to are both revision %q: %w", a.ID, a.From, ErrInvalidAdapter)
	case a.Class != otelschema.ChangeClassAdditive && a.Class != otelschema.ChangeClassBoundedMigration:
		return fmt.Errorf("adapter %q: a %q change cannot be adapted, only additive or bounded_migration: %w",
			a.ID, a.Class, ErrInvalidAdapter)
	case a.Class == otelschema.ChangeClassBoundedMigration && a.Normalize == nil:
		return fmt.Errorf("adapter %q: a bounded migration needs Normalize: %w", a.ID, ErrInvalidAdapter)
	}
	ad := a
	d.mu.Lock()
	if old := d.byID[a.ID]; old != nil {
		delete(d.adapters, adapterKey{old.Tool, old.From, old.To})
	}
	d.byID[a.ID] = &ad
	d.adapters[adapterKey{a.Tool, a.From, a.To}] = &ad
	d.mu.Unlock()
	d.emitAdapter(ctx, &ad, time.Time{})
	return nil
}

// RemoveAdapter retires an adapter: calls it served are rejected from now on.
// It emits the adapter once more, its window ending now.
func (d *Server) RemoveAdapter(ctx context.Context, id string) {
	d.mu.Lock()
	a := d.byID[id]
	if a != nil {
		delete(d.byID, id)
		delete(d.adapters, adapterKey{a.Tool, a.From, a.To})
	}
	d.mu.Unlock()
	if a != nil {
		d.emitAdapter(ctx, a, d.em.now())
	}
}

// EmitAdvertised emits every tool of the advertised list as a
// dev.mcpdrift.advertised event. AddTool emits a tool when its revision
// changes; Advertise calls EmitAdvertised periodically, as a server should:
// the registry's last advertised time of a revision, and so the overlap
// of two revisions during a rolling deploy, is only as fresh as the last
// advertisement of each instance.
func (d *Server) EmitAdvertised(ctx context.Context) {
	d.mu.RLock()
	all := slices.Collect(maps.Values(d.tools))
	d.mu.RUnlock()
	slices.SortFunc(all, func(a, b *contract) int { return strings.Compare(a.name, b.name) })
	for _, c := range all {
		d.emitAdvertised(ctx, c)
	}
}

func (d *Server) emitAdvertised(ctx context.Context, c *contract) {
	e := event{name: otelschema.EventAdvertised, tool: c.name, revServer: c.revision, definition: c.definition}
	if d.listTTLMs > 0 {
		e.listTTLMs, e.listScope = d.listTTLMs, d.listScope
	}
	d.em.emit(ctx, &e, false)
}

// DefaultAdvertiseEvery is the period Advertise is meant to run at: the
// registry counts a revision as advertised now when its last
// advertisement is within two periods of its service's latest one
// (internal/registry.DefaultFreshness).
const DefaultAdvertiseEvery = 5 * time.Minute

// Advertise emits the advertised list and the adapter registry
// (EmitAdvertised, EmitAdapters) now and then every period (at most
// DefaultAdvertiseEvery when every is not positive), until ctx is done.
// Run it on its own goroutine for the server's lifetime:
//
//	go drift.Advertise(ctx, 0)
//
// so that the registry knows what each instance serves however long ago
// the instance started, and reports over any window know every adapter
// still declared.
func (d *Server) Advertise(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultAdvertiseEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		d.EmitAdvertised(ctx)
		d.EmitAdapters(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// EmitAdapters emits the whole adapter registry as dev.mcpdrift.adapter
// events, for example periodically, so that reports over any window know
// every adapter still declared.
func (d *Server) EmitAdapters(ctx context.Context) {
	d.mu.RLock()
	all := slices.Collect(maps.Values(d.byID))
	d.mu.RUnlock()
	slices.SortFunc(all, func(a, b *Adapter) int { return strings.Compare(a.ID, b.ID) })
	for _, a := range all {
		d.emitAdapter(ctx, a, time.Time{})
	}
}

func (d *Server) emitAdapter(ctx context.Context, a *Adapter, end time.Time) {
	if end.IsZero() {
		end = a.WindowEnd
	}
	e := event{name: otelschema.EventAdapter, tool: a.Tool, adapterID: a.ID, change: a.Class,
		adapterFrom: a.From, adapterTo: a.To, windowEnd: end}
	d.mu.RLock()
	if c := d.tools[a.Tool]; c != nil {
		e.privilege = c.privilege
	}
	d.mu.RUnlock()
	d.em.emit(ctx, &e, false)
}

// recordChange remembers a contract change; d.mu is held.
func (d *Server) recordChange(tool, before, after string) {
	d.changesMu.Lock()
	defer d.changesMu.Unlock()
	d.gen++
	if len(d.changes) == maxRememberedChanges {
		d.changes = slices.Delete(d.changes, 0, 1)
	}
	d.changes = append(d.changes, change{gen: d.gen, tool: tool, before: before, after: after})
}

// dispatch returns the handler given to the SDK: it runs the handler of
// the contract admitted by the middleware, so a call runs under one
// revision even when the tool changes between admission and dispatch.
func (d *Server) dispatch(h mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if st := stateFrom(ctx); st != nil && st.contract != nil && st.contract.name == req.Params.Name {
			return st.contract.handler(ctx, req)
		}
		return h(ctx, req)
	}
}

// session returns the state of ss, updated from the request's _meta.
func (d *Server) session(ss *mcp.ServerSession, meta map[string]any) *serverSession {
	if ss == nil {
		return &serverSession{started: d.em.now()}
	}
	st := d.sessions.get(ss, func() *serverSession {
		d.changesMu.Lock()
		gen := d.gen
		d.changesMu.Unlock()
		return &serverSession{started: d.em.now(), notifiedGen: gen}
	})
	run := metaString(meta, MetaRunID)
	st.mu.Lock()
	if run != "" {
		st.runID = run
	}
	if st.clientName == "" {
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			st.clientName, st.clientV, st.protocol = ip.ClientInfo.Name, ip.ClientInfo.Version, ip.ProtocolVersion
		} else if ci, ok := meta[mcp.MetaKeyClientInfo].(map[string]any); ok {
			st.clientName, _ = ci["name"].(string)
			st.clientV, _ = ci["version"].(string)
		}
	}
	if p := metaString(meta, mcp.MetaKeyProtocolVersion); p != "" {
		st.protocol = p
	}
	st.mu.Unlock()
	return st
}

// identity fills the session and client fields of e.
func (st *serverSession) identity(e *event, ss *mcp.ServerSession, now time.Time) {
	st.mu.Lock()
	e.runID, e.clientName, e.clientVersion, e.protocol = st.runID, st.clientName, st.clientV, st.protocol
	st.mu.Unlock()
	if ss != nil {
		e.sessionID = ss.ID()
	}
	e.sessionAge = now.Sub(st.started)
}

func (d *Server) receive(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case methodCallTool:
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				return d.call(ctx, next, r)
			}
		case methodListTools:
			var st *serverSession
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if ss != nil {
				st = d.session(ss, metaOf(req))
			}
			d.mu.RLock()
			defer d.mu.RUnlock()
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && d.listTTLMs > 0 {
				lr.TTLMs = int(d.listTTLMs)
				if d.listScope != "" {
					lr.CacheScope = d.listScope
				}
			}
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && st != nil {
				cursor := ""
				if p, ok := req.GetParams().(*mcp.ListToolsParams); ok && p != nil {
					cursor = p.Cursor
				}
				st.listedPage(lr, cursor == "")
			}
			return res, err
		case methodInitialize, methodDiscover:
		default:
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				d.session(ss, metaOf(req))
			}
		}
		return next(ctx, method, req)
	}
}

// metaOf returns the _meta of a request's params; nil when the request has
// no params (the SDK passes a typed nil, such as a nil *ListToolsParams).
func metaOf(req mcp.Request) map[string]any {
	p := req.GetParams()
	if p == nil || isNil(p) {
		return nil
	}
	return p.GetMeta()
}

// isNil reports whether p is a typed nil pointer.
func isNil(p mcp.Params) bool {
	v := reflect.ValueOf(p)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// callState is one admitted call: its contract and what its handler
// reported doing.
type callState struct {
	contract *contract
	started  atomic.Bool
	requests atomic.Int64
	target   atomic.Pointer[string]
}

type callKey struct{}

func stateFrom(ctx context.Context) *callState {
	st, _ := ctx.Value(callKey{}).(*callState)
	return st
}

// SideEffectStarted records, from a tool handler, that the call's side
// effect has started: a rejection or failure from now on is reported with
// dev.mcpdrift.side_effect.started = true. Outside an instrumented call it
// does nothing.
func SideEffectStarted(ctx context.Context) {
	if st := stateFrom(ctx); st != nil {
		st.started.Store(true)
	}
}

// ExternalRequest records, from a tool handler, a request to the external
// system target (dev.mcpdrift.external.requests, dev.mcpdrift.external.target);
// it also marks the side effect started. Call it before sending.
func ExternalRequest(ctx context.Context, target string) {
	if st := stateFrom(ctx); st != nil {
		st.started.Store(true)
		st.requests.Add(1)
		st.target.Store(&target)
	}
}

// reject answers a call planned against a revision no adapter serves, with
// the facts the seed asks of a repairable error: what changed, whether a
// side effect started (never: the handler did not run), whether refreshing
// helps, and the current revision.
func (d *Server) reject(e *event, c *contract, args json.RawMessage) *mcp.CallToolResult {
	e.outcome, e.errorCode, e.requiredAction = otelschema.OutcomeRejectedStale, CodeStaleToolSchema, ActionRefreshTools
	why := "its input contract changed"
	if c.change == otelschema.ChangeClassSemantic {
		e.outcome, e.errorCode = otelschema.OutcomeRejectedIncompatible, CodeIncompatibleToolSchema
		why = "the meaning of its input changed"
	} else if c.change == otelschema.ChangeClassAuthority {
		why = "what it is authorised to do changed"
	}
	missing := c.missing(args)
	var b strings.Builder
	fmt.Fprintf(&b, "%s rejected this request because %s (planned with revision %s, current revision %s). Refresh tools before retrying.",
		c.name, why, Short(e.revClient), Short(c.revision))
	if len(c.required) > 0 {
		fmt.Fprintf(&b, " The current schema requires %s.", joinAnd(c.required))
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, " Missing: %s.", joinAnd(missing))
	}
	b.WriteString(" No side effect was started.")
	sc := map[string]any{
		"error_code":          e.errorCode,
		"tool":                c.name,
		"required_action":     ActionRefreshTools,
		"side_effect_started": false,
		"current_revision":    c.revision,
		"client_revision":     e.revClient,
	}
	if e.revSource != otelschema.RevisionSourceUnspecified {
		sc["client_revision_source"] = e.revSource.String()
	}
	if c.change != otelschema.ChangeClassUnspecified {
		sc["change_class"] = c.change.String()
	}
	if len(missing) > 0 {
		sc["missing_fields"] = missing
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}, StructuredContent: sc}
}

func removedResult(tool, replacement string) *mcp.CallToolResult {
	text := tool + " was removed and no longer exists; nothing was done."
	sc := map[string]any{"error_code": CodeToolRemoved, "tool": tool, "side_effect_started": false}
	if replacement != "" {
		text += " Use " + replacement + " instead."
		sc["replacement"] = replacement
		sc["required_action"] = ActionRefreshTools
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: sc}
}

func invalidResult(tool string, a *Adapter, err error) *mcp.CallToolResult {
	text := fmt.Sprintf("%s rejected arguments of revision %s: %v. No side effect was started.", tool, Short(a.From), err)
	sc := map[string]any{"error_code": CodeInvalidArguments, "tool": tool, "side_effect_started": false, "current_revision": a.To}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: sc}
}

// resultCode returns the error_code of a result's structured content.
func resultCode(r *mcp.CallToolResult) string {
	if m, ok := r.StructuredContent.(map[string]any); ok {
		s, _ := m["error_code"].(string)
		return s
	}
	return ""
}

func (d *Server) send(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != methodToolListChanged {
			return next(ctx, method, req)
		}
		// The event is emitted as the notification is handed to the
		// transport, not after: the client may act on it, and even finish
		// its work, before next returns (the SDK's list is already updated
		// when it sends, so the new list is ready by then).
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			d.notified(ctx, ss, d.em.now())
		}
		return next(ctx, method, req)
	}
}

// notified emits the list_changed events of one notification sent to ss:
// one per tool changed since the session's previous notification, or one
// without a tool when those changes are unknown.
func (d *Server) notified(ctx context.Context, ss *mcp.ServerSession, now time.Time) {
	st := d.session(ss, nil)
	d.changesMu.Lock()
	st.mu.Lock()
	var changed []change
	for _, c := range d.changes {
		if c.gen > st.notifiedGen {
			changed = append(changed, c)
		}
	}
	st.notifiedGen = d.gen
	st.mu.Unlock()
	d.changesMu.Unlock()

	base := event{name: otelschema.EventListChanged, time: now, method: methodToolListChanged}
	st.identity(&base, ss, now)
	base.sessionAge = 0
	if len(changed) == 0 {
		d.em.emit(ctx, &base, false)
		return
	}
	for _, c := range changed {
		e := base
		e.tool, e.revBefore, e.revAfter, e.revServer = c.tool, c.before, c.after, c.after
		d.em.emit(ctx, &e, false)
	}
}

// requiredFields returns the "required" list of an object input schema.
func requiredFields(schema any) []string {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var s struct {
		Required []string `json:"required"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return s.Required
}

// missing returns the required fields absent from args.
func (c *contract) missing(args json.RawMessage) []string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(args, &m)
	var out []string
	for _, f := range c.required {
		if _, ok := m[f]; !ok {
			out = append(out, f)
		}
	}
	return out
}

// joinAnd joins words as "a, b and c".
func joinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
