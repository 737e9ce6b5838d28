package simulate

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// testConfig returns a deterministic configuration: a fixed Start, n
// events, violations at rate.
func testConfig(n int64, rate float64) Config {
	cfg := DefaultConfig()
	cfg.Start = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	cfg.Events = n
	cfg.ViolationRate = rate
	return cfg
}

// generate returns every record of cfg, copied, and the ledger.
func generate(t testing.TB, cfg Config) ([]Record, Ledger) {
	t.Helper()
	var recs []Record
	l, err := Generate(cfg, func(r *Record) error {
		c := *r
		c.sess = nil
		recs = append(recs, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, l
}

func TestDeterminism(t *testing.T) {
	cfg := testConfig(50_000, 0.01)
	a, la := generate(t, cfg)
	b, lb := generate(t, cfg)
	if int64(len(a)) != cfg.Events || la.Events != cfg.Events {
		t.Fatalf("generated %d events, ledger %d; want %d", len(a), la.Events, cfg.Events)
	}
	if !reflect.DeepEqual(la, lb) {
		t.Fatalf("same seed, different ledgers:\n%+v\n%+v", la, lb)
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			t.Fatalf("same seed, event %d differs:\n%+v\n%+v", i, a[i], b[i])
		}
	}

	// Next and All yield the same stream as Generate.
	g, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for r := range g.All() {
		got := *r
		got.sess = nil
		if !reflect.DeepEqual(got, a[i]) {
			t.Fatalf("All: event %d differs from Generate's:\n%+v\n%+v", i, got, a[i])
		}
		if i++; i == 1000 {
			break
		}
	}

	other := cfg
	other.Seed = 2
	d, ld := generate(t, other)
	if reflect.DeepEqual(la.Calls, ld.Calls) || reflect.DeepEqual(a[100], d[100]) {
		t.Error("different seeds generated the same stream")
	}
}

func TestLedgerCountsTheStream(t *testing.T) {
	recs, l := generate(t, testConfig(100_000, 0.02))
	recount := newLedger(testConfig(0, 0))
	for i := range recs {
		recount.add(&recs[i], 1)
	}
	l.Sessions, l.StatelessRuns, l.Clients = 0, 0, 0
	recount.Seed, recount.Start, recount.End = l.Seed, l.Start, l.End
	if !reflect.DeepEqual(l, recount) {
		t.Fatalf("ledger does not match the stream:\nledger  %+v\nrecount %+v", l, recount)
	}
}

func TestGenerateStopsOnEmitError(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	l, err := Generate(testConfig(1000, 0), func(*Record) error {
		if n == 10 {
			return boom
		}
		n++
		return nil
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "event 11") {
		t.Fatalf("err = %v, want boom at event 11", err)
	}
	if l.Events != 10 {
		t.Fatalf("ledger counts %d events, want the 10 accepted", l.Events)
	}
}

func TestRealisticShape(t *testing.T) {
	cfg := testConfig(300_000, 0.001)
	_, l := generate(t, cfg)
	calls := float64(l.ByEvent[otelschema.EventCall.String()])
	share := func(o otelschema.Outcome) float64 { return float64(l.Outcomes[o.String()]) / calls }
	if s := share(otelschema.OutcomeCurrent); s < 0.9 {
		t.Errorf("current calls are %.3f of calls, want most", s)
	}
	if s := share(otelschema.OutcomeNormalized); s <= 0 || s > 0.05 {
		t.Errorf("normalized calls are %.4f of calls, want a tail", s)
	}
	rejected := share(otelschema.OutcomeRejectedStale) + share(otelschema.OutcomeRejectedIncompatible) + share(otelschema.OutcomeRemoved)
	if rejected <= 0 || rejected > 0.02 {
		t.Errorf("drift rejections are %.4f of calls, want a few", rejected)
	}
	for _, name := range []otelschema.EventName{
		otelschema.EventCall, otelschema.EventListChanged, otelschema.EventRefresh,
		otelschema.EventRepair, otelschema.EventContractError, otelschema.EventAdapter,
	} {
		if l.ByEvent[name.String()] == 0 {
			t.Errorf("no %s events", name)
		}
	}
	for _, a := range []otelschema.RepairAction{
		otelschema.RepairActionRefreshRetry, otelschema.RepairActionModelRepair,
		otelschema.RepairActionHumanApproval, otelschema.RepairActionAbandon,
	} {
		if l.Repairs[a.String()] == 0 {
			t.Errorf("no %s repairs", a)
		}
	}
	if l.Clients < 24 || l.Sessions < 1000 || l.StatelessRuns == 0 {
		t.Errorf("clients %d, sessions %d, stateless runs %d: want dozens, thousands, some", l.Clients, l.Sessions, l.StatelessRuns)
	}
	if len(l.Calls) != cfg.Tools {
		t.Errorf("calls on %d tools, want %d", len(l.Calls), cfg.Tools)
	}
}

func TestScalesToManyTools(t *testing.T) {
	cfg := testConfig(200_000, 0.001)
	cfg.Tools, cfg.Servers, cfg.Clients, cfg.Sessions = 400, 24, 60, 8000
	_, l := generate(t, cfg)
	if len(l.Calls) < 300 {
		t.Errorf("calls on %d tools, want most of %d", len(l.Calls), cfg.Tools)
	}
	if l.Sessions < 3000 || l.Clients < 50 {
		t.Errorf("sessions %d, clients %d", l.Sessions, l.Clients)
	}
	if len(l.Adapters) < 10 {
		t.Errorf("%d adapters declared, want many changes on a large fleet", len(l.Adapters))
	}
}

func TestValidate(t *testing.T) {
	f := func(field string, mutate func(*Config)) {
		t.Helper()
		cfg := DefaultConfig()
		mutate(&cfg)
		err := cfg.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: err = %v, want ErrInvalidConfig naming it", field, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	f("Endpoint", func(c *Config) { c.Endpoint = "localhost" })
	f("Protocol", func(c *Config) { c.Protocol = "udp" })
	f("Span", func(c *Config) { c.Span = 0 })
	f("Events", func(c *Config) { c.Events = -1 })
	f("Duration", func(c *Config) { c.Duration = -time.Second })
	f("Rate", func(c *Config) { c.Rate = -1 })
	f("Servers", func(c *Config) { c.Servers = 0 })
	f("Tools", func(c *Config) { c.Tools = 3 })
	f("Servers", func(c *Config) { c.Servers = 13 })
	f("Clients", func(c *Config) { c.Clients = 0 })
	f("Sessions", func(c *Config) { c.Sessions = -1 })
	f("Changes", func(c *Config) { c.Changes = 12 })
	f("Environment", func(c *Config) { c.Environment = "" })
	f("ViolationRate", func(c *Config) { c.ViolationRate = 2 })
	f("QueueSize", func(c *Config) { c.QueueSize = 0 })
	f("BatchSize", func(c *Config) { c.BatchSize = c.QueueSize + 1 })
	f("ExportInterval", func(c *Config) { c.ExportInterval = 0 })
}

func BenchmarkGenerate(b *testing.B) {
	g, err := NewGenerator(testConfig(0, 0.001))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var r Record
	for b.Loop() {
		if !g.Next(&r) {
			b.StopTimer()
			g, _ = NewGenerator(testConfig(0, 0.001))
			b.StartTimer()
		}
	}
}
