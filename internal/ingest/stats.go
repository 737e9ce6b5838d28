package ingest

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

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
	// AdapterCallsAfterWindow is the calls written through an adapter
	// after the end of the compatibility window its latest declaration
	// states: an adapter used again after being declared retired.
	AdapterCallsAfterWindow uint64
	// DedupHits is the events dropped because an event with the same id
	// was made durable recently: a client's retry of a stored export.
	DedupHits uint64
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
	// Batches is the batches the batchers wrote or tried to write, replays
	// from the spool not included.
	Batches uint64
	// BatchSize is the distribution of those batches' sizes, in events.
	// With AckSpooled a batch is what one spool append holds.
	BatchSize Histogram
	// InsertSize is the distribution of the store inserts' sizes, in
	// events, written directly or replayed from the spool; with
	// AckSpooled the replayer groups batches into larger inserts.
	InsertSize Histogram
	// StoreWrite is the distribution of the store writes' durations, in
	// seconds, failed ones and replays from the spool included.
	StoreWrite Histogram
	// Spool is the state of the spool, zero without one.
	Spool SpoolStats
	// Refused counts the requests answered with an error, by reason.
	Refused RefusedStats
}

// SpoolStats describe the spool.
type SpoolStats struct {
	// Bytes is the size of the spool's segment files now (a gauge), every
	// tenant's spool together.
	Bytes int64
	// FullestBytes is the size of the fullest tenant's spool now (a gauge),
	// the one nearest to MaxBytes.
	FullestBytes int64
	// MaxBytes is the size limit of each tenant's spool
	// (Config.Spool.MaxBytes), beyond which exports are refused.
	MaxBytes int64
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
	// ReplayedFromMemory is the spooled batches the replayer took from
	// the spool's memory rather than reading them back from disk
	// (spool.Config.CacheEvents).
	ReplayedFromMemory uint64
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
	eventsStored, writeErrors, dedupHits              atomic.Uint64
	spooled, spooledEvents, replayed, replayedEvents  atomic.Uint64
	spoolErrors                                       atomic.Uint64
	retired                                           retirement

	refusedMethod, refusedMediaType, refusedTooLarge, refusedMalformed atomic.Uint64
	refusedOverloaded, refusedShuttingDown, refusedStoreRetryable      atomic.Uint64
	refusedInvalidData, refusedInternal, refusedCanceled               atomic.Uint64
	refusedSpoolFull, refusedInflight                                  atomic.Uint64

	// rejectedBy counts rejected records by signal (0 logs, 1 spans) and
	// reason, indexed as RejectReasons.
	rejectedBy [2][len(rejectReasons)]atomic.Uint64
	// legacy counts the uses of the names of earlier releases, indexed as
	// otelschema.LegacyNames.
	legacy     []atomic.Uint64
	batches    atomic.Uint64
	batchSize  histogram
	insertSize histogram
	storeWrite histogram
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

// Histogram is a snapshot of a histogram with fixed buckets.
type Histogram struct {
	// Bounds are the buckets' upper bounds (inclusive), ascending.
	Bounds []float64
	// Counts are the observations of each bucket, not cumulative:
	// Counts[i] is those above Bounds[i-1] and at most Bounds[i], and
	// Counts[len(Bounds)] those above the last bound.
	Counts []uint64
	// Count is the observations, Sum their total.
	Count uint64
	Sum   float64
}

// Bucket bounds of the histograms of Stats.
var (
	batchSizeBounds  = []float64{1, 10, 100, 1000, 5000, 10000, 50000, 100000}
	storeWriteBounds = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
)

// histogram is a lock-free histogram over fixed bounds; sum is kept in
// units of 1/scale so that it can be an integer.
type histogram struct {
	counts [16]atomic.Uint64 // len(bounds)+1 used
	count  atomic.Uint64
	sum    atomic.Uint64
}

func (h *histogram) observe(bounds []float64, scale, v float64) {
	i := len(bounds)
	for j, b := range bounds {
		if v <= b {
			i = j
			break
		}
	}
	h.counts[i].Add(1)
	h.count.Add(1)
	h.sum.Add(uint64(math.Round(v * scale)))
}

func (h *histogram) snapshot(bounds []float64, scale float64) Histogram {
	out := Histogram{Bounds: bounds, Counts: make([]uint64, len(bounds)+1)}
	for i := range out.Counts {
		out.Counts[i] = h.counts[i].Load()
	}
	out.Count = h.count.Load()
	out.Sum = float64(h.sum.Load()) / scale
	return out
}

// observeBatch records a batch of n events about to be written.
func (c *counters) observeBatch(n int) {
	c.batches.Add(1)
	c.batchSize.observe(batchSizeBounds, 1, float64(n))
}

// observeInsert records a store insert of n events, written directly or
// replayed from the spool.
func (c *counters) observeInsert(n int) {
	c.insertSize.observe(batchSizeBounds, 1, float64(n))
}

// observeWrite records a store write that started at start.
func (c *counters) observeWrite(start time.Time) {
	c.storeWrite.observe(storeWriteBounds, 1e9, time.Since(start).Seconds())
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
		EventsStored:          c.eventsStored.Load(),
		WriteErrors:           c.writeErrors.Load(),
		DedupHits:             c.dedupHits.Load(),
		Batches:               c.batches.Load(),
		BatchSize:             c.batchSize.snapshot(batchSizeBounds, 1),
		InsertSize:            c.insertSize.snapshot(batchSizeBounds, 1),
		StoreWrite:            c.storeWrite.snapshot(storeWriteBounds, 1e9),
		RejectedByReason:      map[string]uint64{},
		SpansRejectedByReason: map[string]uint64{},
		LegacyNames:           map[string]uint64{},
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
			Inflight:       c.refusedInflight.Load(),
			ShuttingDown:   c.refusedShuttingDown.Load(),
			StoreRetryable: c.refusedStoreRetryable.Load(),
			InvalidData:    c.refusedInvalidData.Load(),
			Internal:       c.refusedInternal.Load(),
			Canceled:       c.refusedCanceled.Load(),
		},
	}
	st.AdapterCallsAfterWindow = c.retired.calls.Load()
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
