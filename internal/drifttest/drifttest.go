package drifttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

// Options configure Run.
type Options struct {
	// Target is the server under test.
	Target Target
	// AllowHosts are the hosts a URL target may name (Target.Check).
	AllowHosts []string
	// MaxCallsPerTool bounds the calls sent to each tool, both passes
	// together; it must be at least 1.
	MaxCallsPerTool int
	// DryRun lists the server's tools and plans the calls, but sends none.
	DryRun bool
	// AuthorityFields tune the release check (toolchange.Options).
	AuthorityFields []string
	// Version is the client version sent in initialize.
	Version string
	// CallTimeout bounds each call; 0 means 30 seconds.
	CallTimeout time.Duration
	// RunID is the run id of the declared pass (mcpgo.MetaRunID) and
	// prefixes its request ids; "" means one from the clock.
	RunID string
	// Audit, when set, confirms each answer with the server's call event
	// read back from mcpdrift's audit.
	Audit *Audit
	// Sample, with Audit, adds per tool up to this many arguments agents
	// sent when planning with the old revision (Audit.Sample).
	Sample int
	// Reverse, with Audit, names an adapter to test as if it were gone:
	// only the calls it serves (its tool, planned with its From revision,
	// which the old list must define) are sent, to a server built without
	// it; the report adds who its retirement would hit, from the adapter
	// retirement report over ReverseWindow ("" for the report's default).
	Reverse       string
	ReverseWindow string
}

// Run runs the drift test of old, the list an agent planned with, against
// the server opts.Target: it checks the target, lists the server's tools,
// plans the calls and, unless a dry run, sends and judges them. An error
// means the test could not run (a refused target, an unreachable server);
// failures of the server are in the report.
func Run(ctx context.Context, old toolchange.List, opts Options) (Report, error) {
	if opts.MaxCallsPerTool < 1 {
		return Report{}, fmt.Errorf("max calls per tool: want at least 1, not %d", opts.MaxCallsPerTool)
	}
	if err := opts.Target.Check(opts.AllowHosts); err != nil {
		return Report{}, err
	}
	if opts.Target.URL != "" && opts.Target.HTTPClient == nil {
		opts.Target.HTTPClient = &http.Client{Timeout: time.Minute, CheckRedirect: allowRedirect(opts.AllowHosts)}
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 30 * time.Second
	}
	if opts.RunID == "" {
		opts.RunID = fmt.Sprintf("drifttest-%d", time.Now().UnixNano())
	}
	_, new, err := opts.Target.List(ctx, opts.Version)
	if err != nil {
		return Report{}, err
	}
	check := toolchange.Compare(old, new, toolchange.Options{AuthorityFields: opts.AuthorityFields})
	var reverse *Reverse
	if opts.Reverse != "" {
		if opts.Audit == nil {
			return Report{}, fmt.Errorf("reverse %s: the adapter's usage is read from mcpdrift: name its API", opts.Reverse)
		}
		if reverse, err = opts.Audit.retirement(ctx, opts.Reverse, opts.ReverseWindow); err != nil {
			return Report{}, err
		}
		if check, err = reverseScope(check, old, reverse); err != nil {
			return Report{}, err
		}
	}
	var recorded map[string][]json.RawMessage
	if opts.Audit != nil && opts.Sample > 0 {
		if recorded, err = opts.Audit.Sample(ctx, old, check, opts.Sample); err != nil {
			return Report{}, err
		}
	}
	calls, err := Plan(old, new, check, opts.MaxCallsPerTool, recorded)
	if err != nil {
		return Report{}, err
	}
	r := Report{Server: opts.Target.String(), DryRun: opts.DryRun, MaxCallsPerTool: opts.MaxCallsPerTool, Reverse: reverse,
		Unchanged: []string{}, Results: Schedule(calls, Passes, opts.MaxCallsPerTool, opts.RunID)}
	for _, c := range check.Tools {
		if c.Status == toolchange.StatusUnchanged {
			r.Unchanged = append(r.Unchanged, c.Tool)
		}
	}
	if r.Results == nil {
		r.Results = []Result{}
	}
	if opts.DryRun {
		return r, nil
	}
	if err := Send(ctx, opts.Target, opts.Version, opts.RunID, r.Results, opts.CallTimeout); err != nil {
		return Report{}, fmt.Errorf("cannot send the calls: %w", err)
	}
	if opts.Audit != nil {
		if err := opts.Audit.Confirm(ctx, opts.RunID, r.Results); err != nil {
			return Report{}, err
		}
		r.Audited = true
	}
	if reverse != nil {
		judgeReverse(r.Results, opts.Reverse)
	}
	if old.Cache != nil && old.Cache.TTLMs > 0 {
		cache := *old.Cache
		r.OldCache = &cache
		for i := range r.Results {
			if res := &r.Results[i]; res.Verdict != "" {
				res.Reason += "; " + cache.Reason()
			}
		}
	}
	return r, nil
}

// allowRedirect is the CheckRedirect of a URL target's HTTP client: a
// redirect is followed only to a host in allowed, so that a server on an
// allowed host cannot send the calls on to one that is not.
func allowRedirect(allowed []string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return fmt.Errorf("stopped after %d redirects", len(via))
		}
		if err := (Target{URL: req.URL.String()}).Check(allowed); err != nil {
			return fmt.Errorf("redirect refused: %w", err)
		}
		return nil
	}
}
