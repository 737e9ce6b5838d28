package ingest

import (
	"flag"
	"fmt"
	"net"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
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
	// when it is compressed (in any coding of receiver/compression.go), the body once
	// decompressed. Larger requests are refused with HTTP 413 or gRPC
	// RESOURCE_EXHAUSTED.
	MaxRequestBytes int
	// MaxInflightBytes bounds the bytes of request bodies held at once, as
	// received and once decompressed, over both protocols: a request that
	// does not fit is refused before (or while) its body is read, with HTTP
	// 503 and Retry-After or gRPC RESOURCE_EXHAUSTED and RetryInfo. Zero
	// means unbounded. Decoded events are bounded apart, by
	// MaxPendingEvents.
	MaxInflightBytes int64
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
	// events' Native encoding while it writes them (the spooled payloads
	// are transcoded into it, not decoded). Each tenant's spool also keeps
	// the payloads of up to twice that many of the events it was last
	// given in memory (365 bytes per event of the bench's mix), for the
	// replayer to take without reading them back from disk
	// (spool.Config.CacheEvents): the insert being written and the next
	// one, which fills meanwhile. It ends a segment at InsertMaxEvents
	// (spool.Config.SegmentEvents), so that the groups, which do not span
	// segments, are not cut short where a segment's bytes run out.
	InsertMaxEvents int
	// InsertMaxDelay is how long the replayer waits for more spooled
	// batches before it writes a smaller insert (AckSpooled).
	InsertMaxDelay time.Duration
	// DedupIDs is how many ids of recently stored events the ingester
	// remembers (16 bytes each) to drop the events of an export that a
	// client sends again after it was made durable — a retry after a lost
	// answer. With a spool they are journaled beside it (8 bytes each) and
	// loaded again at start-up, whatever the events' time. Zero disables
	// it.
	DedupIDs int
	// DedupWindow is how far back, in event time, the ids are loaded at
	// start-up from a store that can list them, so that a retry across a
	// restart is dropped without a spool too.
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
		MaxInflightBytes: 256 << 20,
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

// tenantSpool is the configuration of a tenant's spool: Spool, sized to
// the replayer's inserts (InsertMaxEvents).
func (c Config) tenantSpool() spool.Config {
	sc := c.Spool
	sc.CacheEvents = 2 * c.InsertMaxEvents
	sc.SegmentEvents = c.InsertMaxEvents
	return sc
}

// receiver is the part of c that the receiver needs.
func (c Config) receiver() receiver.Config {
	return receiver.Config{
		GRPCListen:       c.GRPCListen,
		HTTPListen:       c.HTTPListen,
		MaxRequestBytes:  c.MaxRequestBytes,
		MaxInflightBytes: c.MaxInflightBytes,
		RetryAfter:       c.RetryAfter,
		Limits:           c.Limits,
		Tenant:           c.Tenant,
	}
}

// RegisterFlags binds c's fields to flags of fs under otlp.* and
// ingest.*, with c's values as defaults. -ingest.spool.dir "off" (or an
// empty value) turns the spool off; SpoolOff tells.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.GRPCListen, "otlp.grpc.listen", c.GRPCListen, "OTLP/gRPC listen address")
	fs.StringVar(&c.HTTPListen, "otlp.http.listen", c.HTTPListen, "OTLP/HTTP listen address")
	fs.IntVar(&c.MaxRequestBytes, "otlp.max-request-bytes", c.MaxRequestBytes, "largest OTLP request accepted, compressed or not (413/RESOURCE_EXHAUSTED beyond)")
	fs.Int64Var(&c.MaxInflightBytes, "otlp.max-inflight-bytes", c.MaxInflightBytes, "request bytes held at once, as received and decompressed, over both protocols; beyond, requests are refused before they are read (503/RESOURCE_EXHAUSTED, retryable); 0: unbounded")
	fs.IntVar(&c.BatchMaxEvents, "ingest.batch.max-events", c.BatchMaxEvents, "events per batch: one spool append (fsync) or, with -ingest.ack stored, one store write")
	fs.DurationVar(&c.BatchMaxDelay, "ingest.batch.max-delay", c.BatchMaxDelay, "longest a batch waits before it is written (with -ingest.ack spooled a batch is also written as soon as the spool is idle)")
	fs.IntVar(&c.MaxPendingEvents, "ingest.max-pending-events", c.MaxPendingEvents, "events awaiting their write beyond which exports are refused (503/UNAVAILABLE)")
	fs.DurationVar(&c.WriteTimeout, "ingest.write-timeout", c.WriteTimeout, "timeout of one store write")
	fs.DurationVar(&c.RetryAfter, "ingest.retry-after", c.RetryAfter, "delay suggested to clients refused with a retryable error (Retry-After, gRPC RetryInfo)")
	fs.StringVar(&c.Tenant, "ingest.tenant", c.Tenant, "tenant every event is stored under while ingest runs without tokens")
	fs.IntVar(&c.Limits.MaxAttributes, "ingest.limits.max-attributes", c.Limits.MaxAttributes, "most attributes on one record; records with more are rejected through partial success")
	fs.IntVar(&c.Limits.MaxValueBytes, "ingest.limits.max-value-bytes", c.Limits.MaxValueBytes, "largest attribute value, in bytes, call arguments excepted")
	fs.IntVar(&c.Limits.MaxArgsBytes, "ingest.limits.max-args-bytes", c.Limits.MaxArgsBytes, "largest call arguments (dev.mcpdrift.args.*), in bytes")
	fs.IntVar(&c.Limits.MaxDefinitionBytes, "ingest.limits.max-definition-bytes", c.Limits.MaxDefinitionBytes, "largest advertised tool definition (dev.mcpdrift.tool.definition), in bytes")
	fs.DurationVar(&c.Limits.MaxPast, "ingest.limits.max-past", c.Limits.MaxPast, "oldest event time accepted, before now")
	fs.DurationVar(&c.Limits.MaxFuture, "ingest.limits.max-future", c.Limits.MaxFuture, "latest event time accepted, after now")
	fs.StringVar(&c.Spool.Dir, "ingest.spool.dir", c.Spool.Dir, `write-ahead spool directory, owned by one process ("off": exports are acknowledged only once stored)`)
	fs.Int64Var(&c.Spool.MaxBytes, "ingest.spool.max-bytes", c.Spool.MaxBytes, "spool size beyond which exports are refused (503/UNAVAILABLE)")
	fs.Int64Var(&c.Spool.SegmentBytes, "ingest.spool.segment-bytes", c.Spool.SegmentBytes, "size of one spool segment file")
	fs.BoolVar(&c.Spool.Fsync, "ingest.spool.fsync", c.Spool.Fsync, "fsync every spool append before acknowledging")
	fs.DurationVar(&c.SpoolAfter, "ingest.spool.after", c.SpoolAfter, "with -ingest.ack stored: store write latency beyond which batches are acknowledged from the spool and written later")
	fs.StringVar((*string)(&c.Ack), "ingest.ack", string(c.Ack), `when an export is acknowledged: "spooled" (once fsynced to the spool; the store is written in large grouped inserts) or "stored" (once inserted, or spooled when the store is slow or failing); empty: spooled with a spool, stored without`)
	fs.IntVar(&c.InsertMaxEvents, "ingest.insert.max-events", c.InsertMaxEvents, "with -ingest.ack spooled: most events per store insert")
	fs.DurationVar(&c.InsertMaxDelay, "ingest.insert.max-delay", c.InsertMaxDelay, "with -ingest.ack spooled: longest the store insert waits for more spooled batches (how far reports trail acknowledgements)")
	fs.IntVar(&c.DedupIDs, "ingest.dedup.ids", c.DedupIDs, "ids of recently stored events kept to drop retried exports (16 bytes each; journaled beside the spool, 8 bytes each)")
	fs.DurationVar(&c.DedupWindow, "ingest.dedup.window", c.DedupWindow, "how far back, in event time, stored ids are loaded at start-up")
}

// SpoolOff is the -ingest.spool.dir value that turns the spool off.
const SpoolOff = "off"

// Resolve turns the flags' shorthands into the configuration they mean:
// a spool directory of SpoolOff becomes none, and an empty Ack the mode
// that suits the spool (AckSpooled with one, AckStored without).
func (c *Config) Resolve() {
	if c.Spool.Dir == SpoolOff {
		c.Spool.Dir = ""
	}
	if c.Ack == "" {
		c.Ack = AckStored
		if c.Spool.Dir != "" {
			c.Ack = AckSpooled
		}
	}
}

// Validate reports the first invalid field by the name of its flag.
func (c Config) Validate() error {
	for _, l := range []struct{ name, addr string }{
		{"otlp.grpc.listen", c.GRPCListen},
		{"otlp.http.listen", c.HTTPListen},
	} {
		if _, _, err := net.SplitHostPort(l.addr); err != nil {
			return fmt.Errorf("%w: %s %q: %w", ErrInvalidConfig, l.name, l.addr, err)
		}
	}
	switch {
	case c.MaxRequestBytes <= 0:
		return fmt.Errorf("%w: otlp.max-request-bytes: must be positive, not %d", ErrInvalidConfig, c.MaxRequestBytes)
	case c.MaxInflightBytes < 0:
		return fmt.Errorf("%w: otlp.max-inflight-bytes: must not be negative, not %d", ErrInvalidConfig, c.MaxInflightBytes)
	case c.MaxInflightBytes > 0 && c.MaxInflightBytes < int64(c.MaxRequestBytes):
		return fmt.Errorf("%w: otlp.max-inflight-bytes: %d must be at least otlp.max-request-bytes (%d), or 0", ErrInvalidConfig, c.MaxInflightBytes, c.MaxRequestBytes)
	case c.BatchMaxEvents <= 0:
		return fmt.Errorf("%w: ingest.batch.max-events: must be positive, not %d", ErrInvalidConfig, c.BatchMaxEvents)
	case c.BatchMaxDelay <= 0:
		return fmt.Errorf("%w: ingest.batch.max-delay: must be positive, not %s", ErrInvalidConfig, c.BatchMaxDelay)
	case c.MaxPendingEvents < c.BatchMaxEvents:
		return fmt.Errorf("%w: ingest.max-pending-events: %d must be at least ingest.batch.max-events (%d)", ErrInvalidConfig, c.MaxPendingEvents, c.BatchMaxEvents)
	case c.WriteTimeout <= 0:
		return fmt.Errorf("%w: ingest.write-timeout: must be positive, not %s", ErrInvalidConfig, c.WriteTimeout)
	case c.RetryAfter <= 0:
		return fmt.Errorf("%w: ingest.retry-after: must be positive, not %s", ErrInvalidConfig, c.RetryAfter)
	case c.Limits.MaxAttributes <= 0:
		return fmt.Errorf("%w: ingest.limits.max-attributes: must be positive, not %d", ErrInvalidConfig, c.Limits.MaxAttributes)
	case c.Limits.MaxValueBytes <= 0:
		return fmt.Errorf("%w: ingest.limits.max-value-bytes: must be positive, not %d", ErrInvalidConfig, c.Limits.MaxValueBytes)
	case c.Limits.MaxArgsBytes <= 0:
		return fmt.Errorf("%w: ingest.limits.max-args-bytes: must be positive, not %d", ErrInvalidConfig, c.Limits.MaxArgsBytes)
	case c.Limits.MaxDefinitionBytes <= 0:
		return fmt.Errorf("%w: ingest.limits.max-definition-bytes: must be positive, not %d", ErrInvalidConfig, c.Limits.MaxDefinitionBytes)
	case c.Limits.MaxPast < 0:
		return fmt.Errorf("%w: ingest.limits.max-past: must not be negative, not %s", ErrInvalidConfig, c.Limits.MaxPast)
	case c.Limits.MaxFuture < 0:
		return fmt.Errorf("%w: ingest.limits.max-future: must not be negative, not %s", ErrInvalidConfig, c.Limits.MaxFuture)
	case c.Tenant == "":
		return fmt.Errorf("%w: ingest.tenant: must not be empty", ErrInvalidConfig)
	case c.DedupIDs < 0:
		return fmt.Errorf("%w: ingest.dedup.ids: must not be negative, not %d", ErrInvalidConfig, c.DedupIDs)
	case c.DedupWindow < 0:
		return fmt.Errorf("%w: ingest.dedup.window: must not be negative, not %s", ErrInvalidConfig, c.DedupWindow)
	}
	if c.Spool.Dir != "" {
		switch {
		case c.Spool.SegmentBytes < spool.MinSegmentBytes:
			return fmt.Errorf("%w: ingest.spool.segment-bytes: must be at least %d, not %d", ErrInvalidConfig, spool.MinSegmentBytes, c.Spool.SegmentBytes)
		case c.Spool.MaxBytes < c.Spool.SegmentBytes:
			return fmt.Errorf("%w: ingest.spool.max-bytes: %d must be at least ingest.spool.segment-bytes (%d)", ErrInvalidConfig, c.Spool.MaxBytes, c.Spool.SegmentBytes)
		}
		if err := c.Spool.Validate(); err != nil {
			return fmt.Errorf("%w: ingest.spool: %w", ErrInvalidConfig, err)
		}
		if c.SpoolAfter <= 0 {
			return fmt.Errorf("%w: ingest.spool.after: must be positive with a spool, not %s", ErrInvalidConfig, c.SpoolAfter)
		}
	}
	switch {
	case c.Ack != AckStored && c.Ack != AckSpooled && c.Ack != "":
		return fmt.Errorf("%w: ingest.ack: must be %q or %q, not %q", ErrInvalidConfig, AckStored, AckSpooled, c.Ack)
	case c.Ack == AckSpooled && c.Spool.Dir == "":
		return fmt.Errorf("%w: ingest.ack: %q needs a spool (-ingest.spool.dir)", ErrInvalidConfig, AckSpooled)
	case c.Ack == AckSpooled && c.InsertMaxEvents <= 0:
		return fmt.Errorf("%w: ingest.insert.max-events: must be positive, not %d", ErrInvalidConfig, c.InsertMaxEvents)
	case c.Ack == AckSpooled && c.InsertMaxDelay <= 0:
		return fmt.Errorf("%w: ingest.insert.max-delay: must be positive, not %s", ErrInvalidConfig, c.InsertMaxDelay)
	}
	return nil
}
