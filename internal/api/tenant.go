package api

import (
	"context"

	"github.com/gin-gonic/gin"
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

// tenancy binds every request to the configured tenant. It is the one
// place that decides a request's tenant: token authentication replaces it
// with the tenant of the token.
func (s *Server) tenancy(c *gin.Context) {
	c.Request = c.Request.WithContext(WithTenant(c.Request.Context(), s.cfg.Tenant))
	c.Next()
}
