package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/auth"
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
	description: "Compares two tools/list results (the body's `old` and `new`) tool by tool, from the schemas alone: each change's class " +
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
	var req apiclient.CheckRequest
	if err := json.Unmarshal(body, &req); err != nil {
		problem(c, http.StatusBadRequest, fmt.Sprintf("cannot parse the request of %d bytes as a check request: %v", len(body), err), "")
		return
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
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.QueryTimeout)
	defer cancel()
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
	writeJSON(c, http.StatusOK, apiclient.CheckBody{
		From: f.From, To: f.To, Pass: report.Pass(), Tools: report.Tools, AuthorityFields: report.AuthorityFields,
		UnknownCallers: report.UnknownCallers, OldCache: report.OldCache,
	})
}
