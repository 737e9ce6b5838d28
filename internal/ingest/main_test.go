package ingest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { closeStore() }))
}

// sink is a recording store.Writer that can fail or block on demand, which
// the real store cannot. It copies what it is given: the batcher reuses the
// slice once Write returns.
type sink struct {
	mu      sync.Mutex
	batches []store.Batch
	// fail, when set, decides the error of each write.
	fail func(store.Batch) error
	// gate, when set, blocks every write until it is closed or the write's
	// context ends; entered receives one value per write that blocks.
	gate    chan struct{}
	entered chan struct{}
}

func (s *sink) Write(ctx context.Context, b store.Batch) error {
	if s.gate != nil {
		if s.entered != nil {
			s.entered <- struct{}{}
		}
		select {
		case <-s.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		if err := s.fail(b); err != nil {
			return err
		}
	}
	b.Events = append([]otelschema.Event(nil), b.Events...)
	s.batches = append(s.batches, b)
	return nil
}

// sizes returns the number of events of each batch written.
func (s *sink) sizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n []int
	for _, b := range s.batches {
		n = append(n, len(b.Events))
	}
	return n
}

// total returns the number of events written.
func (s *sink) total() int {
	n := 0
	for _, k := range s.sizes() {
		n += k
	}
	return n
}

// testConfig returns a configuration for servers on loopback, port 0, with
// short batch delays.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.GRPCListen = "127.0.0.1:0"
	cfg.HTTPListen = "127.0.0.1:0"
	cfg.BatchMaxDelay = 5 * time.Millisecond
	cfg.WriteTimeout = 10 * time.Second
	return cfg
}

// newServer returns a server on w, shut down at the end of the test; it is
// started unless start is false.
func newServer(t testing.TB, cfg Config, w store.Writer, start bool) *Server {
	t.Helper()
	s, err := New(cfg, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	if start {
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// drift describes the records of a test request.
type drift struct {
	valid   int // call events with a tool and a known outcome
	unknown int // call events with an unknown outcome
	noTool  int // call events without a tool name
	other   int // plain logs, not drift events
}

// logs builds the request described by d, the records in that order.
func (d drift) logs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(otelschema.AttrServiceName, "weather-mcp")
	rl.Resource().Attributes().PutStr(otelschema.AttrServiceVersion, "1.4.2")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("github.com/mcpdrift/mcpdrift/otelschema/mcpgo")
	now := pcommon.NewTimestampFromTime(time.Now())
	call := func(i int, tool, outcome string) {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(now)
		lr.SetEventName(otelschema.EventCall.String())
		a := lr.Attributes()
		if tool != "" {
			a.PutStr(otelschema.AttrToolName, tool)
		}
		a.PutStr(otelschema.AttrMethodName, "tools/call")
		a.PutStr(otelschema.AttrOutcome, outcome)
		a.PutStr(otelschema.AttrRequestID, fmt.Sprint(i))
		a.PutStr(otelschema.AttrSessionID, "s-1")
	}
	for i := range d.valid {
		call(i, "get_forecast", "current")
	}
	for i := range d.unknown {
		call(d.valid+i, "get_forecast", "sideways")
	}
	for i := range d.noTool {
		call(d.valid+d.unknown+i, "", "current")
	}
	for range d.other {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(now)
		lr.Body().SetStr("GET /healthz 200")
	}
	return ld
}
