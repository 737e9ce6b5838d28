package apiclient

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/humanize"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

// DescribeThresholds says in words what th allows.
func DescribeThresholds(th apiv1.Thresholds) string {
	var parts []string
	if th.MaxCalls != nil {
		parts = append(parts, fmt.Sprintf("at most %d calls", *th.MaxCalls))
	}
	if th.MaxShare != nil {
		parts = append(parts, "at most "+humanize.Percent(*th.MaxShare)+" of the tool's calls")
	}
	unknown := "put an adapter at risk"
	if th.UnknownCallers == "safe" {
		unknown = "count as safe"
	}
	return fmt.Sprintf("retirement allows %s; sessions from %s count as long-running; calls without a session age, a privilege or a client revision %s",
		strings.Join(parts, " and "), humanize.Age(th.LongSessionS), unknown)
}

// CheckBody is the JSON body POST /api/v1/check answers: the release check
// of the change, tool by tool, weighed by the usage of each tool's old
// revision over the window.
type CheckBody struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Pass is true when every tool's change is safe: a release pipeline
	// goes on.
	Pass bool `json:"pass"`
	// Tools are the checks, tool by tool.
	Tools []toolchange.Change `json:"tools"`
	// AuthorityFields are the field names the check treated as widening
	// or redirecting an action.
	AuthorityFields []string `json:"authority_fields"`
	// UnknownCallers says how the calls that did not say which revision
	// they were planned with were judged: at_risk or safe.
	UnknownCallers string `json:"unknown_callers"`
	// OldCache is the old list's cache hint (ttlMs, cacheScope), absent
	// when it had none.
	OldCache *toolchange.Cache `json:"old_cache,omitempty"`
	// Deployed is, when the request sent no old list, what the service
	// advertises now in the environment, from the registry: the old list
	// of the check, and the tools mid-deploy.
	Deployed *registry.Deployed `json:"deployed,omitempty"`
}

// Report returns the check as the toolchange report it carries.
func (b CheckBody) Report() toolchange.Report {
	return toolchange.Report{Tools: b.Tools, AuthorityFields: b.AuthorityFields, From: &b.From, To: &b.To, UnknownCallers: b.UnknownCallers,
		OldCache: b.OldCache}
}

// ServicesBody is the JSON body GET /api/v1/deployed/services answers:
// every service and environment the registry of advertised definitions
// holds.
type ServicesBody struct {
	Services []registry.Service `json:"services"`
}
