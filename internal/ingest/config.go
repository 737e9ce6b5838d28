package ingest

import (
	"fmt"
	"net"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/spool"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// Config configures the OTLP ingester.
type Config struct {
	// GRPCListen is the host:port of the OTLP/gRPC listener; port 0 picks a
	// free port (see Server.GRPCAddr).
	GRPCListen string
	// HTTPListen is the host:port of the OTLP/HTTP listener; port 0 picks a
	// free port (see Server.HTTPAddr).
	HTTPListen string
	// MaxRequestBytes bounds one export request: the body as received and,
	// when it is gzip-compressed, the body once decompressed. Larger requests
	// are refused with HTTP 413 or gRPC RESOURCE_EXHAUSTED.
	MaxRequestBytes int
	// BatchMaxEvents is the most events written to the store in one batch; a
	// batch is written as soon as it holds that many.
	BatchMaxEvents int
	// BatchMaxDelay is how long a batch waits for more events after its first
	// one before it is written.
	BatchMaxDelay time.Duration
	// MaxPendingEvents bounds the events accepted into batches that are not
	// yet written. A request that would exceed it is refused as overloaded
	// (HTTP 503, gRPC UNAVAILABLE) instead of queued.
	MaxPendingEvents int
	// WriteTimeout bounds one store write; a write that times out is a
	// retryable error for every request in its batch.
	WriteTimeout time.Duration
	// RetryAfter is the delay suggested to clients whose export was refused
	// with a retryable error (the HTTP Retry-After header, rounded up to whole
	// seconds, and the gRPC RetryInfo detail).
	RetryAfter time.Duration
	// Limits bound what one record may carry; records over a limit are
	// rejected through partial success.
	Limits otelschema.Limits
	// Tenant owns every event this ingester writes.
	Tenant string
	// Spool is the on-disk write-ahead log that makes an export durable
	// while the store is slow or down: a batch whose store write fails
	// retryably, or takes longer than SpoolAfter, is appended (and fsynced)
	// to it instead, its requests are acknowledged, and a replayer writes it
	// to the store later, in order. An empty Spool.Dir disables it: exports
	// are then acknowledged only once stored.
	Spool spool.Config
	// SpoolAfter is the latency budget of a store write while a spool is
	// configured: past it the batch is spooled and acknowledged, and the
	// write left to finish (replay writes the batch again under the same
	// token, which the store deduplicates).
	SpoolAfter time.Duration
	// Ack says when an export is acknowledged while a spool is configured:
	// AckStored (the default) once its batch is stored, or spooled when the
	// store is slow or failing; AckSpooled once its batch is appended and
	// fsynced to the spool, always. With AckSpooled the requests of many
	// clients share each fsync (group commit) and the replayer writes the
	// spool to the store in large inserts of up to InsertMaxEvents events:
	// the store's cost per insert is mostly fixed, so this is the cheaper
	// mode per event, at the price of reports trailing acknowledgements by
	// up to InsertMaxDelay plus one insert.
	Ack AckMode
	// InsertMaxEvents bounds one store insert made by the replayer from
	// several spooled batches (AckSpooled). Larger inserts cost the store
	// less per event — each feeds every materialised view once and leaves
	// fewer parts to merge — at the price of the replayer holding that many
	// decoded events (608 bytes each before their strings) and their
	// encoding while it writes them.
	InsertMaxEvents int
	// InsertMaxDelay is how long the replayer waits for more spooled
	// batches before it writes a smaller insert (AckSpooled).
	InsertMaxDelay time.Duration
	// DedupIDs is how many ids of recently stored events the ingester
	// remembers (16 bytes each) to drop the events of an export that a
	// client sends again after it was made durable — a retry after a lost
	// answer. Zero disables it.
	DedupIDs int
	// DedupWindow is how far back, in event time, the ids are loaded at
	// start-up from a store that can list them (and from the spool), so
	// that a retry across a restart is dropped too.
	DedupWindow time.Duration
}

// AckMode says when an export is acknowledged; see Config.Ack.
type AckMode string

// Acknowledgement modes.
const (
	AckStored  AckMode = "stored"
	AckSpooled AckMode = "spooled"
)

// DefaultConfig returns the configuration the ingester runs with unless told
// otherwise: the standard OTLP ports on loopback and 64 MiB requests, as the
// OTLP specification recommends.
func DefaultConfig() Config {
	return Config{
		GRPCListen:       "127.0.0.1:4317",
		HTTPListen:       "127.0.0.1:4318",
		MaxRequestBytes:  64 << 20,
		BatchMaxEvents:   50000,
		BatchMaxDelay:    200 * time.Millisecond,
		MaxPendingEvents: 500000,
		WriteTimeout:     30 * time.Second,
		RetryAfter:       time.Second,
		Limits:           otelschema.DefaultLimits(),
		Tenant:           store.DefaultTenant,
		Spool:            spool.DefaultConfig(""),
		SpoolAfter:       2 * time.Second,
		Ack:              AckStored,
		InsertMaxEvents:  200000,
		InsertMaxDelay:   time.Second,
		DedupIDs:         1 << 20,
		DedupWindow:      15 * time.Minute,
	}
}

// Validate reports the first invalid field by name.
func (c Config) Validate() error {
	for _, l := range []struct{ name, addr string }{
		{"GRPCListen", c.GRPCListen},
		{"HTTPListen", c.HTTPListen},
	} {
		if _, _, err := net.SplitHostPort(l.addr); err != nil {
			return fmt.Errorf("%w: %s %q: %w", ErrInvalidConfig, l.name, l.addr, err)
		}
	}
	switch {
	case c.MaxRequestBytes <= 0:
		return fmt.Errorf("%w: MaxRequestBytes must be positive, got %d", ErrInvalidConfig, c.MaxRequestBytes)
	case c.BatchMaxEvents <= 0:
		return fmt.Errorf("%w: BatchMaxEvents must be positive, got %d", ErrInvalidConfig, c.BatchMaxEvents)
	case c.BatchMaxDelay <= 0:
		return fmt.Errorf("%w: BatchMaxDelay must be positive, got %s", ErrInvalidConfig, c.BatchMaxDelay)
	case c.MaxPendingEvents < c.BatchMaxEvents:
		return fmt.Errorf("%w: MaxPendingEvents (%d) must be at least BatchMaxEvents (%d)", ErrInvalidConfig, c.MaxPendingEvents, c.BatchMaxEvents)
	case c.WriteTimeout <= 0:
		return fmt.Errorf("%w: WriteTimeout must be positive, got %s", ErrInvalidConfig, c.WriteTimeout)
	case c.RetryAfter <= 0:
		return fmt.Errorf("%w: RetryAfter must be positive, got %s", ErrInvalidConfig, c.RetryAfter)
	case c.Limits.MaxAttributes <= 0:
		return fmt.Errorf("%w: Limits.MaxAttributes must be positive, got %d", ErrInvalidConfig, c.Limits.MaxAttributes)
	case c.Limits.MaxValueBytes <= 0:
		return fmt.Errorf("%w: Limits.MaxValueBytes must be positive, got %d", ErrInvalidConfig, c.Limits.MaxValueBytes)
	case c.Limits.MaxArgsBytes <= 0:
		return fmt.Errorf("%w: Limits.MaxArgsBytes must be positive, got %d", ErrInvalidConfig, c.Limits.MaxArgsBytes)
	case c.Limits.MaxPast < 0:
		return fmt.Errorf("%w: Limits.MaxPast must not be negative, got %s", ErrInvalidConfig, c.Limits.MaxPast)
	case c.Limits.MaxFuture < 0:
		return fmt.Errorf("%w: Limits.MaxFuture must not be negative, got %s", ErrInvalidConfig, c.Limits.MaxFuture)
	case c.Tenant == "":
		return fmt.Errorf("%w: Tenant must not be empty", ErrInvalidConfig)
	case c.DedupIDs < 0:
		return fmt.Errorf("%w: DedupIDs must not be negative, got %d", ErrInvalidConfig, c.DedupIDs)
	case c.DedupWindow < 0:
		return fmt.Errorf("%w: DedupWindow must not be negative, got %s", ErrInvalidConfig, c.DedupWindow)
	}
	if c.Spool.Dir != "" {
		if err := c.Spool.Validate(); err != nil {
			return fmt.Errorf("%w: Spool: %w", ErrInvalidConfig, err)
		}
		if c.SpoolAfter <= 0 {
			return fmt.Errorf("%w: SpoolAfter must be positive with a spool, got %s", ErrInvalidConfig, c.SpoolAfter)
		}
	}
	switch {
	case c.Ack != AckStored && c.Ack != AckSpooled && c.Ack != "":
		return fmt.Errorf("%w: Ack must be %q or %q, got %q", ErrInvalidConfig, AckStored, AckSpooled, c.Ack)
	case c.Ack == AckSpooled && c.Spool.Dir == "":
		return fmt.Errorf("%w: Ack %q needs a spool (Spool.Dir)", ErrInvalidConfig, AckSpooled)
	case c.Ack == AckSpooled && c.InsertMaxEvents <= 0:
		return fmt.Errorf("%w: InsertMaxEvents must be positive, got %d", ErrInvalidConfig, c.InsertMaxEvents)
	case c.Ack == AckSpooled && c.InsertMaxDelay <= 0:
		return fmt.Errorf("%w: InsertMaxDelay must be positive, got %s", ErrInvalidConfig, c.InsertMaxDelay)
	}
	return nil
}
