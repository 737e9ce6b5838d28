package app

import (
	"fmt"
	"log/slog"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/ingest"
)

// security is the options of the ingester and the API for tokens, TLS and
// redaction.
type security struct {
	ingest []ingest.Option
	api    []api.Option
}

func newSecurity(c Config, log *slog.Logger) (security, error) {
	var sec security
	tokens, err := c.Auth.Load()
	if err != nil {
		return sec, err
	}
	if tokens != nil {
		log.Info("bearer tokens required", "file", c.Auth.TokensFile, "tokens", tokens.Len(), "tenants", tokens.Tenants())
		sec.api = append(sec.api, api.WithTokens(tokens))
	} else {
		tenant := c.API.Tenant
		if c.Role.Ingests() {
			tenant = c.Ingest.Tenant
		}
		log.Warn("running without tokens: every request is served as the single tenant", "tenant", tenant)
	}
	if !c.Role.Ingests() {
		return sec, nil
	}
	tlsCfg, err := c.OTLPTLS.Server()
	if err != nil {
		return sec, fmt.Errorf("otlp.tls: %w", err)
	}
	sec.ingest = []ingest.Option{ingest.WithTLS(tlsCfg)}
	if !c.NoRedaction {
		redactor, err := c.Redact.Build()
		if err != nil {
			return sec, err
		}
		if redactor.Ephemeral() {
			log.Warn("no -redact.key-file: redaction markers use a random key, so equal secrets correlate only within this process")
		}
		sec.ingest = append(sec.ingest, ingest.WithRedactor(redactor))
	}
	if tokens != nil {
		sec.ingest = append(sec.ingest, ingest.WithTokens(tokens))
	}
	return sec, nil
}
