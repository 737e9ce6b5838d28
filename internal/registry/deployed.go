package registry

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
	"github.com/mcpdrift/mcpdrift/queries"
)

// DefaultFreshness is how recent an advertisement must be, before a
// service's latest one, for its revision to count as advertised now: two
// periods of a server that re-advertises every five minutes.
const DefaultFreshness = 10 * time.Minute

// Deployed is what one service advertises now in one environment.
type Deployed struct {
	Service     string `json:"service"`
	Environment string `json:"environment"`
	// At is the service's latest advertisement in the environment.
	At time.Time `json:"at"`
	// List is a tools/list result of the tools advertised now, each under
	// its latest revision, with the revision in _meta: what the release
	// check takes as the old list. It carries ttlMs and cacheScope when a
	// revision advertised now was listed with a cache hint: the longest
	// one, since a client may hold the list any of the instances sent.
	List json.RawMessage `json:"list"`
	// MidDeploy lists the tools whose instances advertise more than one
	// revision now: a deploy in progress.
	MidDeploy []MidDeploy `json:"mid_deploy"`
}

// MidDeploy is a tool advertised under several revisions at once.
type MidDeploy struct {
	Tool string `json:"tool"`
	// Revisions are the revisions advertised now, oldest first.
	Revisions []string `json:"revisions"`
}

// DeployedNow returns, per environment, what a service advertises now
// according to rows (queries.ToolRevisions of that service): the
// revisions last advertised within freshness of the service's latest
// advertisement in the environment. A tool with several such revisions
// is mid-deploy; the old list holds the one first advertised last.
func DeployedNow(rows []queries.ToolRevisionRow, freshness time.Duration) ([]Deployed, error) {
	type key struct{ service, env string }
	latest := map[key]time.Time{}
	var order []key
	for _, r := range rows {
		k := key{r.Service, r.Environment}
		if _, ok := latest[k]; !ok {
			order = append(order, k)
		}
		if r.LastAdvertised.After(latest[k]) {
			latest[k] = r.LastAdvertised
		}
	}
	var out []Deployed
	for _, k := range order {
		d := Deployed{Service: k.service, Environment: k.env, At: latest[k], MidDeploy: []MidDeploy{}}
		var tools []json.RawMessage
		current := map[string][]queries.ToolRevisionRow{}
		var names []string
		var ttl int64
		var scope string
		for _, r := range rows {
			if r.Service != k.service || r.Environment != k.env || latest[k].Sub(r.LastAdvertised) > freshness {
				continue
			}
			if r.ListTTLMs > ttl || (r.ListTTLMs == ttl && r.ListCacheScope > scope) {
				ttl, scope = r.ListTTLMs, r.ListCacheScope
			}
			if _, ok := current[r.Tool]; !ok {
				names = append(names, r.Tool)
			}
			current[r.Tool] = append(current[r.Tool], r)
		}
		for _, name := range names {
			revs := current[name]
			slices.SortStableFunc(revs, func(a, b queries.ToolRevisionRow) int { return a.FirstAdvertised.Compare(b.FirstAdvertised) })
			if len(revs) > 1 {
				m := MidDeploy{Tool: name}
				for _, r := range revs {
					m.Revisions = append(m.Revisions, r.Revision)
				}
				d.MidDeploy = append(d.MidDeploy, m)
			}
			last := revs[len(revs)-1]
			var def map[string]any
			if err := json.Unmarshal([]byte(last.Definition), &def); err != nil {
				return nil, fmt.Errorf("tool %q revision %s: definition of %d bytes: %w", last.Tool, last.Revision, len(last.Definition), err)
			}
			def["_meta"] = map[string]any{mcpgo.MetaRevision: last.Revision}
			raw, err := json.Marshal(def)
			if err != nil {
				return nil, fmt.Errorf("tool %q revision %s: %w", last.Tool, last.Revision, err)
			}
			tools = append(tools, raw)
		}
		if tools == nil {
			tools = []json.RawMessage{}
		}
		result := map[string]any{"tools": tools}
		if ttl > 0 {
			result["ttlMs"] = ttl
			if scope != "" {
				result["cacheScope"] = scope
			}
		}
		list, err := json.Marshal(result)
		if err != nil {
			return nil, err
		}
		d.List = list
		out = append(out, d)
	}
	return out, nil
}

// Service is a service that advertises tools in one environment, as
// DeployedNow finds it, without its list: what a person picks the old
// list of a release check from.
type Service struct {
	Service     string `json:"service"`
	Environment string `json:"environment"`
	// At is the service's latest advertisement in the environment.
	At time.Time `json:"at"`
	// Tools is how many tools it advertises now.
	Tools int `json:"tools"`
	// MidDeploy lists the tools advertised under more than one revision
	// now: a deploy in progress.
	MidDeploy []MidDeploy `json:"mid_deploy"`
}

// Services returns every service and environment rows (queries.ToolRevisions
// of a whole tenant) hold, sorted by service then environment, each with
// what DeployedNow says of it.
func Services(rows []queries.ToolRevisionRow, freshness time.Duration) ([]Service, error) {
	deployed, err := DeployedNow(rows, freshness)
	if err != nil {
		return nil, err
	}
	out := make([]Service, 0, len(deployed))
	for _, d := range deployed {
		var list struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(d.List, &list); err != nil {
			return nil, fmt.Errorf("service %q environment %q: list of %d bytes: %w", d.Service, d.Environment, len(d.List), err)
		}
		out = append(out, Service{Service: d.Service, Environment: d.Environment, At: d.At, Tools: len(list.Tools), MidDeploy: d.MidDeploy})
	}
	slices.SortFunc(out, func(a, b Service) int {
		if c := strings.Compare(a.Service, b.Service); c != 0 {
			return c
		}
		return strings.Compare(a.Environment, b.Environment)
	})
	return out, nil
}
