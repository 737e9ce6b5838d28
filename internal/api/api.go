// Package api serves mcpdrift's HTTP API with gin: health and readiness, and
// the versioned report endpoints under /api/v1.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

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
}

// DefaultConfig returns the API's defaults.
func DefaultConfig() Config {
	return Config{Listen: "127.0.0.1:8080", ReadHeaderTimeout: 10 * time.Second, QueryTimeout: 30 * time.Second, Tenant: store.DefaultTenant}
}

// Validate reports the first invalid field by name.
func (c Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("api.listen: invalid address %q: %w", c.Listen, err)
	}
	if c.QueryTimeout <= 0 {
		return fmt.Errorf("api.query-timeout: must be positive, not %v", c.QueryTimeout)
	}
	if c.Tenant == "" {
		return errors.New("api tenant: must not be empty")
	}
	return nil
}

// Pinger reports whether the store can serve queries.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Reports runs the report queries.
type Reports interface {
	Tools(ctx context.Context, f queries.Filter) ([]queries.ToolRow, error)
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
}

// New builds the server and its routes.
func New(cfg Config, st Pinger, reports Reports, version string, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	gin.SetMode(gin.ReleaseMode)
	s := &Server{cfg: cfg, store: st, reports: reports, log: log, engine: gin.New(), version: version}
	s.engine.Use(gin.Recovery())
	s.engine.GET("/healthz", s.healthz)
	s.engine.GET("/readyz", s.readyz)
	v1 := s.engine.Group("/api/v1")
	v1.GET("/tools", s.tools)
	s.engine.NoRoute(func(c *gin.Context) {
		problem(c, http.StatusNotFound, "not found", fmt.Sprintf("no endpoint %s %s", c.Request.Method, c.Request.URL.Path), "")
	})
	return s, nil
}

// Handler returns the HTTP handler, for tests.
func (s *Server) Handler() http.Handler { return s.engine }

// Start listens and serves in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", s.cfg.Listen, err)
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s.engine, ReadHeaderTimeout: s.cfg.ReadHeaderTimeout}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("api server stopped", "err", err)
		}
	}()
	s.log.Info("api listening", "addr", ln.Addr().String())
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
	c.JSON(http.StatusOK, gin.H{"status": "ok", "version": s.version})
}

func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		problem(c, http.StatusServiceUnavailable, "not ready", "store unreachable: "+err.Error(), "")
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready"})
}

func (s *Server) tools(c *gin.Context) {
	f, ok := s.filter(c)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.QueryTimeout)
	defer cancel()
	rows, err := s.reports.Tools(ctx, f)
	if err != nil {
		s.log.Error("report failed", "report", "tools", "err", err)
		problem(c, http.StatusInternalServerError, "report failed", "the tools report could not be computed", "")
		return
	}
	c.JSON(http.StatusOK, gin.H{"from": f.From, "to": f.To, "tools": rows})
}

// filter reads the common report parameters; on error it has answered.
func (s *Server) filter(c *gin.Context) (queries.Filter, bool) {
	now := time.Now().UTC()
	from, err := ParseTime(c.DefaultQuery("from", "-7d"), now)
	if err != nil {
		problem(c, http.StatusBadRequest, "invalid parameter", err.Error(), "from")
		return queries.Filter{}, false
	}
	to, err := ParseTime(c.DefaultQuery("to", "now"), now)
	if err != nil {
		problem(c, http.StatusBadRequest, "invalid parameter", err.Error(), "to")
		return queries.Filter{}, false
	}
	if !from.Before(to) {
		problem(c, http.StatusBadRequest, "invalid parameter", fmt.Sprintf("from (%s) must be before to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339)), "from")
		return queries.Filter{}, false
	}
	return queries.Filter{
		Tenant:      s.cfg.Tenant,
		From:        from,
		To:          to,
		Tool:        c.Query("tool"),
		Service:     c.Query("service"),
		Environment: c.Query("environment"),
	}, true
}

// problem answers with an RFC 9457 problem document.
func problem(c *gin.Context, status int, title, detail, param string) {
	body := gin.H{"type": "about:blank", "title": title, "status": status, "detail": detail}
	if param != "" {
		body["parameter"] = param
	}
	c.Header("Content-Type", "application/problem+json")
	c.AbortWithStatusJSON(status, body)
}
