package ingest

import "sync/atomic"

// Stats are the ingester's counters since it was created. Every field only
// grows.
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
	// EventsStored is the events written durably.
	EventsStored uint64
	// WriteErrors is the failed store writes, retries of a part included.
	WriteErrors uint64
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
	eventsStored, writeErrors                         atomic.Uint64

	refusedMethod, refusedMediaType, refusedTooLarge, refusedMalformed atomic.Uint64
	refusedOverloaded, refusedShuttingDown, refusedStoreRetryable      atomic.Uint64
	refusedInvalidData, refusedInternal, refusedCanceled               atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Requests:      c.requests.Load(),
		Records:       c.records.Load(),
		Accepted:      c.accepted.Load(),
		Rejected:      c.rejected.Load(),
		Ignored:       c.ignored.Load(),
		Spans:         c.spans.Load(),
		SpansAccepted: c.spansAccepted.Load(),
		SpansRejected: c.spansRejected.Load(),
		SpansIgnored:  c.spansIgnored.Load(),
		EventsStored:  c.eventsStored.Load(),
		WriteErrors:   c.writeErrors.Load(),
		Refused: RefusedStats{
			Method:         c.refusedMethod.Load(),
			MediaType:      c.refusedMediaType.Load(),
			TooLarge:       c.refusedTooLarge.Load(),
			Malformed:      c.refusedMalformed.Load(),
			Overloaded:     c.refusedOverloaded.Load(),
			ShuttingDown:   c.refusedShuttingDown.Load(),
			StoreRetryable: c.refusedStoreRetryable.Load(),
			InvalidData:    c.refusedInvalidData.Load(),
			Internal:       c.refusedInternal.Load(),
			Canceled:       c.refusedCanceled.Load(),
		},
	}
}
