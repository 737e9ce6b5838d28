package otelschema

import (
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
)

// Limits bound what one record may carry. A record over a limit is rejected
// with a message that names the limit.
type Limits struct {
	// MaxAttributes is the most attributes one record may carry (resource,
	// scope and record attributes together).
	MaxAttributes int
	// MaxValueBytes is the longest string attribute value, except arguments.
	MaxValueBytes int
	// MaxArgsBytes is the longest mcp.drift.args.raw / .normalized value.
	MaxArgsBytes int
	// MaxPast rejects events older than now minus this; 0 disables the check.
	MaxPast time.Duration
	// MaxFuture rejects events later than now plus this; 0 disables the check.
	MaxFuture time.Duration
}

// DefaultLimits returns the limits the ingester applies unless configured.
func DefaultLimits() Limits {
	return Limits{
		MaxAttributes: 256,
		MaxValueBytes: 16 << 10,
		MaxArgsBytes:  256 << 10,
		MaxPast:       30 * 24 * time.Hour,
		MaxFuture:     time.Hour,
	}
}

// Decoder turns OTLP records into validated events.
type Decoder struct {
	Limits Limits
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Result tells what became of the records of one request.
type Result struct {
	Accepted int // records decoded into events
	Rejected int // drift records that failed validation
	Ignored  int // records that are not drift events
	// Errors holds the first few rejections (see MaxErrors), in order.
	Errors []*RecordError
}

// MaxErrors is how many rejections a Result keeps.
const MaxErrors = 5

// DecodeLogs appends the drift events found in ld to dst and returns it with
// what became of every record.
func (d *Decoder) DecodeLogs(ld plog.Logs, dst []Event) ([]Event, Result) {
	panic("unimplemented: being written")
}

// RecordError is the rejection of one record, located in its request.
type RecordError struct {
	Resource, Scope, Record int
	Err                     error
}
