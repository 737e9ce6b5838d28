package simulate

import (
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// Violation is a safety violation the simulator injected on purpose, at
// Config.ViolationRate, so that reports can be checked against the Ledger.
type Violation uint8

// Violations, as the Safety violations report lists them.
const (
	ViolationNone Violation = iota
	// ViolationSideEffectOnRejection is a rejected call (rejected_stale or
	// rejected_incompatible) whose side effect had started.
	ViolationSideEffectOnRejection
	// ViolationMixedRevision is a call validated under one revision and
	// executed under another (validated.revision != revision.server).
	ViolationMixedRevision
	// ViolationRemovedSuccess is a call to a removed tool that returned
	// success: outcome current with change class removal.
	ViolationRemovedSuccess
	// ViolationAutoRetryAcrossChange is an automatic refresh-and-retry
	// across a semantic or authority change: a repair event with action
	// refresh_retry, automatic, of class semantic or authority.
	ViolationAutoRetryAcrossChange
)

var violationNames = [...]string{"", "side_effect_on_rejection", "mixed_revision", "removed_success", "auto_retry_across_change"}

// String returns the violation's name as the Ledger counts it.
func (v Violation) String() string {
	if int(v) < len(violationNames) {
		return violationNames[v]
	}
	return ""
}

// Error codes and required actions the simulated servers and clients use.
const (
	ErrorCodeStale        = "STALE_TOOL_SCHEMA"
	ErrorCodeIncompatible = "INCOMPATIBLE_TOOL_SCHEMA"
	ErrorCodeRemoved      = "TOOL_REMOVED"
	ErrorCodeInvalid      = "INVALID_ARGUMENTS"
	ErrorCodeTimeout      = "UPSTREAM_TIMEOUT"
	ErrorCodeContract     = "OUTPUT_CONTRACT_MISMATCH"
	ErrorCodeRefresh      = "REFRESH_TIMEOUT"
	ActionRefreshTools    = "refresh_tools"
)

// MCP methods.
const (
	methodCall        = "tools/call"
	methodList        = "tools/list"
	methodListChanged = "notifications/tools/list_changed"
)

// Record is one generated event with what the simulator knows about it.
type Record struct {
	// Event is the drift event, resource fields included. Its ID is a
	// deterministic identity (the ingester computes its own from content).
	Event otelschema.Event
	// Client is true when a client service emitted the event, false when a
	// server did.
	Client bool
	// Violation is the safety violation the event embodies, if any.
	Violation Violation

	sess *session // the caller, nil for registry events
}

// itemKind orders items at the same simulated time: deploys first.
type itemKind uint8

const (
	itemDeploy itemKind = iota
	itemRefresh
	itemCall
)

// item is a scheduled step of the simulation.
type item struct {
	at   int64
	seq  uint64
	kind itemKind
	s    *session
	c    *change
}

func (a *item) less(b *item) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}

// picker draws tools by popularity among those a privilege allows.
type picker struct {
	cum   []float64
	tools []*tool
}

// Generator is the pure simulation: it generates drift events without any
// I/O, deterministically for a Config. Use NewGenerator then Next, or All.
// A Generator is not safe for concurrent use.
type Generator struct {
	cfg        Config
	rng        *rand.Rand
	start, end int64

	servers  []*server
	tools    []*tool
	clients  []*client
	sessions []*session
	changes  []*change
	picks    [otelschema.PrivilegeCredentialed + 1]picker

	heap []item
	seq  uint64

	pending []Record
	head    int
	emitted int64
	done    bool
	ledger  Ledger
}

// NewGenerator validates cfg and builds the simulated fleet. A zero
// cfg.Start is resolved to now minus cfg.Span.
func NewGenerator(cfg Config) (*Generator, error) {
	cfg = cfg.resolved(time.Now())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := &Generator{
		cfg:   cfg,
		rng:   rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		start: cfg.Start.UnixNano(),
		end:   cfg.Start.Add(cfg.Span).UnixNano(),
	}
	g.ledger = newLedger(cfg)

	g.servers = make([]*server, cfg.Servers)
	for i := range g.servers {
		name := fmt.Sprintf("mcp-server-%02d", i)
		if i < len(serverNames) {
			name = serverNames[i]
		}
		s := &server{idx: i, name: name, minor: 1 + g.rng.IntN(8)}
		s.deploy()
		g.servers[i] = s
	}
	g.tools = buildTools(g.rng, cfg.Tools, g.servers)
	g.changes = planChanges(g.rng, cfg, g.tools, g.start, g.end-g.start)
	for _, c := range g.changes {
		if !c.inSpan {
			g.apply(c)
		}
	}
	for _, t := range g.tools {
		t.cacheArgs()
	}
	g.clients = buildClients(g.rng, cfg.Clients)
	g.sessions = buildSessions(g.rng, cfg.sessions(), g.clients, g.start, g.end)
	for p := read; p <= credentialed; p++ {
		pk := &g.picks[p]
		total := 0.0
		for _, t := range g.tools {
			if t.privilege <= p {
				total += t.weight
				pk.cum = append(pk.cum, total)
				pk.tools = append(pk.tools, t)
			}
		}
	}
	g.plan()

	// Every server declares its adapter registry at start.
	for _, srv := range g.servers {
		g.declareAdapters(srv, g.start)
	}
	return g, nil
}

// plan sets the sessions' call rates so that the run's planned event count
// is spread over the span, and schedules the deploys and first calls.
func (g *Generator) plan() {
	planned := float64(g.cfg.plannedEvents())
	var notifications, weighted float64
	for _, c := range g.changes {
		if !c.inSpan {
			continue
		}
		notifications += float64(len(c.server.changes) + 1)
		for _, s := range g.sessions {
			if s.start <= c.at && c.at < s.end && !s.client.stateless {
				notifications++
				if s.client.listChanged {
					notifications += 2
				}
			}
		}
	}
	for _, s := range g.sessions {
		overlap := float64(min(s.end, g.end)-max(s.start, g.start)) / float64(time.Second)
		weighted += s.weight * max(overlap, 0)
	}
	// Follow-ups (repairs, retries, contract errors) add a few percent to
	// the calls; plan 10% more so that an Events bound is met before the
	// span ends.
	calls := max(planned*0.3, planned-notifications) * 1.1 / 1.04
	for _, s := range g.sessions {
		s.rate = s.weight * calls / max(weighted, 1)
	}
	for _, c := range g.changes {
		if c.inSpan {
			g.push(item{at: c.at, kind: itemDeploy, c: c})
		}
	}
	for _, s := range g.sessions {
		g.scheduleCall(s, max(s.start, g.start))
	}
}

// Next fills r with the next event and reports whether there was one. It
// returns false once the Events bound is reached or the span is over.
func (g *Generator) Next(r *Record) bool {
	for g.head == len(g.pending) {
		if g.done || g.limitReached() {
			return false
		}
		g.pending, g.head = g.pending[:0], 0
		if !g.step() {
			g.done = true
			return false
		}
	}
	if g.limitReached() {
		return false
	}
	*r = g.pending[g.head]
	g.pending[g.head] = Record{}
	g.head++
	g.emitted++
	r.Event.ID = mix64(g.cfg.Seed ^ uint64(g.emitted)*0x9e3779b97f4a7c15)
	g.ledger.add(r, 1)
	if s := r.sess; s != nil {
		if !s.seen {
			s.seen = true
			g.ledger.Sessions++
			if s.client.stateless {
				g.ledger.StatelessRuns++
			}
		}
		if !s.client.seen {
			s.client.seen = true
			g.ledger.Clients++
		}
	}
	return true
}

func (g *Generator) limitReached() bool {
	return g.cfg.Events > 0 && g.emitted >= g.cfg.Events
}

// All returns an iterator over the remaining events. The yielded Record is
// reused: copy what must outlive the iteration step.
func (g *Generator) All() iter.Seq[*Record] {
	return func(yield func(*Record) bool) {
		var r Record
		for g.Next(&r) {
			if !yield(&r) {
				return
			}
		}
	}
}

// Ledger returns the exact counts of the events generated so far.
func (g *Generator) Ledger() Ledger { return g.ledger.clone() }

// Config returns the configuration with Start resolved.
func (g *Generator) Config() Config { return g.cfg }

// Generate runs the whole simulation for cfg — bounded by cfg.Events or the
// span — and calls emit with each record in order; the record is reused
// after emit returns. It stops at the first error emit returns, which it
// returns wrapped. The Ledger counts the records emit accepted.
func Generate(cfg Config, emit func(*Record) error) (Ledger, error) {
	g, err := NewGenerator(cfg)
	if err != nil {
		return Ledger{}, err
	}
	var r Record
	for g.Next(&r) {
		if err := emit(&r); err != nil {
			l := g.Ledger()
			l.add(&r, -1)
			return l, fmt.Errorf("cannot emit event %d: %w", l.Events+1, err)
		}
	}
	return g.Ledger(), nil
}

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Scheduling.

func (g *Generator) push(it item) {
	g.seq++
	it.seq = g.seq
	g.heap = append(g.heap, it)
	h := g.heap
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].less(&h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (g *Generator) pop() item {
	h := g.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = item{}
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h[r].less(&h[l]) {
			m = r
		}
		if !h[m].less(&h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	g.heap = h
	return top
}

// step runs the next scheduled item; false when the simulation is over.
func (g *Generator) step() bool {
	if len(g.heap) == 0 {
		return false
	}
	it := g.pop()
	if it.at > g.end {
		return false
	}
	switch it.kind {
	case itemDeploy:
		g.deploy(it.c, it.at)
	case itemRefresh:
		g.notifiedRefresh(it.s, it.c, it.at)
	case itemCall:
		g.call(it.s, it.at)
	}
	return true
}

func (g *Generator) scheduleCall(s *session, from int64) {
	if s.rate <= 0 {
		return
	}
	at := from + int64(g.rng.ExpFloat64()/s.rate*float64(time.Second))
	if at < s.end && at <= g.end {
		g.push(item{at: at, kind: itemCall, s: s})
	}
}

// mixedRevisionWindow is how long after a deploy a call may still be
// validated by a worker running the previous revision.
const mixedRevisionWindow = time.Hour

// Random helpers.

func (g *Generator) chance(p float64) bool { return p > 0 && g.rng.Float64() < p }

// between returns a duration in [lo, hi) in nanoseconds.
func (g *Generator) between(lo, hi time.Duration) int64 {
	return int64(lo) + g.rng.Int64N(int64(hi-lo))
}

// logNormal returns a duration around median, capped.
func (g *Generator) logNormal(median time.Duration, sigma float64, limit time.Duration) int64 {
	return min(int64(float64(median)*math.Exp(g.rng.NormFloat64()*sigma)), int64(limit))
}

// Records.

func (g *Generator) serverRecord(srv *server, name otelschema.EventName, t int64) Record {
	var r Record
	e := &r.Event
	e.Name, e.Time = name, t
	e.Service, e.ServiceVersion, e.ServiceInstance = srv.name, srv.build, srv.instance
	e.ServiceNamespace, e.Environment = "mcp", g.cfg.Environment
	return r
}

func (g *Generator) clientRecord(s *session, name otelschema.EventName, t int64) Record {
	r := Record{Client: true}
	e := &r.Event
	e.Name, e.Time = name, t
	c := s.client
	e.Service, e.ServiceVersion, e.ServiceInstance = c.name, c.version, c.instance
	e.ServiceNamespace, e.Environment = "agents", g.cfg.Environment
	g.withSession(e, s, t)
	r.sess = s
	return r
}

// withSession sets the caller's identity: session (or run), protocol and
// client info, which protocol 2026-07-28 carries in _meta.
func (g *Generator) withSession(e *otelschema.Event, s *session, t int64) {
	e.SessionID, e.RunID = s.id, s.run
	e.ProtocolVersion = s.client.protocol
	e.ClientName, e.ClientVersion = s.client.name, s.client.version
	e.SessionAgeS = s.age(t)
}

func (g *Generator) emit(r Record) { g.pending = append(g.pending, r) }

func (g *Generator) nextReq(s *session) string {
	s.nextReq++
	return strconv.FormatInt(s.nextReq, 10)
}

// Deploys and notifications.

// apply makes c the server's running contract.
func (g *Generator) apply(c *change) {
	srv := c.server
	srv.deploy()
	c.build = srv.build
	c.tool.cur = c.to
	srv.changes = append(srv.changes, c)
}

// declareAdapters emits the server's adapter registry: every adapter still
// serving calls at t.
func (g *Generator) declareAdapters(srv *server, t int64) {
	for _, c := range srv.changes {
		if !c.adapterActive(t) {
			continue
		}
		r := g.serverRecord(srv, otelschema.EventAdapter, t)
		e := &r.Event
		e.Tool, e.AdapterID, e.ChangeClass = c.tool.name, c.adapterID, c.kind.class()
		e.AdapterRevisionFrom, e.AdapterRevisionTo = c.tool.revs[c.from].id, c.tool.revs[c.to].id
		e.Privilege = c.tool.privilege
		if c.windowEnd != 0 {
			e.AdapterWindowEnd = c.windowEnd / int64(time.Second)
		}
		g.emit(r)
	}
}

// deploy ships c at t: the server's build changes, it declares its
// adapters, and it notifies every connected session; clients that honour
// the notification refresh after a lag, the others keep planning on their
// snapshot.
func (g *Generator) deploy(c *change, t int64) {
	g.apply(c)
	srv := c.server
	g.declareAdapters(srv, t)
	newRev := c.tool.revs[c.to].id
	for _, s := range g.sessions {
		if s.start > t || t >= s.end || s.client.stateless {
			continue
		}
		sentAt := t + g.between(time.Millisecond, 50*time.Millisecond)
		r := g.serverRecord(srv, otelschema.EventListChanged, sentAt)
		e := &r.Event
		g.withSession(e, s, sentAt)
		r.sess = s
		e.Method, e.Tool, e.RevisionServer = methodListChanged, c.tool.name, newRev
		g.emit(r)
		if !s.client.listChanged {
			continue
		}
		recvAt := sentAt + g.logNormal(150*time.Millisecond, 1.2, 30*time.Second)
		r = g.clientRecord(s, otelschema.EventListChanged, recvAt)
		e = &r.Event
		e.Method, e.Tool, e.RevisionServer = methodListChanged, c.tool.name, newRev
		e.NotificationLagMs = max(1, (recvAt-t)/int64(time.Millisecond))
		g.emit(r)
		refreshAt := recvAt + g.between(20*time.Millisecond, 500*time.Millisecond)
		if s.client.lazy {
			refreshAt = recvAt + g.logNormal(20*time.Minute, 1.0, 3*time.Hour)
		}
		g.push(item{at: refreshAt, kind: itemRefresh, s: s, c: c})
	}
}

// notifiedRefresh is a client re-listing tools after a notification.
func (g *Generator) notifiedRefresh(s *session, c *change, t int64) {
	if t >= s.end {
		return
	}
	lag := max(1, (t-c.at)/int64(time.Millisecond))
	g.refresh(s, c.tool, t, lag)
}

// refresh emits a tools/list refresh of s at t reported against tool;
// on success the session's snapshot becomes current. It reports success.
func (g *Generator) refresh(s *session, tl *tool, t, lagMs int64) bool {
	r := g.clientRecord(s, otelschema.EventRefresh, t)
	e := &r.Event
	e.Method, e.Tool, e.RequestID = methodList, tl.name, g.nextReq(s)
	e.RevisionBefore = tl.revs[tl.revAt(s.snap)].id
	e.NotificationLagMs = lagMs
	ok := !g.chance(0.03)
	if ok {
		e.RefreshResult = otelschema.RefreshResultOK
		if cur := tl.revs[tl.cur]; !cur.removed {
			e.RevisionAfter = cur.id
		}
		s.snap = t
	} else {
		e.RefreshResult = otelschema.RefreshResultFailed
		e.ErrorCode = ErrorCodeRefresh
		e.RevisionAfter = e.RevisionBefore
	}
	g.emit(r)
	return ok
}

// Calls.

// pickTool draws a tool the session may call and still sees in its
// snapshot; nil when the draws hit only tools it saw removed.
func (g *Generator) pickTool(s *session) *tool {
	p := &g.picks[s.cap]
	total := p.cum[len(p.cum)-1]
	for range 4 {
		i, _ := slices.BinarySearch(p.cum, g.rng.Float64()*total)
		t := p.tools[min(i, len(p.tools)-1)]
		if !t.revs[t.revAt(s.snap)].removed && !slices.Contains(s.avoid, t) {
			return t
		}
	}
	return nil
}

// call is one tools/call planned by s at t, with what follows it.
func (g *Generator) call(s *session, t int64) {
	g.scheduleCall(s, t)
	tl := g.pickTool(s)
	if tl == nil {
		return
	}
	g.callEpisode(s, tl, t)
}

// callRecord returns the server's call event with the caller, the
// revisions and the audit fields set, as a current call.
func (g *Generator) callRecord(s *session, tl *tool, t int64, req string, snapIdx int) Record {
	r := g.serverRecord(tl.server, otelschema.EventCall, t)
	e := &r.Event
	g.withSession(e, s, t)
	r.sess = s
	e.Method, e.Tool, e.RequestID = methodCall, tl.name, req
	e.RevisionClient = tl.revs[snapIdx].id
	// The simulated agents plan as mcpgo.Client does: they declare it.
	e.RevisionClientSource = otelschema.RevisionSourceDeclared
	e.RevisionServer = tl.revs[tl.cur].id
	e.Outcome = otelschema.OutcomeCurrent
	e.Privilege = tl.privilege
	e.Approval = otelschema.ApprovalNone
	if tl.privilege >= write {
		switch {
		case tl.privilege >= destructive:
			e.Approval = s.approval
		case s.approval == otelschema.ApprovalSession:
			e.Approval = otelschema.ApprovalSession
		}
		e.IdempotencyKey = "idem-" + s.run[4:14] + "-" + req
	}
	e.ExternalTarget = tl.target
	e.ExternalRequests = 1
	if g.cfg.AuditArgs {
		e.ArgsRaw, e.ArgsNormalized = tl.argsRaw, tl.argsRaw
		if snapIdx >= tl.newShape {
			e.ArgsRaw, e.ArgsNormalized = tl.argsNormalized, tl.argsNormalized
		}
	}
	return r
}

// execute applies the everyday failures to a call that runs: a few
// invalid arguments, a few upstream timeouts.
func (g *Generator) execute(r *Record, tl *tool) {
	e := &r.Event
	switch x := g.rng.Float64(); {
	case x < 0.006:
		e.Outcome, e.ErrorCode = otelschema.OutcomeRejectedInvalid, ErrorCodeInvalid
		e.ExternalRequests, e.ExternalTarget = 0, ""
	case x < 0.018:
		e.Outcome, e.ErrorCode = otelschema.OutcomeFailed, ErrorCodeTimeout
		e.SideEffectStarted = tl.privilege >= write && g.chance(0.3)
	default:
		if tl.cur > 0 && e.Time-tl.revs[tl.cur].at < int64(mixedRevisionWindow) && g.chance(g.cfg.ViolationRate) {
			// Validated under the previous revision, executed under the
			// new one: the worker reloaded its contract mid-call.
			e.RevisionValidated = tl.revs[tl.cur-1].id
			r.Violation = ViolationMixedRevision
		}
	}
}

// reject marks a call as rejected before any effect.
func reject(e *otelschema.Event, outcome otelschema.Outcome, code string) {
	e.Outcome, e.ErrorCode, e.RequiredAction = outcome, code, ActionRefreshTools
	e.ExternalRequests, e.ExternalTarget = 0, ""
	e.SideEffectStarted = false
	e.ArgsNormalized = ""
}

func (g *Generator) callEpisode(s *session, tl *tool, t int64) {
	snapIdx := tl.revAt(s.snap)
	req := g.nextReq(s)
	r := g.callRecord(s, tl, t, req, snapIdx)
	e := &r.Event
	if snapIdx == tl.cur {
		g.execute(&r, tl)
		g.emit(r)
		return
	}
	ch := tl.revs[tl.cur].change
	e.ChangeClass = ch.kind.class()
	switch ch.kind {
	case changeOptionalInput, changeRequiredDefault:
		if ch.adapterActive(t) {
			e.Outcome, e.AdapterID = otelschema.OutcomeNormalized, ch.adapterID
			if g.cfg.AuditArgs {
				e.ArgsNormalized = tl.argsNormalized
			}
			g.execute(&r, tl)
			g.emit(r)
			return
		}
		if ch.kind == changeOptionalInput {
			// Accepted as it is: omitting the optional field keeps the
			// old behaviour.
			g.execute(&r, tl)
			g.emit(r)
			return
		}
		// The migration window is over: the old shape is stale.
		reject(e, otelschema.OutcomeRejectedStale, ErrorCodeStale)
	case changeApprovalScope:
		reject(e, otelschema.OutcomeRejectedStale, ErrorCodeStale)
	case changeMeaning:
		reject(e, otelschema.OutcomeRejectedIncompatible, ErrorCodeIncompatible)
	case changeToolRemoved:
		if g.chance(g.cfg.ViolationRate) {
			// A tool kept under its old name that does nothing.
			e.ExternalRequests, e.ExternalTarget = 0, ""
			r.Violation = ViolationRemovedSuccess
			g.emit(r)
			return
		}
		reject(e, otelschema.OutcomeRemoved, ErrorCodeRemoved)
	case changeOutputAdded:
		g.execute(&r, tl)
		g.emit(r)
		return
	case changeOutputIDRemoved:
		// The input contract did not change: the call runs; the old
		// client's next, dependent call is what breaks.
		e.ChangeClass = otelschema.ChangeClassUnspecified
		g.execute(&r, tl)
		g.emit(r)
		if e.Outcome == otelschema.OutcomeCurrent && g.chance(0.6) {
			g.contractError(s, tl, ch, t, req, snapIdx)
		}
		return
	}
	if (e.Outcome == otelschema.OutcomeRejectedStale || e.Outcome == otelschema.OutcomeRejectedIncompatible) &&
		g.chance(g.cfg.ViolationRate) {
		// The handler started the external request before it checked the
		// contract.
		e.SideEffectStarted, e.ExternalRequests, e.ExternalTarget = true, 1, tl.target
		r.Violation = ViolationSideEffectOnRejection
	}
	g.emit(r)
	g.repair(s, tl, &r.Event, t)
}

// contractError is the old client stopping its dependent call because the
// identifier it extracts is gone, then (unless it just gives up) refreshing.
func (g *Generator) contractError(s *session, tl *tool, ch *change, t int64, req string, snapIdx int) {
	at := t + g.between(200*time.Millisecond, 5*time.Second)
	r := g.clientRecord(s, otelschema.EventContractError, at)
	e := &r.Event
	field, _ := ch.kind.field()
	e.Tool, e.RequestID, e.ContractField = tl.name, req, field
	e.RevisionClient, e.RevisionServer = tl.revs[snapIdx].id, tl.revs[tl.cur].id
	e.ErrorCode, e.ChangeClass = ErrorCodeContract, ch.kind.class()
	g.emit(r)
	if s.client.policy != policyNaive {
		g.refresh(s, tl, at+g.between(50*time.Millisecond, 2*time.Second), 0)
	}
}

// repair is what the client does after the rejected call orig: refresh and
// retry automatically only when the seed's four conditions hold — the
// server identified a stale schema, the new revision has a deterministic
// default, the authority boundary is the same, no external effect started
// — and otherwise a new decision: a model repair of a syntactic change, a
// person, or giving up.
func (g *Generator) repair(s *session, tl *tool, orig *otelschema.Event, t int64) {
	class := orig.ChangeClass
	autoOK := orig.Outcome == otelschema.OutcomeRejectedStale && orig.ErrorCode == ErrorCodeStale &&
		class == otelschema.ChangeClassBoundedMigration && !orig.SideEffectStarted
	policy := s.client.policy
	action := otelschema.RepairActionHumanApproval
	var violation Violation
	switch {
	case class == otelschema.ChangeClassRemoval:
		action = otelschema.RepairActionModelRepair
		if policy == policyNaive {
			action = otelschema.RepairActionAbandon
		}
	case autoOK:
		action = [...]otelschema.RepairAction{
			policyAuto:  otelschema.RepairActionRefreshRetry,
			policyModel: otelschema.RepairActionModelRepair,
			policyHuman: otelschema.RepairActionHumanApproval,
			policyNaive: otelschema.RepairActionAbandon,
		}[policy]
	case policy == policyAuto && !orig.SideEffectStarted &&
		(class == otelschema.ChangeClassSemantic || class == otelschema.ChangeClassAuthority) &&
		g.chance(g.cfg.ViolationRate):
		action, violation = otelschema.RepairActionRefreshRetry, ViolationAutoRetryAcrossChange
	case policy == policyNaive:
		action = otelschema.RepairActionAbandon
	}

	oldRev := orig.RevisionClient
	now := t
	refreshed := true
	if action != otelschema.RepairActionAbandon {
		now += g.between(30*time.Millisecond, 800*time.Millisecond)
		refreshed = g.refresh(s, tl, now, 0)
	}
	approval := otelschema.ApprovalNone
	retry := false
	switch action {
	case otelschema.RepairActionRefreshRetry:
		now += g.between(50*time.Millisecond, 1500*time.Millisecond)
		retry = refreshed
	case otelschema.RepairActionModelRepair:
		now += g.between(2*time.Second, 40*time.Second)
		retry = refreshed && class != otelschema.ChangeClassRemoval
	case otelschema.RepairActionHumanApproval:
		now += g.logNormal(3*time.Minute, 1.0, maxFollowUp-time.Minute)
		approval = otelschema.ApprovalPerCall
		if g.chance(0.25) {
			approval = otelschema.ApprovalDenied
		} else {
			retry = true
		}
	case otelschema.RepairActionAbandon:
		now += g.between(time.Millisecond, 500*time.Millisecond)
		if g.chance(0.7) {
			s.avoid = append(s.avoid, tl)
		}
	}
	success := false
	switch {
	case retry:
		rr := g.callRecord(s, tl, now, g.nextReq(s), tl.revAt(s.snap))
		re := &rr.Event
		re.RetryOf, re.RetryAttempt, re.RetryAfter = orig.RequestID, 1, orig.Outcome
		if orig.IdempotencyKey != "" {
			re.IdempotencyKey = orig.IdempotencyKey
		}
		if approval == otelschema.ApprovalPerCall {
			re.Approval = approval
		}
		if tl.revAt(s.snap) != tl.cur {
			// The refresh failed and a person approved the old shape
			// anyway: the server rejects it again.
			re.ChangeClass = class
			reject(re, orig.Outcome, orig.ErrorCode)
		} else {
			g.execute(&rr, tl)
		}
		success = re.Outcome == otelschema.OutcomeCurrent
		g.emit(rr)
		now += g.between(20*time.Millisecond, 2*time.Second)
	case action == otelschema.RepairActionModelRepair:
		// The tool is gone: the model re-planned around it.
		success = refreshed && !g.chance(0.2)
	}

	r := g.clientRecord(s, otelschema.EventRepair, now)
	e := &r.Event
	e.Tool, e.RequestID = tl.name, orig.RequestID
	e.RevisionClient, e.ChangeClass = oldRev, class
	e.ErrorCode, e.RequiredAction = orig.ErrorCode, orig.RequiredAction
	e.IdempotencyKey = orig.IdempotencyKey
	e.RepairAction = action
	e.RepairAutomatic = action == otelschema.RepairActionRefreshRetry || action == otelschema.RepairActionModelRepair
	e.RepairResult = otelschema.RepairResultFailure
	if success {
		e.RepairResult = otelschema.RepairResultSuccess
	}
	e.RepairDurationMs = (now - t) / int64(time.Millisecond)
	e.Approval = approval
	if retry {
		e.RetryAttempt = 1
	}
	r.Violation = violation
	g.emit(r)
}
