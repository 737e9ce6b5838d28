package ingest

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	for _, tc := range []struct {
		field  string
		modify func(*Config)
	}{
		{"otlp.grpc.listen", func(c *Config) { c.GRPCListen = "4317" }},
		{"otlp.http.listen", func(c *Config) { c.HTTPListen = "" }},
		{"otlp.max-request-bytes", func(c *Config) { c.MaxRequestBytes = 0 }},
		{"ingest.batch.max-events", func(c *Config) { c.BatchMaxEvents = -1 }},
		{"ingest.batch.max-delay", func(c *Config) { c.BatchMaxDelay = 0 }},
		{"ingest.max-pending-events", func(c *Config) { c.MaxPendingEvents = c.BatchMaxEvents - 1 }},
		{"ingest.write-timeout", func(c *Config) { c.WriteTimeout = 0 }},
		{"ingest.retry-after", func(c *Config) { c.RetryAfter = -time.Second }},
		{"ingest.limits.max-attributes", func(c *Config) { c.Limits.MaxAttributes = 0 }},
		{"ingest.limits.max-value-bytes", func(c *Config) { c.Limits.MaxValueBytes = 0 }},
		{"ingest.limits.max-args-bytes", func(c *Config) { c.Limits.MaxArgsBytes = 0 }},
		{"ingest.limits.max-past", func(c *Config) { c.Limits.MaxPast = -1 }},
		{"ingest.limits.max-future", func(c *Config) { c.Limits.MaxFuture = -1 }},
		{"ingest.tenant", func(c *Config) { c.Tenant = "" }},
	} {
		cfg := DefaultConfig()
		tc.modify(&cfg)
		err := cfg.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v, want one naming the flag", tc.field, err)
		}
		if _, err := New(cfg, &sink{}, nil); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: New: %v, want the validation error", tc.field, err)
		}
	}
	if _, err := New(DefaultConfig(), nil, nil); err == nil {
		t.Error("New with a nil writer: no error")
	}
}
