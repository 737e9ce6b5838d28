package ingest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/internal/spool"
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

// TestSegmentHoldsAnInsert: the default spool segment holds a default
// insert's worth of the simulator's events, spooled in exports of 500 as
// the bench sends them, with half as much again to spare for larger
// arguments. A group does not span segments, so a segment too small for
// InsertMaxEvents cuts every insert of a replayer behind the spool to what
// a segment holds.
func TestSegmentHoldsAnInsert(t *testing.T) {
	cfg := DefaultConfig()
	sim := simulate.DefaultConfig()
	sim.Events = 20000
	sc := cfg.Spool
	sc.Dir = t.TempDir()
	sp, err := spool.Open(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var rec spool.Record
	flush := func() error {
		if len(rec.Events) == 0 {
			return nil
		}
		_, err := sp.Append(rec)
		rec.Events = rec.Events[:0]
		return err
	}
	l, err := simulate.Generate(sim, func(r *simulate.Record) error {
		rec.Events = append(rec.Events, r.Event)
		if len(rec.Events) == 500 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	st := sp.Stats()
	perEvent := float64(st.Bytes) / float64(l.Events)
	t.Logf("%d simulator events spooled in %d bytes: %.0f bytes each", l.Events, st.Bytes, perEvent)
	if need := 1.5 * perEvent * float64(cfg.InsertMaxEvents); float64(sc.SegmentBytes) < need {
		t.Errorf("a spool segment of %d bytes holds %.0f of the simulator's events (%.0f bytes each), want room for 1.5 times InsertMaxEvents (%d) of them: %.0f bytes",
			sc.SegmentBytes, float64(sc.SegmentBytes)/perEvent, perEvent, cfg.InsertMaxEvents, need)
	}
}
