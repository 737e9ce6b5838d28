package receiver

import (
	"sync/atomic"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// Stats are the receiver's counters since it was created; every field
// only grows. Package ingest adds the pipeline's to them.
type Stats struct {
	// Requests is the export requests received, over both protocols and
	// both signals.
	Requests uint64
	// Records is the log records carried by the logs requests that were
	// decoded.
	Records uint64
	// Accepted is the log records decoded into drift events.
	Accepted uint64
	// Rejected is the drift log records that failed validation, reported to
	// the client through partial success.
	Rejected uint64
	// Ignored is the log records that are not drift events.
	Ignored uint64
	// Spans is the spans carried by the trace requests that were decoded.
	Spans uint64
	// SpansAccepted is the spans decoded into drift events.
	SpansAccepted uint64
	// SpansRejected is the MCP spans that failed validation, reported to
	// the client through partial success.
	SpansRejected uint64
	// SpansIgnored is the spans that do not become drift events.
	SpansIgnored uint64
	// RejectedByReason counts the rejected log records by reason (see
	// RejectReasons); "unclassified" counts rejections of no known reason.
	// The reasons add up to Rejected.
	RejectedByReason map[string]uint64
	// SpansRejectedByReason is RejectedByReason for spans.
	SpansRejectedByReason map[string]uint64
	// LegacyNames counts the uses of the names of earlier releases
	// (otelschema.LegacyNames) in records and spans, by name; only the
	// names used since the start are present.
	LegacyNames map[string]uint64
	// Refused counts the requests answered with an error, by reason.
	Refused RefusedStats
}

// RefusedStats counts refused requests by reason.
type RefusedStats struct {
	// Method is HTTP requests with a method other than POST (405).
	Method uint64
	// MediaType is HTTP requests with an unsupported Content-Type or
	// Content-Encoding (415).
	MediaType uint64
	// TooLarge is requests over MaxRequestBytes, compressed or not (413).
	TooLarge uint64
	// Malformed is requests whose body could not be decoded (400).
	Malformed uint64
	// Overloaded is requests refused because MaxPendingEvents was reached
	// (503 / UNAVAILABLE).
	Overloaded uint64
	// Inflight is requests refused before their body was read because it
	// did not fit in MaxInflightBytes (503 / RESOURCE_EXHAUSTED, retryable).
	Inflight uint64
	// SpoolFull is requests refused because the store could not take their
	// events in time and the spool had no room for them (503 / UNAVAILABLE).
	SpoolFull uint64
	// ShuttingDown is requests refused during shutdown (503 / UNAVAILABLE).
	ShuttingDown uint64
	// StoreRetryable is requests whose events the store failed to write with
	// a retryable error (503 / UNAVAILABLE).
	StoreRetryable uint64
	// InvalidData is requests whose events the store refused for good
	// (400 / INVALID_ARGUMENT).
	InvalidData uint64
	// Internal is requests that failed for a reason on the ingester's or the
	// store's side that a retry cannot fix (500 / INTERNAL).
	Internal uint64
	// Canceled is requests whose client went away before the answer.
	Canceled uint64
}

// counters are the atomic counters behind Stats.
type counters struct {
	requests, records, accepted, rejected, ignored    atomic.Uint64
	spans, spansAccepted, spansRejected, spansIgnored atomic.Uint64

	refusedMethod, refusedMediaType, refusedTooLarge, refusedMalformed atomic.Uint64
	refusedOverloaded, refusedShuttingDown, refusedStoreRetryable      atomic.Uint64
	refusedInvalidData, refusedInternal, refusedCanceled               atomic.Uint64
	refusedSpoolFull, refusedInflight                                  atomic.Uint64

	// rejectedBy counts rejected records by signal (0 logs, 1 spans) and
	// reason, indexed as RejectReasons.
	rejectedBy [2][len(rejectReasons)]atomic.Uint64
	// legacy counts the uses of the names of earlier releases, indexed as
	// otelschema.LegacyNames.
	legacy []atomic.Uint64
}

// rejectReasons names otelschema.Reasons, in their order, for
// Stats.RejectedByReason; the last is every other rejection.
var rejectReasons = [len(otelschema.Reasons) + 1]string{
	"unknown_event", "missing_attribute", "wrong_type", "unknown_value",
	"too_many_attributes", "too_long", "invalid_utf8", "time_range",
	"negative", "unclassified",
}

// RejectReasons returns the reasons of Stats.RejectedByReason, in order.
func RejectReasons() []string {
	return append([]string(nil), rejectReasons[:]...)
}

// countLegacy adds the uses of the names of earlier releases in res.
func (c *counters) countLegacy(res otelschema.Result) {
	for i, n := range res.Legacy {
		if n > 0 && i < len(c.legacy) {
			c.legacy[i].Add(uint64(n))
		}
	}
}

// countRejections adds the rejections of res to the per-reason counters.
func (c *counters) countRejections(res otelschema.Result) {
	if res.Rejected == 0 {
		return
	}
	sig := 0
	if res.Signal == otelschema.SignalTraces {
		sig = 1
	}
	by := &c.rejectedBy[sig]
	for i, n := range res.ByReason {
		if n > 0 {
			by[i].Add(uint64(n))
		}
	}
}

func (c *counters) snapshot() Stats {
	st := Stats{
		Requests:              c.requests.Load(),
		Records:               c.records.Load(),
		Accepted:              c.accepted.Load(),
		Rejected:              c.rejected.Load(),
		Ignored:               c.ignored.Load(),
		Spans:                 c.spans.Load(),
		SpansAccepted:         c.spansAccepted.Load(),
		SpansRejected:         c.spansRejected.Load(),
		SpansIgnored:          c.spansIgnored.Load(),
		RejectedByReason:      map[string]uint64{},
		SpansRejectedByReason: map[string]uint64{},
		LegacyNames:           map[string]uint64{},
		Refused: RefusedStats{
			Method:         c.refusedMethod.Load(),
			MediaType:      c.refusedMediaType.Load(),
			TooLarge:       c.refusedTooLarge.Load(),
			Malformed:      c.refusedMalformed.Load(),
			Overloaded:     c.refusedOverloaded.Load(),
			SpoolFull:      c.refusedSpoolFull.Load(),
			Inflight:       c.refusedInflight.Load(),
			ShuttingDown:   c.refusedShuttingDown.Load(),
			StoreRetryable: c.refusedStoreRetryable.Load(),
			InvalidData:    c.refusedInvalidData.Load(),
			Internal:       c.refusedInternal.Load(),
			Canceled:       c.refusedCanceled.Load(),
		},
	}
	for i, name := range rejectReasons {
		st.RejectedByReason[name] = c.rejectedBy[0][i].Load()
		st.SpansRejectedByReason[name] = c.rejectedBy[1][i].Load()
	}
	for i, name := range otelschema.LegacyNames() {
		if i < len(c.legacy) {
			if n := c.legacy[i].Load(); n > 0 {
				st.LegacyNames[name] = n
			}
		}
	}
	return st
}
