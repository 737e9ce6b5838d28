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
		{"GRPCListen", func(c *Config) { c.GRPCListen = "4317" }},
		{"HTTPListen", func(c *Config) { c.HTTPListen = "" }},
		{"MaxRequestBytes", func(c *Config) { c.MaxRequestBytes = 0 }},
		{"BatchMaxEvents", func(c *Config) { c.BatchMaxEvents = -1 }},
		{"BatchMaxDelay", func(c *Config) { c.BatchMaxDelay = 0 }},
		{"MaxPendingEvents", func(c *Config) { c.MaxPendingEvents = c.BatchMaxEvents - 1 }},
		{"WriteTimeout", func(c *Config) { c.WriteTimeout = 0 }},
		{"RetryAfter", func(c *Config) { c.RetryAfter = -time.Second }},
		{"Limits.MaxAttributes", func(c *Config) { c.Limits.MaxAttributes = 0 }},
		{"Limits.MaxValueBytes", func(c *Config) { c.Limits.MaxValueBytes = 0 }},
		{"Limits.MaxArgsBytes", func(c *Config) { c.Limits.MaxArgsBytes = 0 }},
		{"Limits.MaxPast", func(c *Config) { c.Limits.MaxPast = -1 }},
		{"Limits.MaxFuture", func(c *Config) { c.Limits.MaxFuture = -1 }},
		{"Tenant", func(c *Config) { c.Tenant = "" }},
	} {
		cfg := DefaultConfig()
		tc.modify(&cfg)
		err := cfg.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v, want one naming the field", tc.field, err)
		}
		if _, err := New(cfg, &sink{}, nil); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: New: %v, want the validation error", tc.field, err)
		}
	}
	if _, err := New(DefaultConfig(), nil, nil); err == nil {
		t.Error("New with a nil writer: no error")
	}
}
