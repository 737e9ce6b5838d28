// Package retirement decides whether an adapter can be retired: the
// verdict (ready, blocked, at_risk), its reason in words and the clients
// that block it, from the figures the adapter retirement report's SQL
// returns. It is pure Go over those rows: no SQL, no store, so each verdict
// and reason is tested without one; queries runs the SQL and calls Judge
// and Bridges on every row.
package retirement

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/humanize"
)

// Adapter verdicts.
const (
	// VerdictReady: usage is within the thresholds and no remaining caller
	// is long-running or privileged.
	VerdictReady = "ready"
	// VerdictBlocked: usage exceeds a threshold.
	VerdictBlocked = "blocked"
	// VerdictAtRisk: usage is within the thresholds, but some remaining
	// callers are long-running sessions or privileged (destructive or
	// credentialed) — the callers a removal hurts most — or did not say
	// how old their session is or what privilege the call needs; or calls
	// to the adapter's tool did not say which revision their client
	// planned with, and may come from stale callers it serves unbeknown:
	// unknown is not assumed safe unless Options.UnknownSafe
	// says so.
	VerdictAtRisk = "at_risk"
)

// Options are the thresholds of the adapter retirement verdict.
// The zero value means "no call at all" with the default long-session age;
// clients to ignore are excluded by the report's filter
// (queries.Filter.ExcludeClients), before the figures reach Judge.
type Options struct {
	// MaxCalls is the most calls through the adapter in the window that
	// still allow retiring it; negative disables the count threshold.
	MaxCalls int64
	// MaxShare is the highest share of the tool's traffic in the window
	// (0..1) that still allows retiring it; negative disables it. When both
	// thresholds are enabled, both must hold.
	MaxShare float64
	// LongSession is the session age from which a caller counts as
	// long-running; zero means DefaultLongSession.
	LongSession time.Duration
	// TopClients is how many blocking clients to list; zero means
	// DefaultTopClients.
	TopClients int
	// UnknownSafe judges calls without a session age
	// (dev.mcpdrift.session.age_s absent or not positive) or without a
	// privilege (dev.mcpdrift.privilege absent) as short-lived and
	// unprivileged, and calls to the adapter's tool without a client
	// revision (dev.mcpdrift.revision.client absent) as not stale. By
	// default they make an adapter within the thresholds at_risk: the
	// seed's long-lived and privileged callers are exactly the ones an
	// instrumentation may fail to describe, and a stock client that
	// declares no revision may be planning with the old one.
	UnknownSafe bool
}

// Defaults of Options.
const (
	DefaultLongSession = 24 * time.Hour
	DefaultTopClients  = 5
)

// WithDefaults checks the thresholds and fills the zero ones with their
// defaults. Its error is unwrapped text: the caller says which kind of
// request it makes invalid.
func (o Options) WithDefaults() (Options, error) {
	if o.MaxCalls < 0 && o.MaxShare < 0 {
		return o, errors.New("at least one of max calls and max share must be enabled")
	}
	if o.MaxShare > 1 {
		return o, fmt.Errorf("max share %g is over 1", o.MaxShare)
	}
	if o.LongSession < 0 || o.TopClients < 0 {
		return o, errors.New("long session and top clients must not be negative")
	}
	if o.LongSession == 0 {
		o.LongSession = DefaultLongSession
	}
	if o.TopClients == 0 {
		o.TopClients = DefaultTopClients
	}
	return o, nil
}

// Bridges adds to the reason what the adapter bridges, when the registry
// knows both of its revisions: a.Change and a.RegistryChangeClass are set
// (nil when it does not) before it is called, after Judge.
func Bridges(a *apiv1.AdapterRow) {
	switch {
	case a.Change == nil:
	case *a.RegistryChangeClass == "":
		a.Reason += fmt.Sprintf("; the registry finds no change from %s to %s for it to bridge", a.RevisionFrom, a.RevisionTo)
	default:
		a.Reason += fmt.Sprintf("; it bridges %s → %s: %s", a.RevisionFrom, a.RevisionTo, *a.Change)
	}
}

func isPrivileged(p string) bool { return p == "destructive" || p == "credentialed" }

// Caller is one client's calls through an adapter, as the report's SQL
// returns them (callers_raw).
type Caller struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Calls   uint64 `json:"calls"`
	// MaxSessionAgeS is the oldest session age the calls said; 0 when
	// none said one.
	MaxSessionAgeS int64  `json:"max_session_age_s"`
	MaxPrivilege   string `json:"max_privilege"`
	// UnknownAge and UnknownPrivilege count the calls that did not say
	// their session age, their privilege.
	UnknownAge       uint64 `json:"unknown_age"`
	UnknownPrivilege uint64 `json:"unknown_privilege"`
}

// UnknownCaller is one client's calls to an adapter's tool without a
// client revision (unknown_callers_raw).
type UnknownCaller struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Calls   uint64 `json:"calls"`
}

// ClientUsages names each caller name@version and sorts them, most calls
// first.
func ClientUsages(callers []Caller) []apiv1.ClientUsage {
	out := make([]apiv1.ClientUsage, 0, len(callers))
	for _, c := range callers {
		u := apiv1.ClientUsage{Client: clientName(c.Name, c.Version), Calls: c.Calls, MaxPrivilege: c.MaxPrivilege,
			UnknownAgeCalls: c.UnknownAge, UnknownPrivilegeCalls: c.UnknownPrivilege}
		if c.MaxSessionAgeS > 0 {
			u.MaxSessionAgeS = &c.MaxSessionAgeS
		}
		out = append(out, u)
	}
	sortUsages(out)
	return out
}

// clientName names a client name@version, the name alone when no version
// is known.
func clientName(name, version string) string {
	if version != "" {
		name += "@" + version
	}
	if name == "" {
		name = "(unknown client)"
	}
	return name
}

// sortUsages sorts client usages most calls first, then most calls
// without a client revision, then by name.
func sortUsages(us []apiv1.ClientUsage) {
	sort.Slice(us, func(i, j int) bool {
		if us[i].Calls != us[j].Calls {
			return us[i].Calls > us[j].Calls
		}
		if us[i].UnknownRevisionCalls != us[j].UnknownRevisionCalls {
			return us[i].UnknownRevisionCalls > us[j].UnknownRevisionCalls
		}
		return us[i].Client < us[j].Client
	})
}

// withUnknownRevisions adds to the callers through an adapter each
// client's calls to its tool without a client revision, a client that made
// none through it included (with Calls 0).
func withUnknownRevisions(callers []apiv1.ClientUsage, unknown []UnknownCaller) []apiv1.ClientUsage {
	for _, k := range unknown {
		name := clientName(k.Name, k.Version)
		i := slices.IndexFunc(callers, func(c apiv1.ClientUsage) bool { return c.Client == name })
		if i < 0 {
			callers = append(callers, apiv1.ClientUsage{Client: name})
			i = len(callers) - 1
		}
		callers[i].UnknownRevisionCalls += k.Calls
	}
	sortUsages(callers)
	return callers
}

// Judge fills an adapter's callers, verdict, reason and blocking clients
// from its figures (a, as the report's SQL returns it), its callers
// through it, the clients of its tool's calls without a client revision,
// and o, which WithDefaults has checked. now tells whether its declared
// window has ended.
func Judge(a *apiv1.AdapterRow, callers []Caller, unknownCallers []UnknownCaller, o Options, now time.Time) {
	a.Callers = withUnknownRevisions(ClientUsages(callers), unknownCallers)
	if a.WindowEnd != nil {
		a.WindowEnded = !a.WindowEnd.After(now)
	}
	if a.ServiceNames == nil {
		a.ServiceNames = []string{}
	}

	longS := int64(o.LongSession / time.Second)
	long := func(age *int64) bool { return age != nil && *age >= longS }
	risky := func(c apiv1.ClientUsage) bool {
		return long(c.MaxSessionAgeS) || isPrivileged(c.MaxPrivilege) ||
			(!o.UnknownSafe && c.UnknownAgeCalls+c.UnknownPrivilegeCalls+c.UnknownRevisionCalls > 0)
	}
	var over []string
	if a.RemovedToolSuccesses > 0 {
		over = append(over, fmt.Sprintf("%d removed_tool_success %s through it in the window: a removed tool's call succeeded",
			a.RemovedToolSuccesses, humanize.Plural(a.RemovedToolSuccesses, "violation", "violations")))
	}
	if o.MaxCalls >= 0 && int64(a.Calls) > o.MaxCalls {
		over = append(over, fmt.Sprintf("%s in the window, over the threshold of %d", calls(a.Calls), o.MaxCalls))
	}
	if o.MaxShare >= 0 && a.Share > o.MaxShare {
		over = append(over, fmt.Sprintf("%s of %s's calls, over the threshold of %s", humanize.Percent(a.Share), a.Tool, humanize.Percent(o.MaxShare)))
	}
	unknown := unknowns(a)
	// Calls to the tool without a client revision need no call through
	// the adapter to put it at risk: a stale caller that said nothing may
	// be why it is still there.
	revision := fmt.Sprintf("%s to %s did not say which revision %s planned with", calls(a.UnknownRevisionCalls), a.Tool,
		humanize.Plural(a.UnknownRevisionCalls, "it was", "they were"))
	unknownRevision := !o.UnknownSafe && a.UnknownRevisionCalls > 0
	var blocking []apiv1.ClientUsage
	switch {
	case len(over) > 0:
		a.Verdict = VerdictBlocked
		a.Reason = strings.Join(over, "; ")
		for _, c := range a.Callers {
			if c.Calls > 0 {
				blocking = append(blocking, c)
			}
		}
	case unknownRevision || a.Calls > 0 && (long(a.MaxSessionAgeS) || isPrivileged(a.MaxPrivilege) || (!o.UnknownSafe && len(unknown) > 0)):
		a.Verdict = VerdictAtRisk
		var why []string
		if long(a.MaxSessionAgeS) {
			why = append(why, fmt.Sprintf("a session %s old (long-running from %s)", humanize.Age(*a.MaxSessionAgeS), humanize.Age(longS)))
		}
		if isPrivileged(a.MaxPrivilege) {
			why = append(why, fmt.Sprintf("%s calls", a.MaxPrivilege))
		}
		if !o.UnknownSafe && len(unknown) > 0 {
			why = append(why, strings.Join(unknown, " and ")+" (unknown, not assumed safe)")
		}
		switch {
		case a.Calls == 0:
			a.Reason = "no calls through it in the window, but " + revision + " (unknown, not assumed safe)"
		case len(why) == 0:
			a.Reason = fmt.Sprintf("%s within the threshold, but %s (unknown, not assumed safe)", calls(a.Calls), revision)
		default:
			a.Reason = fmt.Sprintf("%s within the threshold, but its callers include %s", calls(a.Calls), strings.Join(why, " and "))
			if unknownRevision {
				a.Reason += ", and " + revision + " (unknown, not assumed safe)"
			}
		}
		for _, c := range a.Callers {
			if risky(c) {
				blocking = append(blocking, c)
			}
		}
	case a.Calls == 0:
		a.Verdict = VerdictReady
		a.Reason = "no calls in the window"
		if a.UnknownRevisionCalls > 0 {
			a.Reason += "; " + revision + ", judged safe as asked"
		}
	default:
		a.Verdict = VerdictReady
		age, privilege := "of unknown age", "unknown privilege"
		if a.MaxSessionAgeS != nil {
			age = "at most " + humanize.Age(*a.MaxSessionAgeS) + " old"
		}
		if a.MaxPrivilege != "" {
			privilege = a.MaxPrivilege + " privilege"
		}
		a.Reason = fmt.Sprintf("%s within the threshold, from sessions %s with %s", calls(a.Calls), age, privilege)
		if a.UnknownRevisionCalls > 0 {
			unknown = append(unknown, calls(a.UnknownRevisionCalls)+" to "+a.Tool+" without a client revision")
		}
		if len(unknown) > 0 {
			a.Reason += "; " + strings.Join(unknown, " and ") + ", judged safe as asked"
		}
	}
	if a.WindowEnd != nil && a.WindowEnded && a.Verdict != VerdictReady {
		a.Reason += fmt.Sprintf("; its declared window ended %s", a.WindowEnd.UTC().Format(time.RFC3339))
	}
	if len(blocking) > o.TopClients {
		blocking = blocking[:o.TopClients]
	}
	a.BlockingClients = append([]apiv1.ClientUsage{}, blocking...)
}

// unknowns says, in words, which calls did not say their session age or
// privilege: "3 calls without a session age".
func unknowns(a *apiv1.AdapterRow) []string {
	var u []string
	if a.UnknownAgeCalls > 0 {
		u = append(u, calls(a.UnknownAgeCalls)+" without a session age")
	}
	if a.UnknownPrivilegeCalls > 0 {
		u = append(u, calls(a.UnknownPrivilegeCalls)+" without a privilege")
	}
	return u
}

func calls(n uint64) string { return fmt.Sprintf("%d %s", n, humanize.Plural(n, "call", "calls")) }
