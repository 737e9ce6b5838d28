package ingest

import "sync/atomic"

// Stats are the ingester's counters since it was created. Every field only
// grows, but Spool.Bytes and Spool.Records.
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
	// DedupHits is the events dropped because an event with the same id
	// was made durable recently: a client's retry of a stored export.
	DedupHits uint64
	// Spool is the state of the spool, zero without one.
	Spool SpoolStats
	// Refused counts the requests answered with an error, by reason.
	Refused RefusedStats
}

// SpoolStats describe the spool.
type SpoolStats struct {
	// Bytes is the size of the spool's segment files now (a gauge).
	Bytes int64
	// Records is the batches waiting in the spool now (a gauge).
	Records int64
	// Spooled is the batches appended to the spool.
	Spooled uint64
	// SpooledEvents is the events of those batches, acknowledged once
	// spooled.
	SpooledEvents uint64
	// Replayed is the spooled batches written to the store.
	Replayed uint64
	// ReplayedEvents is the events of those batches.
	ReplayedEvents uint64
	// Quarantined is the corrupt stretches, and the batches the store
	// refused for good, moved to the spool's quarantine directory.
	Quarantined uint64
	// Errors is the appends that failed (the batch was refused) and the
	// spool reads that failed.
	Errors uint64
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
	eventsStored, writeErrors, dedupHits              atomic.Uint64
	spooled, spooledEvents, replayed, replayedEvents  atomic.Uint64
	spoolErrors                                       atomic.Uint64

	refusedMethod, refusedMediaType, refusedTooLarge, refusedMalformed atomic.Uint64
	refusedOverloaded, refusedShuttingDown, refusedStoreRetryable      atomic.Uint64
	refusedInvalidData, refusedInternal, refusedCanceled               atomic.Uint64
	refusedSpoolFull                                                   atomic.Uint64
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
		DedupHits:     c.dedupHits.Load(),
		Spool: SpoolStats{
			Spooled:        c.spooled.Load(),
			SpooledEvents:  c.spooledEvents.Load(),
			Replayed:       c.replayed.Load(),
			ReplayedEvents: c.replayedEvents.Load(),
			Errors:         c.spoolErrors.Load(),
		},
		Refused: RefusedStats{
			Method:         c.refusedMethod.Load(),
			MediaType:      c.refusedMediaType.Load(),
			TooLarge:       c.refusedTooLarge.Load(),
			Malformed:      c.refusedMalformed.Load(),
			Overloaded:     c.refusedOverloaded.Load(),
			SpoolFull:      c.refusedSpoolFull.Load(),
			ShuttingDown:   c.refusedShuttingDown.Load(),
			StoreRetryable: c.refusedStoreRetryable.Load(),
			InvalidData:    c.refusedInvalidData.Load(),
			Internal:       c.refusedInternal.Load(),
			Canceled:       c.refusedCanceled.Load(),
		},
	}
}
