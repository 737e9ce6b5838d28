package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/mcpdrift/mcpdrift/internal/auth"
)

type tenantKey struct{}

// WithTenant returns ctx bound to tenant: the reports of a request run for
// the tenant its context carries.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant ctx is bound to.
func TenantFrom(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(tenantKey{}).(string)
	return t, ok && t != ""
}

// publicPaths answer without a token: liveness, readiness, the process's
// metrics and the API's description carry no tenant's data; nor do the
// console's pages and assets, every path outside /api (see isAPIPath),
// whose script asks for a token and sends it with each API request.
var publicPaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true, "/api/v1/openapi.json": true}

// tenancy binds every request to its tenant. It is the one place that
// decides a request's tenant: without tokens, the configured tenant; with
// tokens, the tenant of the request's bearer token — never a parameter or
// a header the caller chooses. A request to a non-public path without a
// valid token is answered 401.
func (s *Server) tenancy(c *gin.Context) {
	if s.tokens == nil {
		c.Request = c.Request.WithContext(WithTenant(c.Request.Context(), s.cfg.Tenant))
		c.Next()
		return
	}
	if publicPaths[c.Request.URL.Path] || !isAPIPath(c.Request.URL.Path) {
		c.Next()
		return
	}
	token, ok := auth.Bearer(c.GetHeader("Authorization"))
	if !ok {
		s.authFailures.Add(1)
		c.Header("WWW-Authenticate", `Bearer realm="mcpdrift"`)
		problem(c, http.StatusUnauthorized, "this endpoint needs a bearer token: send Authorization: Bearer <token> (mcpdrift token create makes one)", "Authorization")
		return
	}
	p, err := s.tokens.Authenticate(token)
	if err != nil {
		s.authFailures.Add(1)
		c.Header("WWW-Authenticate", `Bearer realm="mcpdrift", error="invalid_token"`)
		problem(c, http.StatusUnauthorized, "the bearer token is not valid", "Authorization")
		return
	}
	ctx := auth.NewContext(WithTenant(c.Request.Context(), p.Tenant), p)
	c.Request = c.Request.WithContext(ctx)
	c.Next()
}

// allowed reports whether the request may use an endpoint that needs
// scope, answering 403 when not. Without tokens every request may.
func (s *Server) allowed(c *gin.Context, scope auth.Scope) bool {
	if s.tokens == nil {
		return true
	}
	p, ok := auth.FromContext(c.Request.Context())
	if !ok {
		s.authFailures.Add(1)
		problem(c, http.StatusUnauthorized, "the request is not authenticated", "Authorization")
		return false
	}
	if !p.Has(scope) {
		s.authFailures.Add(1)
		c.Header("WWW-Authenticate", fmt.Sprintf(`Bearer realm="mcpdrift", error="insufficient_scope", scope=%q`, scope))
		problem(c, http.StatusForbidden, fmt.Sprintf("this endpoint needs a token with the %s scope; token %s has %v", scope, p.TokenID, p.Scopes), "Authorization")
		return false
	}
	return true
}

// AuthFailures returns how many requests were refused with 401 or 403.
func (s *Server) AuthFailures() uint64 { return s.authFailures.Load() }
