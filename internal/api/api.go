// Package api serves mcpdrift's HTTP API with gin: health and readiness,
// the versioned report endpoints under /api/v1 (JSON, or CSV, Markdown and
// text tables by content negotiation), their OpenAPI 3.1 document, and
// RFC 9457 problems for every error. The bodies it answers, and the client
// that reads them, are in internal/apiclient.
package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/console"
	"github.com/mcpdrift/mcpdrift/internal/render"
	"github.com/mcpdrift/mcpdrift/internal/selftrace"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
)

// Config configures the API server.
type Config struct {
	// Listen is the TCP address the API listens on.
	Listen string
	// ReadHeaderTimeout bounds how long a client may take to send headers.
	ReadHeaderTimeout time.Duration
	// QueryTimeout bounds one report query.
	QueryTimeout time.Duration
	// Tenant is the tenant every request is bound to while the API runs
	// without tokens.
	Tenant string
	// ReadTimeout bounds reading one request, headers and body.
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end
	// of its answer; it must exceed QueryTimeout.
	WriteTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle that long.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and headers.
	MaxHeaderBytes int
	// TLS, when its files are set, makes the API serve HTTPS, and with a
	// client CA file require client certificates.
	TLS auth.TLSConfig
	// DriftTest configures POST /api/v1/drifttest, which sends real calls
	// to MCP servers; off unless its allow list names a host.
	DriftTest DriftTestConfig
}

// DefaultConfig returns the API's defaults.
func DefaultConfig() Config {
	return Config{
		Listen:            "127.0.0.1:8080",
		ReadHeaderTimeout: 10 * time.Second,
		QueryTimeout:      30 * time.Second,
		Tenant:            store.DefaultTenant,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		DriftTest:         DefaultDriftTestConfig(),
	}
}

// RegisterFlags binds c's fields to flags of fs under api.*, with c's
// values as defaults.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Listen, "api.listen", c.Listen, "API listen address")
	fs.DurationVar(&c.QueryTimeout, "api.query-timeout", c.QueryTimeout, "timeout of one report query")
	fs.StringVar(&c.Tenant, "api.tenant", c.Tenant, "tenant every request is bound to while the API runs without tokens")
	fs.DurationVar(&c.ReadHeaderTimeout, "api.read-header-timeout", c.ReadHeaderTimeout, "longest a client may take to send its request headers")
	fs.DurationVar(&c.ReadTimeout, "api.read-timeout", c.ReadTimeout, "longest a client may take to send its whole request")
	fs.DurationVar(&c.WriteTimeout, "api.write-timeout", c.WriteTimeout, "longest from the end of the request headers to the end of the answer (more than api.query-timeout)")
	fs.DurationVar(&c.IdleTimeout, "api.idle-timeout", c.IdleTimeout, "keep-alive connections idle this long are closed")
	fs.IntVar(&c.MaxHeaderBytes, "api.max-header-bytes", c.MaxHeaderBytes, "largest request line and headers accepted (431 beyond)")
	c.TLS.RegisterFlags(fs, "api.tls", "the API")
	c.DriftTest.RegisterFlags(fs)
}

// Validate reports the first invalid field by name.
func (c Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("api.listen: invalid address %q: %w", c.Listen, err)
	}
	if c.QueryTimeout <= 0 {
		return fmt.Errorf("api.query-timeout: must be positive, not %v", c.QueryTimeout)
	}
	if err := auth.ValidTenant(c.Tenant); err != nil {
		return fmt.Errorf("api.tenant: %w", err)
	}
	switch {
	case c.ReadHeaderTimeout <= 0:
		return fmt.Errorf("api.read-header-timeout: must be positive, not %v", c.ReadHeaderTimeout)
	case c.ReadTimeout <= 0:
		return fmt.Errorf("api.read-timeout: must be positive, not %v", c.ReadTimeout)
	case c.WriteTimeout <= c.QueryTimeout:
		return fmt.Errorf("api.write-timeout: must exceed api.query-timeout (%v), not %v", c.QueryTimeout, c.WriteTimeout)
	case c.IdleTimeout <= 0:
		return fmt.Errorf("api.idle-timeout: must be positive, not %v", c.IdleTimeout)
	case c.MaxHeaderBytes < 4<<10:
		return fmt.Errorf("api.max-header-bytes: must be at least 4096, not %d", c.MaxHeaderBytes)
	}
	if err := c.DriftTest.Validate(); err != nil {
		return err
	}
	if c.WriteTimeout <= c.DriftTest.Timeout {
		return fmt.Errorf("api.write-timeout: must exceed api.drifttest.timeout (%v), not %v", c.DriftTest.Timeout, c.WriteTimeout)
	}
	return c.TLS.Validate("api.tls")
}

// Pinger reports whether the store can serve queries.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Reports runs the report queries; *queries.Runner implements it.
type Reports interface {
	Tools(ctx context.Context, f queries.Filter) ([]apiv1.ToolRow, error)
	StaleUsage(ctx context.Context, f queries.Filter) ([]apiv1.StaleUsageRow, error)
	Rejections(ctx context.Context, f queries.Filter) ([]apiv1.RejectionRow, error)
	Repairs(ctx context.Context, f queries.Filter) ([]apiv1.RepairRow, error)
	AdapterRetirement(ctx context.Context, f queries.Filter, o queries.RetirementOptions) ([]apiv1.AdapterRow, error)
	Propagation(ctx context.Context, f queries.Filter) ([]apiv1.PropagationRow, error)
	Violations(ctx context.Context, f queries.Filter, p queries.Page) (queries.ViolationPage, error)
	RevisionSources(ctx context.Context, f queries.Filter) ([]apiv1.RevisionSourceRow, error)
	ContractErrors(ctx context.Context, f queries.Filter) ([]apiv1.ContractErrorRow, error)
	// ToolRevisions reads the registry of advertised definitions.
	ToolRevisions(ctx context.Context, f queries.RegistryFilter) ([]queries.ToolRevisionRow, error)
	Audit(ctx context.Context, f queries.AuditFilter, p queries.Page) (queries.AuditPage, error)
	// Window is the window every report over [from, to) reads.
	Window(from, to time.Time) (time.Time, time.Time)
	ToolsSeries(ctx context.Context, f queries.Filter, s queries.SeriesOptions) (queries.Series[apiv1.ToolPoint], error)
	StaleUsageSeries(ctx context.Context, f queries.Filter, s queries.SeriesOptions) (queries.Series[apiv1.StaleUsagePoint], error)
	RejectionsSeries(ctx context.Context, f queries.Filter, s queries.SeriesOptions) (queries.Series[apiv1.RejectionPoint], error)
	RepairsSeries(ctx context.Context, f queries.Filter, s queries.SeriesOptions) (queries.Series[apiv1.RepairPoint], error)
	AdapterRetirementSeries(ctx context.Context, f queries.Filter, s queries.SeriesOptions) (queries.Series[apiv1.AdapterPoint], error)
	PropagationSeries(ctx context.Context, f queries.Filter, s queries.SeriesOptions) (queries.Series[apiv1.PropagationPoint], error)
	ViolationsSeries(ctx context.Context, f queries.Filter, s queries.SeriesOptions) (queries.Series[apiv1.ViolationPoint], error)
	RevisionSourcesSeries(ctx context.Context, f queries.Filter, s queries.SeriesOptions) (queries.Series[apiv1.RevisionSourcePoint], error)
	ContractErrorsSeries(ctx context.Context, f queries.Filter, s queries.SeriesOptions) (queries.Series[apiv1.ContractErrorPoint], error)
	AuditSeries(ctx context.Context, f queries.AuditFilter, s queries.SeriesOptions) (queries.Series[apiv1.AuditPoint], error)
	CheckUsage(ctx context.Context, f queries.Filter, tools []string) ([]queries.CheckUsageRow, error)
}

var _ Reports = (*queries.Runner)(nil)

// Option configures a Server.
type Option func(*Server)

// WithClock sets the clock that relative times (-7d, now) are read
// against. Tests pin it; the default is time.Now.
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// WithTokens makes the server authenticate every report request with a
// bearer token of tokens, bind it to the token's tenant and check the
// token's scope: read for the reports, audit for the call audit. Without
// it every request is served as Config.Tenant.
func WithTokens(tokens *auth.Tokens) Option { return func(s *Server) { s.tokens = tokens } }

// WithMetrics serves h on GET /metrics, without a token: the process's
// own metrics carry no tenant's data.
func WithMetrics(h http.Handler) Option { return func(s *Server) { s.metrics = h } }

// RequestObserver records each request the server answered: its route
// template (gin's FullPath, "" when no route matched), method, status and
// duration.
type RequestObserver interface {
	ObserveRequest(route, method string, status int, d time.Duration)
}

// WithRequestObserver has o record every request, refused ones included.
func WithRequestObserver(o RequestObserver) Option { return func(s *Server) { s.observer = o } }

// WithReadyCheck adds a check to /readyz, after the store's ping: while
// check fails, /readyz answers 503 with a problem naming it.
func WithReadyCheck(name string, check func(context.Context) error) Option {
	return func(s *Server) { s.checks = append(s.checks, readyCheck{name, check}) }
}

// readyCheck is one named readiness check.
type readyCheck struct {
	name  string
	check func(context.Context) error
}

// Server is the API server.
type Server struct {
	cfg     Config
	store   Pinger
	reports Reports
	log     *slog.Logger
	engine  *gin.Engine
	srv     *http.Server
	ln      net.Listener
	version string
	now     func() time.Time
	openapi []byte
	tokens  *auth.Tokens // nil without tokens
	tls     *tls.Config  // nil without TLS
	// authFailures counts requests refused with 401 or 403.
	authFailures atomic.Uint64
	metrics      http.Handler    // nil without WithMetrics
	checks       []readyCheck    // readiness checks after the store's ping
	observer     RequestObserver // nil without WithRequestObserver
	tracer       trace.Tracer    // nil without WithTracer
	console      *console.Handler
	// driftSlot holds a token while a drift test runs: one at a time.
	driftSlot chan struct{}
}

// New builds the server and its routes.
func New(cfg Config, st Pinger, reports Reports, version string, log *slog.Logger, opts ...Option) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	gin.SetMode(gin.ReleaseMode)
	s := &Server{cfg: cfg, store: st, reports: reports, log: log, engine: gin.New(), version: version, now: time.Now,
		driftSlot: make(chan struct{}, 1)}
	for _, o := range opts {
		o(s)
	}
	doc, err := json.Marshal(OpenAPI(version))
	if err != nil {
		return nil, fmt.Errorf("cannot encode the openapi document: %w", err)
	}
	s.openapi = doc
	if s.console, err = console.New(); err != nil {
		return nil, err
	}
	if s.tls, err = cfg.TLS.Server(); err != nil {
		return nil, fmt.Errorf("api.tls: %w", err)
	}
	if s.tracer != nil {
		s.engine.Use(s.trace)
	}
	if s.observer != nil {
		// First, so that it sees the answer of every handler after it,
		// the 500 of a recovered panic and the 401 of a refused token.
		s.engine.Use(s.observe)
	}
	s.engine.Use(gin.Recovery(), s.tenancy)
	// HEAD too: load balancers and uptime checks probe with it.
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		s.engine.Handle(m, "/healthz", s.healthz)
		s.engine.Handle(m, "/readyz", s.readyz)
	}
	if s.metrics != nil {
		s.engine.GET("/metrics", gin.WrapH(s.metrics))
	}
	v1 := s.engine.Group("/api/v1")
	v1.GET("/openapi.json", s.openAPI)
	for _, e := range allEndpoints() {
		s.engine.GET(e.path, s.serve(e))
	}
	v1.POST("/check", s.check)
	s.engine.GET(driftTestPath, s.driftTestSettings)
	s.engine.POST(driftTestPath, s.driftTest)
	s.engine.GET(revisionsPath, s.revisions)
	s.engine.GET(diffPath, s.diff)
	s.engine.GET(deployedPath, s.deployed)
	s.engine.GET(servicesPath, s.services)
	v1.GET("/reports/:report", s.unknownReport)
	v1.GET("/reports/:report/series", s.unknownReport)
	// Under /api the API answers its own 404 problem; every other path is
	// the console's: a page, an asset, or its HTML 404 page.
	s.engine.NoRoute(func(c *gin.Context) {
		if !isAPIPath(c.Request.URL.Path) {
			s.console.ServeHTTP(c.Writer, c.Request)
			c.Abort()
			return
		}
		problem(c, http.StatusNotFound, fmt.Sprintf("no endpoint %s %s", c.Request.Method, c.Request.URL.Path), "")
	})
	// A path served with other methods is 405, gin setting Allow.
	s.engine.HandleMethodNotAllowed = true
	s.engine.NoMethod(func(c *gin.Context) {
		problem(c, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s: use %s", c.Request.Method, c.Request.URL.Path, c.Writer.Header().Get("Allow")), "")
	})
	return s, nil
}

// WithTracer has the server trace every request but probes and scrapes
// with t (see package internal/selftrace): a server span named after the
// method and the route, the child of the request's W3C trace context if it
// has one, the parent of the report's query. A nil t traces nothing.
func WithTracer(t trace.Tracer) Option { return func(s *Server) { s.tracer = t } }

// untraced are the routes of probes and scrapes, which trace nothing: they
// would outnumber the requests worth a trace.
var untraced = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// trace runs the request in its span, unless its route is untraced.
func (s *Server) trace(c *gin.Context) {
	route := c.FullPath()
	if untraced[route] {
		return
	}
	name := c.Request.Method
	if route != "" {
		name += " " + route
	}
	ctx := propagation.TraceContext{}.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
	ctx, span := s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		semconv.HTTPRequestMethodKey.String(c.Request.Method), semconv.HTTPRoute(route)))
	defer span.End()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
	status := c.Writer.Status()
	span.SetAttributes(semconv.HTTPResponseStatusCode(status))
	if status >= http.StatusInternalServerError {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
}

// observe records the request with the observer.
func (s *Server) observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	s.observer.ObserveRequest(c.FullPath(), c.Request.Method, c.Writer.Status(), time.Since(start))
}

// isAPIPath reports whether p lies under /api, where the API answers in
// JSON; the console answers every other path no endpoint serves.
func isAPIPath(p string) bool { return p == "/api" || strings.HasPrefix(p, "/api/") }

// Routes lists the paths the server answers, as registered.
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.engine.Routes() {
		out = append(out, r.Path)
	}
	return out
}

// Handler returns the HTTP handler, for tests and in-process clients.
func (s *Server) Handler() http.Handler { return s.engine }

// Start listens and serves in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", s.cfg.Listen, err)
	}
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           s.engine,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("api server stopped", "err", err)
		}
	}()
	s.log.Info("api listening", "addr", ln.Addr().String(), "tls", s.tls != nil,
		"client_certificates", s.tls != nil && s.tls.ClientCAs != nil, "tokens", s.tokens.Len())
	return nil
}

// Addr returns the bound address once started.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Shutdown stops accepting requests and waits for in-flight ones.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Shutdown(ctx)
}

func (s *Server) healthz(c *gin.Context) {
	writeJSON(c, http.StatusOK, apiv1.Health{Status: "ok", Version: s.version})
}

func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		c.Header("Retry-After", "5")
		problem(c, http.StatusServiceUnavailable, "readiness check store failed: store unreachable: "+err.Error(), "")
		return
	}
	for _, rc := range s.checks {
		if err := rc.check(ctx); err != nil {
			c.Header("Retry-After", "5")
			problem(c, http.StatusServiceUnavailable, fmt.Sprintf("readiness check %s failed: %v", rc.name, err), "")
			return
		}
	}
	writeJSON(c, http.StatusOK, apiv1.Health{Status: "ready"})
}

func (s *Server) openAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json; charset=utf-8", s.openapi)
}

func (s *Server) unknownReport(c *gin.Context) {
	problem(c, http.StatusNotFound, fmt.Sprintf("unknown report %q; the reports are %s", c.Param("report"),
		strings.Join(reportSegments(), ", ")), "report")
}

func reportSegments() []string {
	var out []string
	for _, e := range endpoints {
		if name, ok := strings.CutPrefix(e.path, reportsPrefix); ok {
			out = append(out, name)
		}
	}
	return out
}

// serve answers a report endpoint: it checks the parameters, negotiates
// the format, runs the report and writes it.
func (s *Server) serve(e *endpoint) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !s.allowed(c, e.scope) {
			return
		}
		v, err := parseQuery(c.Request.URL.RawQuery)
		if err != nil {
			s.fail(c, e, err)
			return
		}
		q := query{v: v, now: s.now().UTC(), window: s.reports.Window}
		if err := q.check(e.params); err != nil {
			s.fail(c, e, err)
			return
		}
		format, ok, err := negotiate(q.get(apiv1.ParamFormat), c.GetHeader("Accept"))
		if err != nil {
			s.fail(c, e, err)
			return
		}
		width, err := q.width()
		if err != nil {
			s.fail(c, e, err)
			return
		}
		if !ok {
			problem(c, http.StatusNotAcceptable, "this endpoint serves application/json, text/csv, text/markdown and text/plain", "Accept")
			return
		}
		tenant, ok := TenantFrom(c.Request.Context())
		if !ok {
			problem(c, http.StatusUnauthorized, "the request is bound to no tenant", "")
			return
		}
		if s.tracer != nil {
			trace.SpanFromContext(c.Request.Context()).SetAttributes(selftrace.KeyReport.String(e.report))
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.QueryTimeout)
		defer cancel()
		res, err := e.run(ctx, s, q, tenant)
		if err != nil {
			s.fail(c, e, err)
			return
		}
		s.write(c, format, width, res)
	}
}

// fail answers err as a problem: a parameter at fault or a filter the
// reports refuse is a 400, a report that ran out of time or a store that
// is closed or unreachable a 503, anything else a 500 whose cause is
// logged, not shown.
func (s *Server) fail(c *gin.Context, e *endpoint, err error) {
	var pe *paramError
	switch {
	case errors.As(err, &pe):
		problem(c, http.StatusBadRequest, pe.detail, pe.param)
	case errors.Is(err, queries.ErrInvalidCursor):
		problem(c, http.StatusBadRequest, "invalid cursor: pass the next value of the previous page unchanged", apiv1.ParamCursor)
	case errors.Is(err, queries.ErrInvalidFilter):
		problem(c, http.StatusBadRequest, err.Error(), "")
	case errors.Is(err, context.DeadlineExceeded):
		s.log.Warn("report timed out", "report", e.report, "timeout", s.cfg.QueryTimeout)
		c.Header("Retry-After", "10")
		problem(c, http.StatusServiceUnavailable, fmt.Sprintf("the %s report did not finish within %s", e.report, s.cfg.QueryTimeout), "")
	case errors.Is(err, store.ErrClosed):
		c.Header("Retry-After", "10")
		problem(c, http.StatusServiceUnavailable, "the store is closed", "")
	case errors.Is(err, store.ErrUnavailable):
		s.log.Warn("report failed: store unavailable", "report", e.report, "err", err)
		c.Header("Retry-After", "10")
		problem(c, http.StatusServiceUnavailable, fmt.Sprintf("the %s report cannot be computed now: the store is unavailable", e.report), "")
	case c.Request.Context().Err() != nil:
		// The client went away: nobody reads the answer.
		c.Abort()
	default:
		s.log.Error("report failed", "report", e.report, "err", err)
		problem(c, http.StatusInternalServerError, fmt.Sprintf("the %s report could not be computed", e.report), "")
	}
}

// write answers res in format f, a text table fitted to width when it is
// positive.
func (s *Server) write(c *gin.Context, f render.Format, width int, res result) {
	c.Header("Vary", "Accept")
	if res.next != "" {
		u := *c.Request.URL
		v := u.Query()
		v.Set(apiv1.ParamCursor, res.next)
		u.RawQuery = v.Encode()
		c.Header("Link", fmt.Sprintf("<%s>; rel=\"next\"", u.RequestURI()))
	}
	if f == render.FormatJSON {
		writeJSON(c, http.StatusOK, res.body)
		return
	}
	t := res.table(f)
	t.Width = width
	t.Subtitle = render.Window(res.from, res.to)
	if res.subtitle != "" {
		t.Subtitle += "; " + res.subtitle
	}
	if res.next != "" {
		t.Notes = append(t.Notes, "More rows: repeat the request with cursor="+res.next)
	}
	var buf bytes.Buffer
	if err := t.Write(&buf, f); err != nil {
		s.log.Error("cannot render report", "report", res.report, "format", f, "err", err)
		problem(c, http.StatusInternalServerError, "the report could not be rendered", "")
		return
	}
	if f == render.FormatCSV {
		name := res.report
		if name == "" {
			name = "tools"
		}
		c.Header("Content-Disposition", fmt.Sprintf("attachment; filename=\"mcpdrift-%s.csv\"", name))
	}
	c.Data(http.StatusOK, f.ContentType(), buf.Bytes())
}

// writeJSON writes v as compact JSON, without escaping HTML characters.
func writeJSON(c *gin.Context, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		problem(c, http.StatusInternalServerError, "the response could not be encoded", "")
		return
	}
	c.Data(status, "application/json; charset=utf-8", buf.Bytes())
}

// problem answers with an RFC 9457 problem document.
func problem(c *gin.Context, status int, detail, param string) {
	body, _ := json.Marshal(apiv1.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, Parameter: param})
	c.Data(status, "application/problem+json", body)
	c.Abort()
}
