package main

import (
	"flag"
	"fmt"
	"log/slog"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/internal/redact"
)

// securityFlags are serve's flags for tokens, redaction and TLS.
type securityFlags struct {
	auth    auth.Flags
	redact  redact.Flags
	otlpTLS auth.TLSConfig
}

// register registers the flags; the API's TLS settings go to acfg.
func (f *securityFlags) register(fs *flag.FlagSet, acfg *api.Config) {
	f.auth.Register(fs)
	f.redact.Register(fs)
	f.otlpTLS.RegisterFlags(fs, "otlp.tls", "the OTLP listeners")
	acfg.TLS.RegisterFlags(fs, "api.tls", "the API")
}

// options checks the flags against the listeners and returns the options
// of the ingester and the API. It refuses a listener other machines reach
// without tokens unless -auth.insecure-allow-no-tokens is set.
func (f *securityFlags) options(icfg ingest.Config, acfg api.Config, log *slog.Logger) ([]ingest.Option, []api.Option, error) {
	if err := f.otlpTLS.Validate("otlp.tls"); err != nil {
		return nil, nil, err
	}
	if err := f.auth.Check([2]string{"api.listen", acfg.Listen}, [2]string{"otlp.grpc.listen", icfg.GRPCListen}, [2]string{"otlp.http.listen", icfg.HTTPListen}); err != nil {
		return nil, nil, err
	}
	tokens, err := f.auth.Load()
	if err != nil {
		return nil, nil, err
	}
	redactor, err := f.redact.Build()
	if err != nil {
		return nil, nil, err
	}
	tlsCfg, err := f.otlpTLS.Server()
	if err != nil {
		return nil, nil, fmt.Errorf("otlp.tls: %w", err)
	}
	if tokens == nil {
		log.Warn("running without tokens: every request is served as the single local tenant", "tenant", icfg.Tenant)
	} else {
		log.Info("bearer tokens required", "file", f.auth.TokensFile, "tokens", tokens.Len(), "tenants", tokens.Tenants())
	}
	if redactor.Ephemeral() {
		log.Warn("no -redact.key-file: redaction markers use a random key, so equal secrets correlate only within this run")
	}
	iopts := []ingest.Option{ingest.WithRedactor(redactor), ingest.WithTLS(tlsCfg)}
	var aopts []api.Option
	if tokens != nil {
		iopts = append(iopts, ingest.WithTokens(tokens))
		aopts = append(aopts, api.WithTokens(tokens))
	}
	return iopts, aopts, nil
}

// scheme returns https with TLS, http without.
func scheme(tls bool) string {
	if tls {
		return "https"
	}
	return "http"
}
