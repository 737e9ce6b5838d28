package simulate

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// Protocols accepted in Config.Protocol.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http"
)

// DefaultPlannedEvents is the traffic density the simulation plans for when
// neither Config.Events nor Config.Rate with Config.Duration says how many
// events the run will emit.
const DefaultPlannedEvents = 1_000_000

// maxFollowUp bounds how long after a call its follow-up events (repairs,
// retries, human approvals) may be stamped, so that a run whose simulated
// clock ends now stays within the ingester's MaxFuture.
const maxFollowUp = 30 * time.Minute

// ErrInvalidConfig marks every error returned by Config.Validate.
var ErrInvalidConfig = errors.New("invalid simulator config")

// Config configures the drift simulator: the simulated fleet, the simulated
// clock, what bounds a run, and where Run sends its OTLP logs.
type Config struct {
	// Endpoint is the host:port of the OTLP receiver Run exports to.
	Endpoint string
	// Protocol is the OTLP transport Run uses: "grpc" or "http".
	Protocol string
	// Insecure sends plaintext (no TLS), as a loopback ingester expects.
	Insecure bool
	// Headers are sent with every export, such as an Authorization bearer
	// token.
	Headers map[string]string

	// Seed makes the simulation deterministic: the same Config (with the
	// same Start) generates the same events in the same order.
	Seed uint64
	// Start is the simulated time of the first event. The zero value means
	// now minus Span, resolved when the run starts, so that the simulated
	// clock ends about now.
	Start time.Time
	// Span is the simulated time the run covers, from Start. Keep it within
	// the ingester's MaxPast (30 days by default).
	Span time.Duration

	// Events bounds the run to exactly this many events; 0 means no bound.
	Events int64
	// Duration bounds the run in real time (Run only); 0 means no bound.
	Duration time.Duration
	// Rate is the events per second of real time Run emits; 0 means as
	// fast as the exporter accepts them.
	Rate float64

	// Servers is the number of simulated MCP server services.
	Servers int
	// Tools is the number of tools across the servers.
	Tools int
	// Clients is the number of client name@version combinations.
	Clients int
	// Sessions is the number of client sessions (or, on protocols without
	// sessions, agent runs) over the span; 0 sizes it from the planned
	// event count.
	Sessions int
	// Changes is the number of contract changes the servers deploy during
	// the span, cycling through the seed's table; 0 means one of each row
	// (7), or one per three tools on larger fleets. Each changes a
	// different tool.
	Changes int
	// Environment is the deployment.environment.name of every service.
	Environment string
	// ViolationRate is the probability that an opportunity for a safety
	// violation becomes one: a rejected call whose side effect started, a
	// mixed-revision call, a removed tool returning success, an automatic
	// retry across a semantic or authority change. 0 injects none.
	ViolationRate float64
	// AuditArgs adds the raw and normalised call arguments
	// (dev.mcpdrift.args.raw / .normalized) to call events.
	AuditArgs bool

	// QueueSize is the OpenTelemetry BatchProcessor queue of each
	// LoggerProvider; Run never lets more records than this wait in it, so
	// none are dropped.
	QueueSize int
	// BatchSize is the most records in one OTLP export.
	BatchSize int
	// ExportInterval is the longest a record waits in the BatchProcessor.
	ExportInterval time.Duration
}

// DefaultConfig returns a fleet of 4 servers with 12 tools, 36 client
// versions, 3 days of simulated traffic, and a plaintext OTLP/gRPC export
// to the ingester's default port on loopback.
func DefaultConfig() Config {
	return Config{
		Endpoint:       "127.0.0.1:4317",
		Protocol:       ProtocolGRPC,
		Insecure:       true,
		Seed:           1,
		Span:           72 * time.Hour,
		Servers:        4,
		Tools:          12,
		Clients:        36,
		Environment:    "production",
		ViolationRate:  0.001,
		AuditArgs:      true,
		QueueSize:      32768,
		BatchSize:      8192,
		ExportInterval: 200 * time.Millisecond,
	}
}

// minTools is one tool per change class plus one that never changes.
const minTools = len(changeKinds) + 1

// Validate reports the first invalid field by name.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	if _, _, err := net.SplitHostPort(c.Endpoint); err != nil {
		return fmt.Errorf("%w: Endpoint %q: %w", ErrInvalidConfig, c.Endpoint, err)
	}
	switch {
	case c.Protocol != ProtocolGRPC && c.Protocol != ProtocolHTTP:
		return bad("Protocol must be %q or %q, got %q", ProtocolGRPC, ProtocolHTTP, c.Protocol)
	case c.Span <= 0:
		return bad("Span must be positive, got %s", c.Span)
	case c.Events < 0:
		return bad("Events must not be negative, got %d", c.Events)
	case c.Duration < 0:
		return bad("Duration must not be negative, got %s", c.Duration)
	case c.Rate < 0:
		return bad("Rate must not be negative, got %g", c.Rate)
	case c.Servers < 1:
		return bad("Servers must be at least 1, got %d", c.Servers)
	case c.Tools < minTools:
		return bad("Tools must be at least %d (one per change class and a stable one), got %d", minTools, c.Tools)
	case c.Servers > c.Tools:
		return bad("Servers (%d) must not exceed Tools (%d)", c.Servers, c.Tools)
	case c.Clients < 1:
		return bad("Clients must be at least 1, got %d", c.Clients)
	case c.Sessions < 0:
		return bad("Sessions must not be negative, got %d", c.Sessions)
	case c.Changes < 0 || c.Changes > c.Tools-1:
		return bad("Changes must be between 0 and Tools-1 (%d), got %d", c.Tools-1, c.Changes)
	case c.Environment == "":
		return bad("Environment must not be empty")
	case c.ViolationRate < 0 || c.ViolationRate > 1:
		return bad("ViolationRate must be between 0 and 1, got %g", c.ViolationRate)
	case c.QueueSize < 1:
		return bad("QueueSize must be positive, got %d", c.QueueSize)
	case c.BatchSize < 1 || c.BatchSize > c.QueueSize:
		return bad("BatchSize must be between 1 and QueueSize (%d), got %d", c.QueueSize, c.BatchSize)
	case c.ExportInterval <= 0:
		return bad("ExportInterval must be positive, got %s", c.ExportInterval)
	}
	return nil
}

// plannedEvents is the number of events the simulation spreads over the
// span: the Events bound, else what Rate sustains for Duration, else
// DefaultPlannedEvents.
func (c Config) plannedEvents() int64 {
	switch {
	case c.Events > 0:
		return c.Events
	case c.Rate > 0 && c.Duration > 0:
		return max(1, int64(c.Rate*c.Duration.Seconds()))
	}
	return DefaultPlannedEvents
}

// sessions returns Sessions, or a count sized from the planned events:
// about one session per 100 events, between 50 and 5000.
func (c Config) sessions() int {
	if c.Sessions > 0 {
		return c.Sessions
	}
	return int(min(5000, max(50, c.plannedEvents()/100)))
}

// changes returns Changes, or one change per class — one per three tools
// on large fleets — within what the tools allow.
func (c Config) changes() int {
	if c.Changes > 0 {
		return c.Changes
	}
	return min(c.Tools-1, max(len(changeKinds), c.Tools/3))
}

// resolved returns c with its defaults that depend on the wall clock
// filled in.
func (c Config) resolved(now time.Time) Config {
	if c.Start.IsZero() {
		c.Start = now.Add(-c.Span).Truncate(time.Second)
	}
	return c
}
