package queries

import (
	"context"
	"time"

	"github.com/mcpdrift/mcpdrift/store"
)

// ToolRevisionRow is one revision of a tool as one service advertised it
// in one environment: the registry of advertised definitions
// (tool_revisions).
type ToolRevisionRow struct {
	Tool        string `json:"tool"`
	Service     string `json:"service"`
	Environment string `json:"environment"`
	Revision    string `json:"revision"`
	// Definition is the latest definition advertised under the revision,
	// JSON (dev.mcpdrift.tool.definition).
	Definition      string    `json:"definition"`
	FirstAdvertised time.Time `json:"first_advertised"`
	LastAdvertised  time.Time `json:"last_advertised"`
	// Instances are the service instances that advertised it, sorted;
	// instances that sent no service.instance.id are not listed.
	Instances []string `json:"instances"`
	// Advertisements is how many advertisements were merged into the row.
	Advertisements uint64 `json:"advertisements"`
	// ListTTLMs is the longest ttlMs of the tools/list results the
	// revision was advertised in (SEP-2549): how long a client may keep a
	// list holding it; ListCacheScope the cacheScope sent with that ttl.
	// 0 and "" when none carried a hint.
	ListTTLMs      int64  `json:"list_ttl_ms"`
	ListCacheScope string `json:"list_cache_scope"`
}

// RegistryFilter selects rows of the registry. Tenant is required; empty
// fields match everything.
type RegistryFilter struct {
	Tenant      string
	Tools       []string
	Service     string
	Environment string
}

// ToolRevisions returns the registry's rows for f, by tool, service and
// environment, each one's revisions in the order they were first
// advertised. It has no window: the registry keeps every revision.
func (r *Runner) ToolRevisions(ctx context.Context, f RegistryFilter) ([]ToolRevisionRow, error) {
	if f.Tenant == "" {
		return nil, ErrInvalidFilter
	}
	tools := f.Tools
	if tools == nil {
		tools = []string{}
	}
	c := call{params: store.Params{}.String("tenant", f.Tenant).Strings("tools", tools),
		shape: shape{Service: f.Service != "", Environment: f.Environment != ""}}
	if f.Service != "" {
		c.params.String("service", f.Service)
	}
	if f.Environment != "" {
		c.params.String("environment", f.Environment)
	}
	var rows []ToolRevisionRow
	if err := r.run(ctx, "tool_revisions", c, &rows); err != nil {
		return nil, err
	}
	return rows, nil
}
