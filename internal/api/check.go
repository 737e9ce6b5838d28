package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/render"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

// checkPath is the release check's endpoint.
const checkPath = "/api/v1/check"

// maxCheckBytes bounds a check request: two tools/list documents.
const maxCheckBytes = 2*toolchange.MaxListBytes + 64<<10

// checkParams are the query parameters of the release check: the window
// its usage is read over and the filters that apply to a whole fleet.
var checkParams = []param{pFrom, pTo, pWindow, pService, pEnvironment, pExcludeClient, pUnknownCallers}

// checkEndpoint describes the check for the OpenAPI document and for fail.
var checkEndpoint = &endpoint{
	path: checkPath, report: "check", operationID: "checkToolsList", tag: "reports", scope: auth.ScopeRead,
	summary: "Release check of a tools/list change",
	description: "Compares two tools/list results (the body's `old` and `new`; without `old`, what `service` advertises now in `environment`, " +
		"or its only environment, from the registry of advertised definitions, answered under `deployed` with the tools mid-deploy: " +
		"advertised under several revisions at once) tool by tool, from the schemas alone: each change's class " +
		"(additive, bounded_migration, semantic, authority, removal), why, whether every argument object valid under the old input schema " +
		"is still valid under the new one (yes, no with a counterexample, or cannot_decide), and the seed's rule that a semantic or authority " +
		"change keeping the tool's name is a violation, with the path to take. Each changed or removed tool is then weighed by the calls " +
		"planned with its old revision (the one the old list advertises) in the window: calls, sessions, runs, clients, the oldest session, " +
		"the highest privilege, stale rejections and those after a side effect, earlier notification propagation and automatic retries " +
		"across a semantic or authority change, and what the rollout would do to them; and by its calls that did not say which revision " +
		"they were planned with (unknown). A change that needs a decision is safe when no call in the window used the old revision or an " +
		"older one and none left its revision unsaid (or `unknown_callers=safe` judges those safe). `pass` is true when every change is safe.",
	params: checkParams,
}

// check answers POST /api/v1/check.
func (s *Server) check(c *gin.Context) {
	e := checkEndpoint
	if !s.allowed(c, e.scope) {
		return
	}
	v, err := parseQuery(c.Request.URL.RawQuery)
	if err != nil {
		s.fail(c, e, err)
		return
	}
	q := query{v: v, now: s.now().UTC()}
	if err := q.check(e.params); err != nil {
		s.fail(c, e, err)
		return
	}
	tenant, ok := TenantFrom(c.Request.Context())
	if !ok {
		problem(c, http.StatusUnauthorized, "the request is bound to no tenant", "")
		return
	}
	f, err := q.filter(tenant, true)
	if err != nil {
		s.fail(c, e, err)
		return
	}
	unknownSafe, err := q.unknownSafe()
	if err != nil {
		s.fail(c, e, err)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxCheckBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		problem(c, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request is larger than %d bytes", maxCheckBytes), "")
		return
	case err != nil:
		problem(c, http.StatusBadRequest, fmt.Sprintf("cannot read the request: %v", err), "")
		return
	}
	var req apiv1.CheckRequest
	if err := json.Unmarshal(body, &req); err != nil {
		problem(c, http.StatusBadRequest, fmt.Sprintf("cannot parse the request of %d bytes as a check request: %v", len(body), err), "")
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.QueryTimeout)
	defer cancel()
	var deployed *registry.Deployed
	if len(req.Old) == 0 || string(req.Old) == "null" {
		if f.Service == "" {
			problem(c, http.StatusBadRequest, "without an old list, the check needs the service whose advertised list is the old one", "service")
			return
		}
		if deployed, ok = s.deployedList(ctx, c, e, tenant, f.Service, f.Environment); !ok {
			return
		}
		req.Old = deployed.List
	}
	old, err := toolchange.Decode(req.Old)
	if err != nil {
		problem(c, http.StatusBadRequest, "old: "+err.Error(), "old")
		return
	}
	new, err := toolchange.Decode(req.New)
	if err != nil {
		problem(c, http.StatusBadRequest, "new: "+err.Error(), "new")
		return
	}
	report := toolchange.Compare(old, new, toolchange.Options{AuthorityFields: req.AuthorityFields})
	var tools []string
	for _, t := range report.Tools {
		if t.Status == toolchange.StatusChanged || t.Status == toolchange.StatusRemoved {
			tools = append(tools, t.Tool)
		}
	}
	usage, err := s.reports.CheckUsage(ctx, f, tools)
	if err != nil {
		s.fail(c, e, err)
		return
	}
	propagation, err := s.reports.Propagation(ctx, f)
	if err != nil {
		s.fail(c, e, err)
		return
	}
	report.Weigh(f.From, f.To, usage, propagation, toolchange.WeighOptions{UnknownSafe: unknownSafe})
	out := apiclient.CheckBody{
		From: f.From, To: f.To, Pass: report.Pass(), Tools: report.Tools, AuthorityFields: report.AuthorityFields,
		UnknownCallers: report.UnknownCallers, OldCache: report.OldCache, Deployed: deployed,
	}
	c.Header("Vary", "Accept")
	// Markdown, for a pull request, when asked for before JSON: what
	// mcpdrift check prints, under where the old list came from when
	// the registry gave it.
	if wantsMarkdown(c.GetHeader("Accept")) {
		var buf bytes.Buffer
		var err error
		if deployed != nil {
			err = deployed.WriteMarkdown(&buf)
		}
		if err == nil {
			err = out.Report().Markdown(&buf)
		}
		if err != nil {
			s.log.Error("cannot render the check", "err", err)
			problem(c, http.StatusInternalServerError, "the check could not be rendered", "")
			return
		}
		c.Data(http.StatusOK, render.FormatMarkdown.ContentType(), buf.Bytes())
		return
	}
	writeJSON(c, http.StatusOK, out)
}

// wantsMarkdown reports whether accept names text/markdown before any JSON
// type.
func wantsMarkdown(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch strings.TrimSpace(mt) {
		case "text/markdown":
			return true
		case "application/json", "*/*", "application/*":
			return false
		}
	}
	return false
}
