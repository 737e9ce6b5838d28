package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/queries"
)

// The registry's endpoints.
const (
	revisionsPath = "/api/v1/tools/:tool/revisions"
	diffPath      = "/api/v1/tools/:tool/diff"
	deployedPath  = "/api/v1/deployed"
	servicesPath  = "/api/v1/deployed/services"
)

var (
	pDiffOld = param{name: apiv1.ParamOld, schema: strSchema, example: "1", desc: "The older revision of a diff (required)."}
	pDiffNew = param{name: apiv1.ParamNew, schema: strSchema, example: "2", desc: "The newer revision of a diff (required)."}
)

// revisionsEndpoint and diffEndpoint describe the registry's endpoints for
// the OpenAPI document and for fail.
var (
	revisionsEndpoint = &endpoint{
		path: "/api/v1/tools/{tool}/revisions", report: "revisions", operationID: "getToolRevisions", tag: "registry", scope: auth.ScopeRead,
		summary: "The history of a tool's advertised revisions",
		description: "From the registry of advertised definitions (`dev.mcpdrift.advertised`), per service and environment, the tool's revisions " +
			"in the order they were first advertised: first and last advertised, by how many instances, how long each overlapped the revision " +
			"before it (a rolling deploy serving both: from its first advertisement to the previous one's last, as fresh as the servers' " +
			"re-advertisements), and the change from the one before as the release check classifies it, with its reasons. No window: the " +
			"registry keeps every revision.",
		params: []param{pService, pEnvironment},
	}
	diffEndpoint = &endpoint{
		path: "/api/v1/tools/{tool}/diff", report: "diff", operationID: "getToolDiff", tag: "registry", scope: auth.ScopeRead,
		summary: "The change between two advertised revisions of a tool",
		description: "Compares two revisions the registry holds (`old`, `new`) as the release check does: the change class, the verdict and why, " +
			"whether every argument object valid under `old` stays valid under `new` (with a counterexample when not), the findings, and a line " +
			"diff of the two definitions printed as indented JSON. With several services or environments, `service` and `environment` choose " +
			"whose definitions; without, the first that advertised each revision.",
		params: []param{pDiffOld, pDiffNew, pService, pEnvironment},
	}
	deployedEndpoint = &endpoint{
		path: deployedPath, report: "deployed", operationID: "getDeployed", tag: "registry", scope: auth.ScopeRead,
		summary: "What a service advertises now",
		description: "From the registry of advertised definitions (`dev.mcpdrift.advertised`), the tools `service` (required) advertises now in " +
			"`environment` (required when the service advertises in several): per tool, the revisions last advertised within 10 minutes of " +
			"the service's latest advertisement there, as a tools/list result (`list`) holding each tool's definition under the newest of " +
			"them, its revision in `_meta` (`dev.mcpdrift/revision`). A tool advertised under several revisions at once (a deploy in " +
			"progress) is listed in `mid_deploy`. The release check without an old list (`POST /api/v1/check`) compares against this list; " +
			"`mcpdrift drifttest -deployed` sends the calls it accepts. A service that advertised nothing, or one in several environments " +
			"without `environment`, is a 400 naming the parameter.",
		params: []param{pService, pEnvironment},
	}
	servicesEndpoint = &endpoint{
		path: servicesPath, report: "services", operationID: "getDeployedServices", tag: "registry", scope: auth.ScopeRead,
		summary: "The services whose deployed list the registry knows",
		description: "From the registry of advertised definitions (`dev.mcpdrift.advertised`), every service and environment that advertised " +
			"tools, sorted by service then environment: its latest advertisement, how many tools it advertises now and the tools advertised " +
			"under several revisions at once (`mid_deploy`), as `GET /api/v1/deployed` would answer for it. What the console's release " +
			"check offers as the old list. No window: the registry keeps every revision.",
	}
)

// registryQuery checks an endpoint's parameters and returns them with the
// tenant; false once it has answered.
func (s *Server) registryQuery(c *gin.Context, e *endpoint) (query, string, bool) {
	if !s.allowed(c, e.scope) {
		return query{}, "", false
	}
	v, err := parseQuery(c.Request.URL.RawQuery)
	if err != nil {
		s.fail(c, e, err)
		return query{}, "", false
	}
	q := query{v: v, now: s.now().UTC()}
	if err := q.check(e.params); err != nil {
		s.fail(c, e, err)
		return query{}, "", false
	}
	tenant, ok := TenantFrom(c.Request.Context())
	if !ok {
		problem(c, http.StatusUnauthorized, "the request is bound to no tenant", "")
		return query{}, "", false
	}
	return q, tenant, true
}

// revisions answers GET /api/v1/tools/{tool}/revisions.
func (s *Server) revisions(c *gin.Context) {
	e := revisionsEndpoint
	q, tenant, ok := s.registryQuery(c, e)
	if !ok {
		return
	}
	tool := c.Param("tool")
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.QueryTimeout)
	defer cancel()
	rows, err := s.reports.ToolRevisions(ctx, queries.RegistryFilter{Tenant: tenant, Tools: []string{tool},
		Service: q.get(apiv1.ParamService), Environment: q.get(apiv1.ParamEnvironment)})
	if err != nil {
		s.fail(c, e, err)
		return
	}
	h := registry.Histories(rows)
	if h == nil {
		h = []apiv1.RevisionHistory{}
	}
	writeJSON(c, http.StatusOK, apiv1.RevisionsBody{Tool: tool, Histories: h})
}

// diff answers GET /api/v1/tools/{tool}/diff.
func (s *Server) diff(c *gin.Context) {
	e := diffEndpoint
	q, tenant, ok := s.registryQuery(c, e)
	if !ok {
		return
	}
	from, to := q.get(apiv1.ParamOld), q.get(apiv1.ParamNew)
	for _, p := range []struct{ name, v string }{{apiv1.ParamOld, from}, {apiv1.ParamNew, to}} {
		if p.v == "" {
			problem(c, http.StatusBadRequest, "required: the revision to compare", p.name)
			return
		}
	}
	tool := c.Param("tool")
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.QueryTimeout)
	defer cancel()
	rows, err := s.reports.ToolRevisions(ctx, queries.RegistryFilter{Tenant: tenant, Tools: []string{tool},
		Service: q.get(apiv1.ParamService), Environment: q.get(apiv1.ParamEnvironment)})
	if err != nil {
		s.fail(c, e, err)
		return
	}
	d, err := registry.DiffOf(rows, from, to)
	if errors.Is(err, registry.ErrUnknownRevision) {
		problem(c, http.StatusNotFound, fmt.Sprintf("tool %q: %v", tool, err), "")
		return
	}
	if err != nil {
		s.fail(c, e, err)
		return
	}
	writeJSON(c, http.StatusOK, d)
}

// deployed answers GET /api/v1/deployed.
func (s *Server) deployed(c *gin.Context) {
	e := deployedEndpoint
	q, tenant, ok := s.registryQuery(c, e)
	if !ok {
		return
	}
	service := q.get(apiv1.ParamService)
	if service == "" {
		problem(c, http.StatusBadRequest, "required: the service whose advertised tools to list", apiv1.ParamService)
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.QueryTimeout)
	defer cancel()
	d, ok := s.deployedList(ctx, c, e, tenant, service, q.get(apiv1.ParamEnvironment))
	if !ok {
		return
	}
	writeJSON(c, http.StatusOK, d)
}

// deployedList returns what service advertises now in environment (or,
// when "", in its only one), from the registry: the old list of a check
// that sent none, and the answer of GET /api/v1/deployed. It answers for
// endpoint e, and returns false, when it cannot tell.
func (s *Server) deployedList(ctx context.Context, c *gin.Context, e *endpoint, tenant, service, environment string) (*registry.Deployed, bool) {
	rows, err := s.reports.ToolRevisions(ctx, queries.RegistryFilter{Tenant: tenant, Service: service, Environment: environment})
	if err != nil {
		s.fail(c, e, err)
		return nil, false
	}
	deployed, err := registry.DeployedNow(rows, registry.DefaultFreshness)
	if err != nil {
		s.fail(c, e, err)
		return nil, false
	}
	switch len(deployed) {
	case 0:
		where := ""
		if environment != "" {
			where = fmt.Sprintf(" in environment %q", environment)
		}
		problem(c, http.StatusBadRequest, fmt.Sprintf("service %q has advertised no tool definition (dev.mcpdrift.advertised)%s in the registry", service, where), "service")
		return nil, false
	case 1:
		return &deployed[0], true
	}
	envs := make([]string, len(deployed))
	for i, d := range deployed {
		envs[i] = d.Environment
	}
	problem(c, http.StatusBadRequest, fmt.Sprintf("service %q advertises in %d environments (%s): choose one", service, len(envs), strings.Join(envs, ", ")), "environment")
	return nil, false
}

// services answers GET /api/v1/deployed/services.
func (s *Server) services(c *gin.Context) {
	e := servicesEndpoint
	_, tenant, ok := s.registryQuery(c, e)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.QueryTimeout)
	defer cancel()
	rows, err := s.reports.ToolRevisions(ctx, queries.RegistryFilter{Tenant: tenant})
	if err != nil {
		s.fail(c, e, err)
		return
	}
	services, err := registry.Services(rows, registry.DefaultFreshness)
	if err != nil {
		s.fail(c, e, err)
		return
	}
	writeJSON(c, http.StatusOK, apiclient.ServicesBody{Services: services})
}
