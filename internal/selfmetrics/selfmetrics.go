// Package selfmetrics is mcpdrift's self-observability: Prometheus
// collectors that read the ingester's and the API's counters at scrape
// time, the /metrics handler, and readiness checks shared by the binaries.
//
// The collectors keep no state of their own: every scrape reads
// ingest.Server.Stats and the authentication and redaction counters, so the
// metrics cannot drift from what the servers count and log.
package selfmetrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/internal/receiver"
)

// NewRegistry returns a registry holding the Go runtime and process
// collectors and cs.
func NewRegistry(cs ...prometheus.Collector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	all := append([]prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}, cs...)
	for _, c := range all {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// Handler serves g in the Prometheus text exposition format (or in the
// format the scraper negotiates).
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// IngestSource is what the ingest collector reads; *ingest.Server
// implements it.
type IngestSource interface {
	Stats() ingest.Stats
	AuthFailures() uint64
	Redacted() uint64
}

// AuthSource counts refused tokens; *api.Server implements it.
type AuthSource interface {
	AuthFailures() uint64
}

const ns = "mcpdrift"

func desc(name, help string, labels []string, constLabels prometheus.Labels) *prometheus.Desc {
	return prometheus.NewDesc(ns+"_"+name, help, labels, constLabels)
}

// authFailuresDesc is shared by the ingest and API collectors, told apart
// by their listener label.
func authFailuresDesc(listener string) *prometheus.Desc {
	return desc("auth_failures_total", "Requests refused for their bearer token (401/403), by listener.", nil, prometheus.Labels{"listener": listener})
}

// ingestCollector reads an IngestSource at scrape time.
type ingestCollector struct {
	src IngestSource

	requests, records, recordRejections, refused, legacyNames                     *prometheus.Desc
	batches, batchSize, insertSize, storeInsert, eventsStored, writeErrors, dedup *prometheus.Desc
	afterWindow                                                                   *prometheus.Desc
	spoolBytes, spoolFullest, spoolLimit, spoolRecords                            *prometheus.Desc
	spooled, replayed, fromMemory, quarantined, spoolErr                          *prometheus.Desc
	authFailures, redactions                                                      *prometheus.Desc
}

// NewIngestCollector returns a collector of src's counters.
func NewIngestCollector(src IngestSource) prometheus.Collector {
	return &ingestCollector{
		src:              src,
		requests:         desc("ingest_requests_total", "OTLP export requests received, both protocols and signals.", nil, nil),
		records:          desc("ingest_records_total", "Log records (signal=logs) and spans (signal=spans) decoded, by what became of them.", []string{"signal", "result"}, nil),
		recordRejections: desc("ingest_records_rejected_total", "Records rejected through partial success, by reason (unclassified: none of the known reasons).", []string{"signal", "reason"}, nil),
		legacyNames:      desc("ingest_legacy_names_total", "Uses of an event or attribute name of an earlier release (mcp.drift.*, mcp.client.*), read as its current name: zero once every sender has moved. Only the names used since the start are exported.", []string{"name"}, nil),
		refused:          desc("ingest_requests_refused_total", "Export requests answered with an error, by reason.", []string{"reason"}, nil),
		batches:          desc("ingest_batches_total", "Batches written, or tried, to the store; spool replays not included.", nil, nil),
		batchSize:        desc("ingest_batch_size_events", "Events per batch made durable at once: written to the store, or appended to the spool.", nil, nil),
		insertSize:       desc("store_insert_size_events", "Events per store insert, written directly or replayed from the spool.", nil, nil),
		storeInsert:      desc("store_insert_seconds", "Duration of the store writes, failed ones and spool replays included.", nil, nil),
		eventsStored:     desc("ingest_events_stored_total", "Events written durably to the store.", nil, nil),
		writeErrors:      desc("store_write_errors_total", "Failed store writes, retries included.", nil, nil),
		dedup:            desc("ingest_dedup_hits_total", "Events dropped as retries of events stored recently.", nil, nil),
		afterWindow:      desc("adapter_calls_after_window_total", "Calls written through an adapter after the end of the compatibility window its latest declaration states (dev.mcpdrift.adapter.window_end): an adapter used again after being declared retired.", nil, nil),
		spoolBytes:       desc("spool_bytes", "Size of the spool's segment files, every tenant's spool together.", nil, nil),
		spoolFullest:     desc("spool_fullest_bytes", "Size of the fullest tenant's spool, the one nearest to mcpdrift_spool_limit_bytes.", nil, nil),
		spoolLimit:       desc("spool_limit_bytes", "Size limit of each tenant's spool (-ingest.spool.max-bytes), beyond which exports are refused; 0 without a spool.", nil, nil),
		spoolRecords:     desc("spool_records", "Batches waiting in the spool for the store.", nil, nil),
		spooled:          desc("spool_spooled_total", "Batches appended to the spool.", nil, nil),
		replayed:         desc("spool_replayed_total", "Spooled batches written to the store.", nil, nil),
		fromMemory:       desc("spool_replayed_from_memory_total", "Spooled batches the replayer took from memory, without reading them back from disk.", nil, nil),
		quarantined:      desc("spool_quarantined_total", "Corrupt stretches and refused batches moved to the spool's quarantine.", nil, nil),
		spoolErr:         desc("spool_errors_total", "Spool appends and reads that failed.", nil, nil),
		authFailures:     authFailuresDesc("ingest"),
		redactions:       desc("redactions_total", "Values replaced by the ingest redaction rules.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *ingestCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.requests, c.records, c.recordRejections, c.refused, c.legacyNames, c.batches, c.batchSize, c.insertSize,
		c.storeInsert, c.eventsStored, c.writeErrors, c.dedup, c.afterWindow, c.spoolBytes, c.spoolFullest, c.spoolLimit, c.spoolRecords,
		c.spooled, c.replayed, c.fromMemory, c.quarantined, c.spoolErr, c.authFailures, c.redactions,
	} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *ingestCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	counter(c.requests, st.Requests)
	counter(c.records, st.Accepted, "logs", "accepted")
	counter(c.records, st.Rejected, "logs", "rejected")
	counter(c.records, st.Ignored, "logs", "ignored")
	counter(c.records, st.SpansAccepted, "spans", "accepted")
	counter(c.records, st.SpansRejected, "spans", "rejected")
	counter(c.records, st.SpansIgnored, "spans", "ignored")
	for _, r := range receiver.RejectReasons() {
		counter(c.recordRejections, st.RejectedByReason[r], "logs", r)
		counter(c.recordRejections, st.SpansRejectedByReason[r], "spans", r)
	}
	for name, n := range st.LegacyNames {
		counter(c.legacyNames, n, name)
	}
	rf := st.Refused
	for _, r := range []struct {
		reason string
		n      uint64
	}{
		{"method", rf.Method}, {"media_type", rf.MediaType}, {"too_large", rf.TooLarge},
		{"malformed", rf.Malformed}, {"overloaded", rf.Overloaded}, {"spool_full", rf.SpoolFull}, {"inflight", rf.Inflight},
		{"shutting_down", rf.ShuttingDown}, {"store_retryable", rf.StoreRetryable},
		{"invalid_data", rf.InvalidData}, {"internal", rf.Internal}, {"canceled", rf.Canceled},
	} {
		counter(c.refused, r.n, r.reason)
	}
	counter(c.batches, st.Batches)
	ch <- histogram(c.batchSize, st.BatchSize)
	ch <- histogram(c.insertSize, st.InsertSize)
	ch <- histogram(c.storeInsert, st.StoreWrite)
	counter(c.eventsStored, st.EventsStored)
	counter(c.writeErrors, st.WriteErrors)
	counter(c.dedup, st.DedupHits)
	counter(c.afterWindow, st.AdapterCallsAfterWindow)
	gauge(c.spoolBytes, st.Spool.Bytes)
	gauge(c.spoolFullest, st.Spool.FullestBytes)
	gauge(c.spoolLimit, st.Spool.MaxBytes)
	gauge(c.spoolRecords, st.Spool.Records)
	counter(c.spooled, st.Spool.Spooled)
	counter(c.replayed, st.Spool.Replayed)
	counter(c.fromMemory, st.Spool.ReplayedFromMemory)
	counter(c.quarantined, st.Spool.Quarantined)
	counter(c.spoolErr, st.Spool.Errors)
	counter(c.authFailures, c.src.AuthFailures())
	counter(c.redactions, c.src.Redacted())
}

// histogram turns an ingest histogram into a Prometheus one, with
// cumulative buckets.
func histogram(d *prometheus.Desc, h ingest.Histogram) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.Bounds))
	var cum uint64
	for i, b := range h.Bounds {
		cum += h.Counts[i]
		buckets[b] = cum
	}
	return prometheus.MustNewConstHistogram(d, h.Count, h.Sum, buckets)
}

// apiCollector reads an AuthSource at scrape time.
type apiCollector struct {
	src          AuthSource
	authFailures *prometheus.Desc
}

// NewAPICollector returns a collector of the API's counters.
func NewAPICollector(src AuthSource) prometheus.Collector {
	return &apiCollector{src: src, authFailures: authFailuresDesc("api")}
}

// Describe implements prometheus.Collector.
func (c *apiCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.authFailures }

// Collect implements prometheus.Collector.
func (c *apiCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.authFailures, prometheus.CounterValue, float64(c.src.AuthFailures()))
}

// ClientViewSource is what the client views' releaser tells at scrape
// time.
type ClientViewSource interface {
	// Released returns how many client views this process counted alone,
	// and how many releases it ran.
	Released() (views, runs uint64)
}

// clientViewCollector reads a ClientViewSource at scrape time.
type clientViewCollector struct {
	src            ClientViewSource
	released, runs *prometheus.Desc
}

// NewClientViewCollector returns a collector of the client views'
// releaser.
func NewClientViewCollector(src ClientViewSource) prometheus.Collector {
	return &clientViewCollector{
		src: src,
		released: desc("client_views_released_total",
			"Calls seen only from the client's side (CLIENT spans) that this process counted, their server span absent after the hold.", nil, nil),
		runs: desc("client_view_releases_total",
			"Releases of held client views that this process ran.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *clientViewCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.released; ch <- c.runs }

// Collect implements prometheus.Collector.
func (c *clientViewCollector) Collect(ch chan<- prometheus.Metric) {
	views, runs := c.src.Released()
	ch <- prometheus.MustNewConstMetric(c.released, prometheus.CounterValue, float64(views))
	ch <- prometheus.MustNewConstMetric(c.runs, prometheus.CounterValue, float64(runs))
}
