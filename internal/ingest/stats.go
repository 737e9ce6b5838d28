package ingest

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
)

// Stats are the ingester's counters since it was created. Every field only
// grows, but Spool.Bytes and Spool.Records.
type Stats struct {
	// Stats are the receiver's: requests, records, spans, refusals.
	receiver.Stats
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

// counters are the atomic counters behind Stats.
type counters struct {
	eventsStored, writeErrors, dedupHits             atomic.Uint64
	spooled, spooledEvents, replayed, replayedEvents atomic.Uint64
	spoolErrors                                      atomic.Uint64
	retired                                          retirement

	batches    atomic.Uint64
	batchSize  histogram
	insertSize histogram
	storeWrite histogram
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

// snapshot is the pipeline's counters beside the receiver's rs.
func (c *counters) snapshot(rs receiver.Stats) Stats {
	st := Stats{
		Stats:        rs,
		EventsStored: c.eventsStored.Load(),
		WriteErrors:  c.writeErrors.Load(),
		DedupHits:    c.dedupHits.Load(),
		Batches:      c.batches.Load(),
		BatchSize:    c.batchSize.snapshot(batchSizeBounds, 1),
		InsertSize:   c.insertSize.snapshot(batchSizeBounds, 1),
		StoreWrite:   c.storeWrite.snapshot(storeWriteBounds, 1e9),
		Spool: SpoolStats{
			Spooled:        c.spooled.Load(),
			SpooledEvents:  c.spooledEvents.Load(),
			Replayed:       c.replayed.Load(),
			ReplayedEvents: c.replayedEvents.Load(),
			Errors:         c.spoolErrors.Load(),
		},
	}
	st.AdapterCallsAfterWindow = c.retired.calls.Load()
	return st
}
