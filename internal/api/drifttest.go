package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/drifttest"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/render"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

// driftTestPath runs the drift test (POST) and describes its settings
// (GET).
const driftTestPath = "/api/v1/drifttest"

// DriftTestConfig configures the drift test endpoint. It sends real
// tools/call requests to the MCP server a request names, so where it may
// send them is the operator's configuration, never the request's.
type DriftTestConfig struct {
	// AllowHosts are the hosts (a name, or name:port, matched ignoring
	// case) whose MCP servers a drift test may call, as the CLI's
	// -allow-host takes them; empty turns the endpoint off.
	AllowHosts []string
	// MaxCallsPerTool is the most calls per tool, both passes together,
	// a request may ask for; a request that names none gets
	// DefaultMaxCalls, or this when lower.
	MaxCallsPerTool int
	// Timeout bounds one drift test: listing the server's tools and every
	// call. It must be below api.write-timeout.
	Timeout time.Duration
}

// DefaultMaxCalls is the calls per tool of a request that names none:
// mcpdrift drifttest's -max-calls default.
const DefaultMaxCalls = 6

// DefaultDriftTestConfig returns the drift test endpoint's defaults: off.
func DefaultDriftTestConfig() DriftTestConfig {
	return DriftTestConfig{MaxCallsPerTool: DefaultMaxCalls, Timeout: time.Minute}
}

// RegisterFlags binds c's fields to flags of fs under api.drifttest.*.
func (c *DriftTestConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.Func("api.drifttest.allow-host", "comma-separated hosts (name or name:port) whose MCP servers POST /api/v1/drifttest may send real calls to; "+
		"empty (the default) turns the endpoint off", func(v string) error {
		c.AllowHosts = nil
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				c.AllowHosts = append(c.AllowHosts, h)
			}
		}
		return nil
	})
	fs.IntVar(&c.MaxCallsPerTool, "api.drifttest.max-calls", c.MaxCallsPerTool, "the most calls per tool a drift test request may ask for")
	fs.DurationVar(&c.Timeout, "api.drifttest.timeout", c.Timeout, "longest one drift test may run, listing and calls together (less than api.write-timeout)")
}

// Validate reports the first invalid field by name.
func (c DriftTestConfig) Validate() error {
	for _, h := range c.AllowHosts {
		if strings.ContainsAny(h, "/ ") {
			return fmt.Errorf("api.drifttest.allow-host: %q is not a host or host:port", h)
		}
	}
	switch {
	case c.MaxCallsPerTool < 1:
		return fmt.Errorf("api.drifttest.max-calls: must be at least 1, not %d", c.MaxCallsPerTool)
	case c.Timeout <= 0:
		return fmt.Errorf("api.drifttest.timeout: must be positive, not %v", c.Timeout)
	}
	return nil
}

// DriftTestRequest is the JSON body of POST /api/v1/drifttest. Unknown
// fields are refused: a misspelt dry_run must not send real calls.
//
// It and the answers below live here rather than in internal/apiclient,
// which drifttest imports: the answer holds a drifttest.Report.
type DriftTestRequest struct {
	// Server is the MCP endpoint under test (streamable HTTP), on a host
	// of the server's allow list.
	Server string `json:"server"`
	// Old is the tools/list an agent planned with; without it, Deployed
	// names the registry's list.
	Old json.RawMessage `json:"old,omitempty"`
	// Deployed takes the old list from the registry: what the service
	// advertises now.
	Deployed *DriftTestDeployed `json:"deployed,omitempty"`
	// MaxCalls bounds the calls per tool; 0 means DefaultMaxCalls.
	MaxCalls int `json:"max_calls,omitempty"`
	// DryRun lists the server's tools and plans the calls, sending none.
	DryRun bool `json:"dry_run,omitempty"`
	// AuthorityFields tune the release check; absent means the default.
	AuthorityFields []string `json:"authority_fields,omitempty"`
}

// DriftTestDeployed names the registry's list a drift test takes as old.
type DriftTestDeployed struct {
	Service     string `json:"service"`
	Environment string `json:"environment,omitempty"`
}

// DriftTestBody is the answer of POST /api/v1/drifttest.
type DriftTestBody struct {
	// Pass is true when every call sent passed (always, in a dry run):
	// the CLI's exit 0.
	Pass bool `json:"pass"`
	// Failures counts the calls that broke the seed's rules.
	Failures int `json:"failures"`
	// Report is what mcpdrift drifttest -format json prints.
	Report drifttest.Report `json:"report"`
}

// DriftTestSettings is the answer of GET /api/v1/drifttest: whether the
// request's token may run a drift test here, and the limits. Any token of
// the tenant may ask, so that the console can say why its form is off;
// the allowed hosts are shown only to a token that may run one.
type DriftTestSettings struct {
	// Enabled says that the server was started with hosts to call.
	Enabled bool `json:"enabled"`
	// Allowed says that the request's token has the drifttest scope
	// (always, without tokens).
	Allowed bool `json:"allowed"`
	// Detail says why a drift test cannot run, and what to change.
	Detail string `json:"detail,omitempty"`
	// AllowHosts are the hosts a drift test may call; empty unless
	// Enabled and Allowed.
	AllowHosts []string `json:"allow_hosts"`
	// MaxCallsPerTool is the most calls per tool a request may ask for,
	// DefaultMaxCalls what one that names none gets.
	MaxCallsPerTool int `json:"max_calls_per_tool"`
	DefaultMaxCalls int `json:"default_max_calls"`
	// TimeoutSeconds bounds one drift test.
	TimeoutSeconds float64 `json:"timeout_s"`
}

// driftTestEndpoint describes the drift test for the OpenAPI document.
var driftTestEndpoint = &endpoint{
	path: driftTestPath, report: "drifttest", operationID: "driftTest", tag: "drifttest", scope: auth.ScopeDriftTest,
	summary: "Run the drift test against an MCP server: SENDS REAL CALLS",
	description: "The drift test of `mcpdrift drifttest`, run by this server: it lists the tools of the MCP server `server` (streamable HTTP) now " +
		"and, for each tool that changed or was removed since the old list (`old`, or what `deployed.service` advertises now in " +
		"`deployed.environment` from the registry of advertised definitions), SENDS REAL tools/call REQUESTS that the old input schema accepts, " +
		"at most `max_calls` per tool: once as a client that declares the old revision in _meta, once as a stock client. Each answer is " +
		"judged by the seed's rules, with the code and verdicts of the CLI. `dry_run` lists the tools and plans the calls without sending any. " +
		"The endpoint is off unless the server was started with `-api.drifttest.allow-host`; a `server` on any other host is refused with " +
		"400 before anything is sent, and so is a redirect to one. One drift test runs at a time per process (429 while one runs), within " +
		"`-api.drifttest.timeout` (504 beyond). With tokens it needs the `drifttest` scope, and `read` too for `deployed`.",
}

// driftTestOff is the detail of the problem the endpoint answers while
// it is off.
const driftTestOff = "the drift test endpoint is off: it sends real tools/call requests, so it runs only against hosts the operator names; " +
	"start serve or api with -api.drifttest.allow-host HOST[,HOST...] (env MCPDRIFT_API_DRIFTTEST_ALLOW_HOST), naming test or staging servers only"

// driftTestSettings answers GET /api/v1/drifttest.
func (s *Server) driftTestSettings(c *gin.Context) {
	dc := s.cfg.DriftTest
	out := DriftTestSettings{Enabled: len(dc.AllowHosts) > 0, Allowed: true, AllowHosts: []string{}, MaxCallsPerTool: dc.MaxCallsPerTool,
		DefaultMaxCalls: min(DefaultMaxCalls, dc.MaxCallsPerTool), TimeoutSeconds: dc.Timeout.Seconds()}
	if s.tokens != nil {
		p, ok := auth.FromContext(c.Request.Context())
		out.Allowed = ok && p.Has(auth.ScopeDriftTest)
		if !out.Allowed {
			out.Detail = fmt.Sprintf("running a drift test needs a token with the %s scope; token %s has %v", auth.ScopeDriftTest, p.TokenID, p.Scopes)
		}
	}
	switch {
	case !out.Enabled:
		out.Detail = driftTestOff
	case out.Allowed:
		out.AllowHosts = dc.AllowHosts
	}
	writeJSON(c, http.StatusOK, out)
}

// driftTest answers POST /api/v1/drifttest. Everything that can be
// refused is refused before a request leaves: the scope, the endpoint
// being off, the body, the host, the old list.
func (s *Server) driftTest(c *gin.Context) {
	e := driftTestEndpoint
	if !s.allowed(c, e.scope) {
		return
	}
	dc := s.cfg.DriftTest
	if len(dc.AllowHosts) == 0 {
		problem(c, http.StatusNotFound, driftTestOff, "")
		return
	}
	tenant, ok := TenantFrom(c.Request.Context())
	if !ok {
		problem(c, http.StatusUnauthorized, "the request is bound to no tenant", "")
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
	var req DriftTestRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		problem(c, http.StatusBadRequest, fmt.Sprintf("cannot parse the request of %d bytes as a drift test request: %v", len(body), err), "")
		return
	}
	hasOld := len(req.Old) > 0 && string(req.Old) != "null"
	switch {
	case req.Server == "":
		problem(c, http.StatusBadRequest, "server: name the MCP endpoint under test, such as http://staging.internal:3000/mcp", "server")
		return
	case hasOld == (req.Deployed != nil):
		problem(c, http.StatusBadRequest, "give one old list: old (a tools/list result) or deployed (a service of the registry)", "old")
		return
	case req.Deployed != nil && req.Deployed.Service == "":
		problem(c, http.StatusBadRequest, "deployed.service: the service whose advertised list is the old one", "deployed")
		return
	case req.MaxCalls < 0 || req.MaxCalls > dc.MaxCallsPerTool:
		problem(c, http.StatusBadRequest, fmt.Sprintf("max_calls: want 1 to %d (-api.drifttest.max-calls), not %d", dc.MaxCallsPerTool, req.MaxCalls), "max_calls")
		return
	case req.MaxCalls == 0:
		req.MaxCalls = min(DefaultMaxCalls, dc.MaxCallsPerTool)
	}
	target := drifttest.Target{URL: req.Server}
	if err := target.Check(dc.AllowHosts); err != nil {
		detail := err.Error()
		if errors.Is(err, drifttest.ErrHostNotAllowed) {
			detail = fmt.Sprintf("%v: the drift test sends real calls, so this server calls only the hosts of -api.drifttest.allow-host (%s)",
				drifttest.ErrHostNotAllowed, strings.Join(dc.AllowHosts, ", "))
		}
		problem(c, http.StatusBadRequest, detail, "server")
		return
	}
	var deployed *registry.Deployed
	var old toolchange.List
	if req.Deployed != nil {
		// The registry's list is the tenant's data: a token that may only
		// run drift tests does not read it.
		if !s.allowed(c, auth.ScopeRead) {
			return
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.QueryTimeout)
		deployed, ok = s.deployedList(ctx, c, e, tenant, req.Deployed.Service, req.Deployed.Environment)
		cancel()
		if !ok {
			return
		}
		if old, err = drifttest.DeployedList(*deployed); err != nil {
			problem(c, http.StatusBadRequest, err.Error(), "deployed")
			return
		}
	} else if old, err = toolchange.Decode(req.Old); err != nil {
		problem(c, http.StatusBadRequest, "old: "+err.Error(), "old")
		return
	}

	select {
	case s.driftSlot <- struct{}{}:
		defer func() { <-s.driftSlot }()
	default:
		c.Header("Retry-After", "10")
		problem(c, http.StatusTooManyRequests, "a drift test is already running in this server: one runs at a time; retry once it ends", "")
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), dc.Timeout)
	defer cancel()
	start := time.Now()
	report, err := drifttest.Run(ctx, old, drifttest.Options{
		Target: target, AllowHosts: dc.AllowHosts, MaxCallsPerTool: req.MaxCalls, DryRun: req.DryRun,
		AuthorityFields: req.AuthorityFields, Version: s.version, CallTimeout: min(30*time.Second, dc.Timeout),
	})
	switch {
	case err != nil && c.Request.Context().Err() != nil:
		c.Abort() // the client went away: nobody reads the answer
		return
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		problem(c, http.StatusGatewayTimeout, fmt.Sprintf("the drift test of %s did not finish within %s (-api.drifttest.timeout)", req.Server, dc.Timeout), "")
		return
	case err != nil:
		problem(c, http.StatusBadGateway, fmt.Sprintf("the drift test of %s could not run: %v", req.Server, err), "server")
		return
	}
	report.Deployed = deployed
	principal, _ := auth.FromContext(c.Request.Context())
	s.log.Info("drift test", "server", req.Server, "dry_run", req.DryRun, "calls", len(report.Results), "failures", report.Failures(),
		"tenant", tenant, "token", principal.TokenID, "duration", time.Since(start).Round(time.Millisecond))
	c.Header("Vary", "Accept")
	if wantsMarkdown(c.GetHeader("Accept")) {
		// What mcpdrift drifttest prints, under where the old list came
		// from when the registry gave it.
		var buf bytes.Buffer
		if deployed != nil {
			err = deployed.WriteMarkdown(&buf)
		}
		if err == nil {
			err = report.Markdown(&buf)
		}
		if err != nil {
			s.log.Error("cannot render the drift test", "err", err)
			problem(c, http.StatusInternalServerError, "the drift test could not be rendered", "")
			return
		}
		c.Data(http.StatusOK, render.FormatMarkdown.ContentType(), buf.Bytes())
		return
	}
	writeJSON(c, http.StatusOK, DriftTestBody{Pass: report.Pass(), Failures: report.Failures(), Report: report})
}
