package api

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/queries"
)

// param is one query parameter: how the OpenAPI document describes it, and
// whether it may repeat. Handlers read only the parameters their endpoint
// lists; any other is a 400.
type param struct {
	name    string
	desc    string
	schema  map[string]any
	repeat  bool
	example string
}

var (
	strSchema = map[string]any{"type": "string"}

	pFrom = param{name: apiv1.ParamFrom, example: "-" + apiv1.DefaultWindow, schema: strSchema,
		desc: "Start of the window (inclusive): an RFC 3339 time, a date (`2026-11-30`: its midnight, UTC), `now`, or a time relative to now such as `-7d`, `-24h`, `-90m`. Default `-" + apiv1.DefaultWindow + "`."}
	pTo = param{name: apiv1.ParamTo, example: "now", schema: strSchema,
		desc: "End of the window (exclusive), in the same forms as `from`. Default `now`."}
	pTool        = param{name: apiv1.ParamTool, schema: strSchema, desc: "Only this tool (`gen_ai.tool.name`)."}
	pService     = param{name: apiv1.ParamService, schema: strSchema, desc: "Only events of this service (`service.name`)."}
	pEnvironment = param{name: apiv1.ParamEnvironment, schema: strSchema, desc: "Only this environment (`deployment.environment.name`)."}
	pClient      = param{name: apiv1.ParamClient, schema: strSchema, example: "cursor@0.48.0",
		desc: "Only this client, as a name (`cursor`) or name@version (`cursor@0.48.0`)."}
	pExcludeClient = param{name: apiv1.ParamExcludeClient, repeat: true, schema: strSchema, example: "ci-runner",
		desc: "Leave out this client's events, given as a name or name@version. Repeatable."}
	pFormat = param{name: apiv1.ParamFormat, schema: map[string]any{"type": "string", "enum": []string{"json", "csv", "md", "table", "wide"}},
		desc: "Response format; wins over the Accept header: `json` (application/json), `csv` (text/csv), `md` (text/markdown), `table` (text/plain, an aligned table of the main columns, digests shortened), `wide` (text/plain, every column with full values)."}
	pWidth = param{name: apiv1.ParamWidth, schema: map[string]any{"type": "integer", "minimum": minWidth, "maximum": maxWidth},
		desc: fmt.Sprintf("For `table`: fit each line within this many columns (%d to %d), cutting the widest text cells with …; numbers are never cut. Default: no limit.", minWidth, maxWidth)}
	pLimit = param{name: apiv1.ParamLimit, schema: map[string]any{"type": "integer", "minimum": 1, "maximum": queries.MaxPageLimit},
		desc: fmt.Sprintf("Rows per page, 1 to %d. Default %d.", queries.MaxPageLimit, queries.DefaultPageLimit)}
	pCursor = param{name: apiv1.ParamCursor, schema: strSchema,
		desc: "The `next` value of the previous page (also in its `Link: rel=\"next\"` header); omit for the first page."}
	pWindow = param{name: apiv1.ParamWindow, schema: strSchema, example: "14d",
		desc: "The window as a duration ending at `to` (`14d`, `36h`): an alternative to `from`, not to be given with it."}
	pMaxCalls = param{name: apiv1.ParamMaxCalls, schema: map[string]any{"type": "integer", "minimum": 0},
		desc: "Most calls through an adapter in the window that still allow retiring it. When neither `max_calls` nor `max_share` is given, the threshold is 0 calls; when only one is given, the other does not apply."}
	pMaxShare = param{name: apiv1.ParamMaxShare, schema: strSchema, example: "0.5%",
		desc: "Highest share of the tool's calls in the window going through an adapter that still allows retiring it: a fraction (`0.005`) or a percentage (`0.5%`)."}
	pLongSession = param{name: apiv1.ParamLongSession, schema: strSchema, example: "24h",
		desc: "Session age from which a caller counts as long-running (`24h`, `3d`). Default 24h."}
	pUnknownCallers = param{name: apiv1.ParamUnknownCallers, schema: map[string]any{"type": "string", "enum": []string{"at_risk", "safe"}},
		desc: "How calls that leave out what a verdict needs are judged: calls without a session age or a privilege, and calls that did not say which revision their client planned with (`dev.mcpdrift.revision.client` absent) to an adapter's tool or to a tool the release check finds changed or removed. `at_risk` (the default) puts an adapter they use at risk and keeps a change that needs a decision so; `safe` counts them as short-lived, unprivileged and not stale."}
	pAdapter    = param{name: apiv1.ParamAdapter, schema: strSchema, desc: "Only this adapter id."}
	pTopClients = param{name: apiv1.ParamTopClients, schema: map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
		desc: "How many blocking clients to list per adapter. Default 5."}
	pRun       = param{name: apiv1.ParamRun, schema: strSchema, desc: "Only calls of this agent run (`dev.mcpdrift.run.id`)."}
	pSession   = param{name: apiv1.ParamSession, schema: strSchema, desc: "Only calls of this session (`mcp.session.id`)."}
	pRequestID = param{name: apiv1.ParamRequestID, schema: strSchema, desc: "Only the call with this JSON-RPC request id (`jsonrpc.request.id`)."}
)

// filterParams are the parameters of every report.
var filterParams = []param{pFrom, pTo, pTool, pService, pEnvironment, pClient, pExcludeClient}

// paramError is a request parameter at fault; it becomes a 400 problem
// naming the parameter.
type paramError struct {
	param  string
	detail string
}

// Error names the parameter and what is wrong with it.
func (e *paramError) Error() string { return e.param + ": " + e.detail }

func badParam(name, format string, args ...any) error {
	return &paramError{param: name, detail: fmt.Sprintf(format, args...)}
}

// parseQuery decodes a raw query string. Unlike url.URL.Query, which drops
// a pair it cannot decode, it refuses the request and names the parameter:
// max_share=0.5% (an unescaped %) must not silently become no threshold.
func parseQuery(raw string) (url.Values, error) {
	v, err := url.ParseQuery(raw)
	if err == nil {
		return v, nil
	}
	for _, pair := range strings.FieldsFunc(raw, func(r rune) bool { return r == '&' }) {
		key, value, _ := strings.Cut(pair, "=")
		name, kerr := url.QueryUnescape(key)
		if kerr != nil {
			return nil, badParam(key, "malformed parameter name: %v", kerr)
		}
		if _, verr := url.QueryUnescape(value); verr != nil {
			return nil, badParam(name, "malformed value %q: %v (escape %% as %%25)", value, verr)
		}
	}
	return nil, badParam("", "malformed query string: %v", err)
}

// query reads the parameters of one request.
type query struct {
	v   url.Values
	now time.Time
	// window resolves a window as the reports read it (Reports.Window).
	window func(from, to time.Time) (time.Time, time.Time)
}

// check rejects the parameters the endpoint does not take and the repeated
// ones that may not repeat.
func (q query) check(allowed []param) error {
	names := make([]string, 0, len(q.v))
	for k := range q.v {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		i := slices.IndexFunc(allowed, func(p param) bool { return p.name == name })
		if i < 0 {
			known := make([]string, len(allowed))
			for j, p := range allowed {
				known[j] = p.name
			}
			return badParam(name, "unknown parameter; this endpoint takes %s", strings.Join(known, ", "))
		}
		if n := len(q.v[name]); n > 1 && !allowed[i].repeat {
			return badParam(name, "given %d times; it takes one value", n)
		}
	}
	return nil
}

// get returns the parameter's value, "" when absent.
func (q query) get(name string) string { return strings.TrimSpace(q.v.Get(name)) }

func (q query) time(name, def string) (time.Time, error) {
	s := q.get(name)
	if s == "" {
		s = def
	}
	t, err := ParseTime(s, q.now)
	if err != nil {
		return time.Time{}, badParam(name, "%v", err)
	}
	return t, nil
}

// filter reads the common report filter; with window set, the window
// parameter may replace from.
func (q query) filter(tenant string, window bool) (queries.Filter, error) {
	to, err := q.time(apiv1.ParamTo, "now")
	if err != nil {
		return queries.Filter{}, err
	}
	var from time.Time
	if w := q.get(apiv1.ParamWindow); window && w != "" {
		if q.get(apiv1.ParamFrom) != "" {
			return queries.Filter{}, badParam(apiv1.ParamWindow, "give window or from, not both")
		}
		d, err := parseDuration(w)
		if err != nil {
			return queries.Filter{}, badParam(apiv1.ParamWindow, "invalid window %q: %v", w, err)
		}
		if d <= 0 {
			return queries.Filter{}, badParam(apiv1.ParamWindow, "invalid window %q: must be longer than zero", w)
		}
		from = to.Add(-d)
	} else if from, err = q.time(apiv1.ParamFrom, "-"+apiv1.DefaultWindow); err != nil {
		return queries.Filter{}, err
	}
	if !from.Before(to) {
		return queries.Filter{}, badParam(apiv1.ParamFrom, "from (%s) must be before to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	// Every report reads, and its response states, the same window: as
	// asked where the minutely tier holds its edges, else widened to them.
	if q.window != nil {
		from, to = q.window(from, to)
	}
	var excl []string
	for _, c := range q.v[apiv1.ParamExcludeClient] {
		if c = strings.TrimSpace(c); c == "" {
			return queries.Filter{}, badParam(apiv1.ParamExcludeClient, "must not be empty")
		}
		excl = append(excl, c)
	}
	return queries.Filter{
		Tenant:         tenant,
		From:           from,
		To:             to,
		Tool:           q.get(apiv1.ParamTool),
		Service:        q.get(apiv1.ParamService),
		Environment:    q.get(apiv1.ParamEnvironment),
		Client:         q.get(apiv1.ParamClient),
		ExcludeClients: excl,
	}, nil
}

// The width a text table may be fitted to.
const (
	minWidth = 40
	maxWidth = 1000
)

// width reads the width a text table is fitted to; 0 is no limit.
func (q query) width() (int, error) {
	s := q.get(apiv1.ParamWidth)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < minWidth || n > maxWidth {
		return 0, badParam(apiv1.ParamWidth, "invalid width %q: want a whole number of columns from %d to %d", s, minWidth, maxWidth)
	}
	return n, nil
}

// page reads limit and cursor.
func (q query) page() (queries.Page, error) {
	p := queries.Page{After: q.get(apiv1.ParamCursor)}
	if s := q.get(apiv1.ParamLimit); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > queries.MaxPageLimit {
			return p, badParam(apiv1.ParamLimit, "invalid limit %q: want a whole number from 1 to %d", s, queries.MaxPageLimit)
		}
		p.Limit = n
	}
	return p, nil
}

// retirement reads the thresholds of the adapter retirement verdict.
func (q query) retirement() (queries.RetirementOptions, apiv1.Thresholds, error) {
	o := queries.RetirementOptions{MaxCalls: -1, MaxShare: -1, LongSession: queries.DefaultLongSession, TopClients: queries.DefaultTopClients}
	if s := q.get(apiv1.ParamMaxCalls); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return o, apiv1.Thresholds{}, badParam(apiv1.ParamMaxCalls, "invalid count %q: want a whole number, 0 or more", s)
		}
		o.MaxCalls = n
	}
	if s := q.get(apiv1.ParamMaxShare); s != "" {
		f, err := ParseShare(s)
		if err != nil {
			return o, apiv1.Thresholds{}, badParam(apiv1.ParamMaxShare, "%v", err)
		}
		o.MaxShare = f
	}
	if o.MaxCalls < 0 && o.MaxShare < 0 {
		o.MaxCalls = 0
	}
	if s := q.get(apiv1.ParamLongSession); s != "" {
		d, err := parseDuration(s)
		if err != nil || d <= 0 {
			return o, apiv1.Thresholds{}, badParam(apiv1.ParamLongSession, "invalid session age %q: want a positive duration such as 24h or 3d", s)
		}
		o.LongSession = d
	}
	if s := q.get(apiv1.ParamTopClients); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			return o, apiv1.Thresholds{}, badParam(apiv1.ParamTopClients, "invalid count %q: want a whole number from 1 to 100", s)
		}
		o.TopClients = n
	}
	safe, err := q.unknownSafe()
	if err != nil {
		return o, apiv1.Thresholds{}, err
	}
	o.UnknownSafe = safe
	th := apiv1.Thresholds{LongSessionS: int64(o.LongSession / time.Second), TopClients: o.TopClients, UnknownCallers: "at_risk"}
	if o.UnknownSafe {
		th.UnknownCallers = "safe"
	}
	if o.MaxCalls >= 0 {
		th.MaxCalls = &o.MaxCalls
	}
	if o.MaxShare >= 0 {
		th.MaxShare = &o.MaxShare
	}
	return o, th, nil
}

// unknownSafe reads unknown_callers: whether calls that leave out a
// session age, a privilege or their client's revision are judged safe.
func (q query) unknownSafe() (bool, error) {
	switch s := q.get(apiv1.ParamUnknownCallers); s {
	case "", "at_risk":
		return false, nil
	case "safe":
		return true, nil
	default:
		return false, badParam(apiv1.ParamUnknownCallers, "invalid value %q: want at_risk or safe", s)
	}
}

// ParseShare reads a share of traffic: a fraction from 0 to 1 ("0.005") or
// a percentage from 0% to 100% ("0.5%").
func ParseShare(s string) (float64, error) {
	s = strings.TrimSpace(s)
	num, percent := strings.CutSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid share %q: want a fraction (0.005) or a percentage (0.5%%)", s)
	}
	if percent {
		f /= 100
	}
	if f < 0 || f > 1 {
		return 0, fmt.Errorf("invalid share %q: must be between 0 and 1 (0%% and 100%%)", s)
	}
	return f, nil
}
