package simulate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// changeKind is one row of the seed's drift table: what a deploy changes
// in a tool's contract.
type changeKind uint8

const (
	// changeOptionalInput adds an optional input field (label): old calls
	// keep working, either as they are or through an adapter that applies
	// the historical default.
	changeOptionalInput changeKind = iota
	// changeRequiredDefault adds a required input field (region) with a safe
	// historical default: an adapter normalises old calls until its window
	// ends, then they are rejected as stale.
	changeRequiredDefault
	// changeApprovalScope adds a required approval scope: old calls are
	// rejected as stale before any external effect.
	changeApprovalScope
	// changeMeaning changes the meaning of an input field (project): old
	// calls are rejected as incompatible.
	changeMeaning
	// changeOutputAdded adds an output field: old clients parse the old
	// fields, nothing else happens.
	changeOutputAdded
	// changeOutputIDRemoved removes an output identifier: the old client's
	// dependent call stops with a contract error.
	changeOutputIDRemoved
	// changeToolRemoved removes the tool: calls fail clearly as removed.
	changeToolRemoved
)

// changeKinds lists every kind, in the order of the seed's table.
var changeKinds = [...]changeKind{
	changeOptionalInput, changeRequiredDefault, changeApprovalScope, changeMeaning,
	changeOutputAdded, changeOutputIDRemoved, changeToolRemoved,
}

var changeKindNames = [...]string{
	changeOptionalInput:   "optional_input_added",
	changeRequiredDefault: "required_input_with_default",
	changeApprovalScope:   "approval_scope_added",
	changeMeaning:         "field_meaning_changed",
	changeOutputAdded:     "output_field_added",
	changeOutputIDRemoved: "output_identifier_removed",
	changeToolRemoved:     "tool_removed",
}

func (k changeKind) String() string { return changeKindNames[k] }

// class is the seed's classification of the change.
func (k changeKind) class() otelschema.ChangeClass {
	switch k {
	case changeRequiredDefault:
		return otelschema.ChangeClassBoundedMigration
	case changeApprovalScope:
		return otelschema.ChangeClassAuthority
	case changeMeaning:
		return otelschema.ChangeClassSemantic
	case changeOutputIDRemoved, changeToolRemoved:
		return otelschema.ChangeClassRemoval
	}
	return otelschema.ChangeClassAdditive
}

// field is the input or output field the change concerns, with the default
// an adapter applies for input fields.
func (k changeKind) field() (name, dflt string) {
	switch k {
	case changeOptionalInput:
		return "label", "none"
	case changeRequiredDefault:
		return "region", "us-east-preview"
	case changeApprovalScope:
		return "approval_scope", ""
	case changeMeaning:
		return "project", ""
	case changeOutputAdded:
		return "result.etag", ""
	case changeOutputIDRemoved:
		return "issue.id", ""
	}
	return "", ""
}

// change is one deploy of one tool's new contract.
type change struct {
	kind   changeKind
	tool   *tool
	server *server
	at     int64 // Unix nanoseconds
	// inSpan is false for changes deployed before the simulated span: their
	// revisions and adapters exist at Start, but they emit nothing.
	inSpan bool
	// from and to index tool.revs.
	from, to int
	// adapterID is the adapter that normalises calls planned on revs[from],
	// empty when there is none.
	adapterID string
	// windowEnd is the declared end of the adapter's window in Unix
	// nanoseconds, 0 when none was declared.
	windowEnd int64
	// build is the server build the change shipped in.
	build string
}

// adapterActive reports whether the change's adapter serves calls at t.
func (c *change) adapterActive(t int64) bool {
	return c.adapterID != "" && (c.windowEnd == 0 || t < c.windowEnd)
}

// revision is one contract revision of a tool.
type revision struct {
	id      string
	at      int64   // deployed at, Unix nanoseconds; MinInt64 for the first
	change  *change // nil for the first revision
	removed bool    // the tool no longer exists from this revision on
}

// tool is one MCP tool of one server.
type tool struct {
	idx       int
	name      string
	server    *server
	privilege otelschema.Privilege
	target    string
	arg, val  string // an input field and a typical value, for audit args
	weight    float64
	revs      []revision
	cur       int // the revision the server runs now (advanced by deploys)

	// argsRaw and argsNormalized are the audit arguments of a typical
	// call: as an old client sends them, and after an adapter's default —
	// the shape clients planning on revs[newShape] or later send.
	argsRaw, argsNormalized string
	newShape                int
}

// cacheArgs builds the tool's audit arguments once its changes are known.
func (t *tool) cacheArgs() {
	t.argsRaw = `{"` + t.arg + `":` + strconv.Quote(t.val) + `}`
	t.argsNormalized = t.argsRaw
	t.newShape = len(t.revs)
	for i, r := range t.revs {
		if r.change != nil && r.change.adapterID != "" {
			t.newShape = i
			field, dflt := r.change.kind.field()
			t.argsNormalized = t.argsRaw[:len(t.argsRaw)-1] + `,"` + field + `":` + strconv.Quote(dflt) + `}`
		}
	}
}

// revAt returns the index of the revision advertised at t.
func (t *tool) revAt(at int64) int {
	i := 0
	for i+1 < len(t.revs) && t.revs[i+1].at <= at {
		i++
	}
	return i
}

// server is one MCP server service.
type server struct {
	idx      int
	name     string
	minor    int // the build is 1.<minor>.0, bumped by each deploy
	build    string
	instance string
	tools    []*tool
	changes  []*change // deployed so far, in order
}

func (s *server) deploy() {
	s.minor++
	s.build = "1." + strconv.Itoa(s.minor) + ".0"
	sum := sha256.Sum256([]byte(s.name + "@" + s.build))
	s.instance = s.name + "-" + hex.EncodeToString(sum[:3])
}

// repairPolicy is how a client reacts to a repairable rejection.
type repairPolicy uint8

const (
	// policyAuto refreshes and retries automatically when the seed's
	// conditions hold, and otherwise asks a person.
	policyAuto repairPolicy = iota
	// policyModel has the model repair the arguments from the refreshed
	// schema when the change is syntactic, and otherwise asks a person.
	policyModel
	// policyHuman asks a person after every rejection.
	policyHuman
	// policyNaive gives up.
	policyNaive
)

// client is one client name@version combination.
type client struct {
	idx       int
	name      string
	version   string
	protocol  string
	stateless bool // protocol 2026-07-28: no sessions, keyed by run id
	// listChanged is true when the client refreshes its tools on
	// notifications/tools/list_changed; false when it ignores them.
	listChanged bool
	// lazy clients refresh only when their agent loop is next idle, minutes
	// to hours after the notification: calls already planned go out on the
	// old snapshot meanwhile.
	lazy     bool
	policy   repairPolicy
	weight   float64
	instance string
	seen     bool
}

// session is one client session (or, without sessions, one agent run).
type session struct {
	idx        int
	id         string // empty on protocol 2026-07-28
	run        string
	client     *client
	start, end int64
	cap        otelschema.Privilege
	// approval is how the session approves privileged calls: session or
	// per_call.
	approval otelschema.Approval
	weight   float64
	rate     float64 // calls per simulated second
	snap     int64   // when the session last listed tools successfully
	// avoid lists the tools the session's model stopped using after
	// giving up on them.
	avoid   []*tool
	nextReq int64
	seen    bool
}

func (s *session) age(t int64) int64 { return max(0, (t-s.start)/int64(time.Second)) }

// Protocol versions.
const (
	protocolOld       = "2025-06-18"
	protocolCurrent   = "2025-11-25"
	protocolStateless = "2026-07-28"
)

type toolSpec struct {
	name      string
	privilege otelschema.Privilege
	target    string
	arg, val  string
}

const (
	read         = otelschema.PrivilegeRead
	write        = otelschema.PrivilegeWrite
	destructive  = otelschema.PrivilegeDestructive
	credentialed = otelschema.PrivilegeCredentialed
)

// toolCatalogue holds realistic tools, privileges interleaved so that a
// small fleet has some of each; tool 0 never changes.
var toolCatalogue = []toolSpec{
	{"search_docs", read, "docs.internal", "query", "rotate credentials"},
	{"create_issue", write, "tracker.example", "title", "Login fails on Safari"},
	{"deploy_preview", write, "deploy.example", "branch", "fix-login"},
	{"get_issue", read, "tracker.example", "issue_id", "I-482"},
	{"ssh_exec", credentialed, "ssh://build-01.internal", "command", "systemctl status app"},
	{"run_report", read, "warehouse.internal", "team", "sales"},
	{"delete_branch", destructive, "git.example", "branch", "stale-feature"},
	{"add_comment", write, "tracker.example", "issue_id", "I-482"},
	{"http_request", credentialed, "https://api.partner.example", "path", "/v2/orders"},
	{"query_logs", read, "logs.internal", "service", "checkout"},
	{"scale_service", destructive, "k8s.internal", "deployment", "checkout"},
	{"send_email", write, "smtp.example", "to", "ops@example.com"},
	{"list_repos", read, "git.example", "org", "acme"},
	{"create_invoice", write, "payments.example", "customer", "cus_123"},
	{"refund_payment", destructive, "payments.example", "charge", "ch_881"},
	{"rotate_secret", credentialed, "vault.internal", "path", "kv/app/db"},
	{"get_forecast", read, "weather.example", "city", "Madrid"},
	{"merge_pull_request", destructive, "git.example", "pr", "1432"},
}

var serverNames = []string{
	"deploy-mcp", "tracker-mcp", "reports-mcp", "vault-mcp", "infra-mcp",
	"docs-mcp", "payments-mcp", "ssh-gateway-mcp",
}

var clientNames = []string{
	"claude-code", "cursor", "vscode-copilot", "claude-desktop", "windsurf",
	"codex-cli", "goose", "cline", "continue", "zed", "gemini-cli",
	"openai-agents-sdk", "langgraph-agent", "n8n-mcp-client", "ops-agent",
	"mcp-inspector",
}

// statelessCapable clients adopt protocol 2026-07-28 in their newest
// versions.
var statelessCapable = map[string]bool{
	"codex-cli": true, "goose": true, "gemini-cli": true,
	"openai-agents-sdk": true, "langgraph-agent": true,
}

// buildTools returns cfg.Tools tools spread over the servers.
func buildTools(rng *rand.Rand, n int, servers []*server) []*tool {
	tools := make([]*tool, n)
	for i := range tools {
		var spec toolSpec
		if i < len(toolCatalogue) {
			spec = toolCatalogue[i]
		} else {
			p := read
			switch x := rng.Float64(); {
			case x < 0.35:
			case x < 0.70:
				p = write
			case x < 0.85:
				p = destructive
			default:
				p = credentialed
			}
			spec = toolSpec{
				name:      fmt.Sprintf("tool_%03d", i),
				privilege: p,
				target:    fmt.Sprintf("svc-%02d.internal", i%37),
				arg:       "id",
				val:       strconv.Itoa(1000 + i),
			}
		}
		srv := servers[i%len(servers)]
		t := &tool{
			idx: i, name: spec.name, server: srv, privilege: spec.privilege,
			target: spec.target, arg: spec.arg, val: spec.val,
		}
		t.revs = []revision{{id: revisionID(t, 0, rng.IntN(5)+1), at: math.MinInt64}}
		srv.tools = append(srv.tools, t)
		tools[i] = t
	}
	// Popularity: Zipf over a random order, the stable read tool first,
	// reads a little more popular than writes.
	order := rng.Perm(n - 1)
	tools[0].weight = 1
	for rank, i := range order {
		t := tools[i+1]
		t.weight = 1 / math.Pow(float64(rank+2), 0.9)
		if t.privilege == read {
			t.weight *= 1.5
		}
	}
	return tools
}

// revisionID returns the id of revision k of t: an integer for even tools,
// a SHA-256 digest of the definition for odd ones (both are accepted).
func revisionID(t *tool, k, base int) string {
	if t.idx%2 == 0 {
		return strconv.Itoa(base + k)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, `{"annotations":{},"inputSchema":{"rev":%d},"name":%q}`, k, t.name))
	return hex.EncodeToString(sum[:])
}

func shortRev(id string) string {
	if len(id) > 12 {
		return id[:8]
	}
	return "r" + id
}

// addRevision appends the revision a change creates to its tool.
func (c *change) addRevision() {
	t := c.tool
	c.from = len(t.revs) - 1
	base, _ := strconv.Atoi(t.revs[0].id)
	rev := revision{id: revisionID(t, len(t.revs), base), at: c.at, change: c, removed: c.kind == changeToolRemoved}
	t.revs = append(t.revs, rev)
	c.to = len(t.revs) - 1
	if c.adapterID != "" {
		field, _ := c.kind.field()
		c.adapterID = t.name + "." + field + "-default." + shortRev(t.revs[c.from].id) + "-" + shortRev(rev.id)
	}
}

// planChanges schedules the contract changes: a few legacy additive
// changes before the span, whose adapters are still declared at Start, then
// cfg.changes() changes during the span cycling through every kind, each on
// a different tool (tool 0 never changes).
func planChanges(rng *rand.Rand, cfg Config, tools []*tool, start, span int64) []*change {
	n := cfg.changes()
	pre := min(max(1, cfg.Servers/4), cfg.Tools-1-n)
	// Busy tools change more often than quiet ones: each change takes a
	// free tool with a probability proportional to the square of its
	// popularity, among
	// those its kind suits when there are any. Tool 0 never changes.
	free := make([]*tool, 0, len(tools)-1)
	free = append(free, tools[1:]...)
	take := func(ok func(*tool) bool) *tool {
		total := 0.0
		for _, t := range free {
			if ok(t) {
				total += t.weight * t.weight
			}
		}
		if total == 0 {
			ok = func(*tool) bool { return true }
			for _, t := range free {
				total += t.weight * t.weight
			}
		}
		x := rng.Float64() * total
		for i, t := range free {
			if !ok(t) {
				continue
			}
			if x -= t.weight * t.weight; x < 0 || i == len(free)-1 {
				free = slices.Delete(free, i, i+1)
				return t
			}
		}
		t := free[len(free)-1]
		free = free[:len(free)-1]
		return t
	}
	var changes []*change
	for i := range pre {
		t := take(func(*tool) bool { return true })
		at := start - int64(24*time.Hour) - int64(float64(3*24*time.Hour)*rng.Float64()) - int64(i)*int64(time.Hour)
		changes = append(changes, &change{kind: changeOptionalInput, tool: t, server: t.server, at: at, adapterID: "pending"})
	}
	var kinds []changeKind
	for len(kinds) < n {
		perm := rng.Perm(len(changeKinds))
		for _, k := range perm {
			kinds = append(kinds, changeKinds[k])
		}
	}
	kinds = kinds[:n]
	// Deploys spread over 5%..75% of the span, so that what follows each
	// one — notifications, refreshes, the end of a migration window — is
	// observed before the run ends.
	for i, k := range kinds {
		frac := 0.05 + 0.70*(float64(i)+0.5)/float64(n) + (rng.Float64()-0.5)*0.02
		at := start + int64(frac*float64(span))
		var t *tool
		switch k {
		case changeApprovalScope, changeRequiredDefault:
			t = take(func(t *tool) bool { return t.privilege >= write })
		case changeOutputIDRemoved:
			t = take(func(t *tool) bool { return t.name == "create_issue" || t.privilege == write })
		default:
			t = take(func(*tool) bool { return true })
		}
		c := &change{kind: k, tool: t, server: t.server, at: at, inSpan: true}
		switch k {
		case changeOptionalInput:
			if rng.Float64() < 0.6 {
				c.adapterID = "pending"
			}
		case changeRequiredDefault:
			c.adapterID = "pending"
			c.windowEnd = at + span/8
		}
		changes = append(changes, c)
	}
	slices.SortStableFunc(changes, func(a, b *change) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	for _, c := range changes {
		c.addRevision()
	}
	return changes
}

// buildClients returns n client name@version combinations.
func buildClients(rng *rand.Rand, n int) []*client {
	clients := make([]*client, n)
	perName := (n + len(clientNames) - 1) / len(clientNames)
	for i := range clients {
		name := clientNames[i%len(clientNames)]
		rank := i / len(clientNames) // 0 is the oldest version of the name
		major := 1 + len(name)%3
		version := fmt.Sprintf("%d.%d.%d", major, 2+rank*3+rng.IntN(3), rng.IntN(12))
		c := &client{idx: i, name: name, version: version, protocol: protocolOld}
		newest := rank == perName-1 || i+len(clientNames) >= n
		switch {
		case newest && statelessCapable[name]:
			c.protocol, c.stateless = protocolStateless, true
		case rank > 0 || rng.Float64() < 0.4:
			c.protocol = protocolCurrent
		}
		c.listChanged = !c.stateless && rng.Float64() < 0.6
		c.lazy = c.listChanged && rng.Float64() < 0.25
		switch x := rng.Float64(); {
		case x < 0.5:
			c.policy = policyAuto
		case x < 0.7:
			c.policy = policyModel
		case x < 0.9:
			c.policy = policyHuman
		default:
			c.policy = policyNaive
		}
		c.instance = name + "-" + strconv.Itoa(i)
		clients[i] = c
	}
	order := rng.Perm(n)
	for rank, i := range order {
		clients[i].weight = 1 / math.Pow(float64(rank+1), 0.8)
	}
	return clients
}

// buildSessions returns n sessions overlapping [start, end): most start
// during the span, some before it (the long-lived ones that planned on old
// snapshots); lengths range from minutes to days.
func buildSessions(rng *rand.Rand, n int, clients []*client, start, end int64) []*session {
	cum := make([]float64, len(clients))
	total := 0.0
	for i, c := range clients {
		total += c.weight
		cum[i] = total
	}
	logUniform := func(lo, hi time.Duration) int64 {
		return int64(math.Exp(math.Log(float64(lo)) + rng.Float64()*(math.Log(float64(hi))-math.Log(float64(lo)))))
	}
	sessions := make([]*session, n)
	for i := range sessions {
		s := &session{idx: i}
		var dur int64
		switch x := rng.Float64(); {
		case x < 0.50:
			dur = logUniform(2*time.Minute, time.Hour)
		case x < 0.80:
			dur = logUniform(time.Hour, 12*time.Hour)
		default:
			dur = logUniform(12*time.Hour, 6*24*time.Hour)
		}
		if rng.Float64() < 0.15 {
			// Started before the span and still running at Start.
			dur = max(dur, logUniform(12*time.Hour, 6*24*time.Hour))
			s.start = start - int64(rng.Float64()*float64(dur-int64(10*time.Minute)))
		} else {
			s.start = start + int64(rng.Float64()*float64(end-start))
		}
		s.end = s.start + dur
		s.snap = s.start
		ci, _ := slices.BinarySearch(cum, rng.Float64()*total)
		s.client = clients[min(ci, len(clients)-1)]
		switch x := rng.Float64(); {
		case x < 0.40:
			s.cap = read
		case x < 0.75:
			s.cap = write
		case x < 0.90:
			s.cap = destructive
		default:
			s.cap = credentialed
		}
		s.approval = otelschema.ApprovalSession
		if rng.Float64() < 0.4 {
			s.approval = otelschema.ApprovalPerCall
		}
		var b [16]byte
		for j := 0; j < 16; j += 8 {
			v := rng.Uint64()
			for k := range 8 {
				b[j+k] = byte(v >> (8 * k))
			}
		}
		h := hex.EncodeToString(b[:])
		s.run = "run_" + h[:20]
		if !s.client.stateless {
			s.id = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
		}
		// Agents call in bursts: short sessions call often, long ones idle.
		hours := float64(dur) / float64(time.Hour)
		s.weight = math.Exp(rng.NormFloat64()*0.8) / math.Pow(max(hours, 0.05), 0.15)
		sessions[i] = s
	}
	return sessions
}
