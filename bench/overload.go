package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/mcpdrift/mcpdrift/internal/spool"
	"github.com/mcpdrift/mcpdrift/store"
)

// drainMax bounds the wait, after the flood, for the ingester's spool and
// pending batches to reach the store.
const drainMax = 5 * time.Minute

// OverloadResult is the overload suite's measurement: a flood of exports
// into an ingester whose capacity is deliberately small.
type OverloadResult struct {
	// Duration is the flood's configured length; Wall is the seconds from
	// the start signal to the last answer.
	Duration float64 `json:"duration_s"`
	Wall     float64 `json:"wall_s"`
	// Streams is the flood's concurrent senders.
	Streams int `json:"streams"`
	// MaxPendingEvents, BatchMaxEvents and SpoolMaxBytes are the
	// ingester's capacity.
	MaxPendingEvents int   `json:"max_pending_events"`
	BatchMaxEvents   int   `json:"batch_max_events"`
	SpoolMaxBytes    int64 `json:"spool_max_bytes"`
	// Answers is what the sender received.
	Answers floodCounts `json:"answers"`
	// Refused is the ingester's count of refused requests by reason.
	Refused receiver.RefusedStats `json:"refused"`
	// Spooled is the events acknowledged once spooled; SpoolPeakBytes the
	// largest spool size seen while flooding (sampled).
	Spooled        uint64 `json:"spooled_events"`
	SpoolPeakBytes int64  `json:"spool_peak_bytes"`
	// Drain is the seconds from the last answer until the spool and the
	// batches were empty.
	Drain float64 `json:"drain_s"`
	// Stored is the events in the store after the drain.
	Stored int64 `json:"stored"`
	// RSSBefore is the ingester process's VmRSS before the flood, in
	// bytes; PeakRSS its VmHWM after it — the peak during the flood when
	// PeakReset (the peak was reset through /proc/self/clear_refs before
	// the flood), else the process's lifetime peak.
	RSSBefore     int64 `json:"rss_before_bytes"`
	PeakRSSBefore int64 `json:"peak_rss_before_bytes"`
	PeakRSS       int64 `json:"peak_rss_bytes"`
	PeakReset     bool  `json:"peak_reset"`
}

// OfferedPerSecond is the events sent per wall-clock second.
func (o *OverloadResult) OfferedPerSecond() float64 {
	return float64(o.Answers.OfferedEvents) / o.Wall
}

// AcceptedPerSecond is the events accepted per wall-clock second.
func (o *OverloadResult) AcceptedPerSecond() float64 {
	return float64(o.Answers.AcceptedEvents) / o.Wall
}

// RefusedShare is the share of the requests refused with UNAVAILABLE or
// RESOURCE_EXHAUSTED (HTTP 503 or 429), in percent.
func (o *OverloadResult) RefusedShare() float64 {
	if o.Answers.Requests == 0 {
		return 0
	}
	return 100 * float64(o.Answers.Unavailable+o.Answers.Exhausted) / float64(o.Answers.Requests)
}

// runOverloadSuite builds the flood's requests, starts an ingester with a
// small capacity over a fresh embedded store, floods it from the sender
// child, waits for the spool to drain and checks that the store holds
// every event accepted, no more and no less.
func runOverloadSuite(ctx context.Context, cfg Config, tmp string, rep *Report, w io.Writer) error {
	fmt.Fprintf(w, "overload: building %d events into requests of %d records…\n", cfg.OverloadEvents, cfg.OverloadBatch)
	rs, err := buildRequests(filepath.Join(tmp, "overload.bin"), cfg.OverloadEvents, cfg.OverloadBatch, cfg.Seed+1)
	if err != nil {
		return fmt.Errorf("overload: %w", err)
	}
	defer rs.close()
	if err := writeCounts(rs); err != nil {
		return fmt.Errorf("overload: %w", err)
	}

	dir, err := os.MkdirTemp(cfg.TempDir, "mcpdrift-bench-overload-")
	if err != nil {
		return fmt.Errorf("overload: cannot create store directory: %w", err)
	}
	defer os.RemoveAll(dir)
	st, db, err := openStore(ctx, filepath.Join(dir, "data"), rep)
	if err != nil {
		return fmt.Errorf("overload: %w", err)
	}
	defer st.Close()

	icfg := ingest.DefaultConfig()
	icfg.GRPCListen, icfg.HTTPListen = "127.0.0.1:0", "127.0.0.1:0"
	icfg.MaxPendingEvents = cfg.OverloadMaxPending
	icfg.BatchMaxEvents = max(1, min(icfg.BatchMaxEvents, cfg.OverloadMaxPending/2))
	icfg.Spool = spool.DefaultConfig(filepath.Join(dir, "spool"))
	icfg.Spool.MaxBytes = cfg.OverloadSpoolBytes
	icfg.Spool.SegmentBytes = max(cfg.OverloadSpoolBytes/4, 64<<10)
	if ingest.AckMode(cfg.Ack) == ingest.AckSpooled {
		icfg.Ack = ingest.AckSpooled
	}
	res := &OverloadResult{
		Duration: cfg.OverloadDuration.Seconds(), Streams: cfg.OverloadStreams,
		MaxPendingEvents: icfg.MaxPendingEvents, BatchMaxEvents: icfg.BatchMaxEvents, SpoolMaxBytes: icfg.Spool.MaxBytes,
	}
	rep.Overload = res
	srv, err := ingest.New(icfg, st, cfg.Logger)
	if err != nil {
		return fmt.Errorf("overload: %w", err)
	}
	shutdown := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return srv.Shutdown(sctx)
	}
	if err := srv.Start(ctx); err != nil {
		return fmt.Errorf("overload: %w", errors.Join(err, shutdown()))
	}
	cl, err := startClient(clientSpec{Addr: srv.GRPCAddr().String(), File: rs.path, Streams: cfg.OverloadStreams, Flood: cfg.OverloadDuration})
	if err != nil {
		return fmt.Errorf("overload: %w", errors.Join(err, shutdown()))
	}

	res.PeakReset = resetPeakRSS()
	res.RSSBefore, res.PeakRSSBefore = procStatus("VmRSS"), procStatus("VmHWM")
	fmt.Fprintf(w, "overload: flooding for %s on %d streams (MaxPendingEvents %d, spool %d bytes)…\n",
		cfg.OverloadDuration, cfg.OverloadStreams, icfg.MaxPendingEvents, icfg.Spool.MaxBytes)
	stopSampling := make(chan struct{})
	sampled := make(chan int64, 1)
	go func() {
		var peak int64
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			peak = max(peak, srv.Stats().Spool.Bytes)
			select {
			case <-stopSampling:
				sampled <- peak
				return
			case <-t.C:
			}
		}
	}()
	cres, err := cl.run()
	close(stopSampling)
	res.SpoolPeakBytes = <-sampled
	res.PeakRSS = procStatus("VmHWM")
	if cres.Flood != nil {
		res.Answers = *cres.Flood
	}
	res.Wall = time.Duration(cres.Wall).Seconds()
	if err != nil {
		return fmt.Errorf("overload: %w", errors.Join(err, shutdown()))
	}

	// Drain: every export was answered, so every event acknowledged is
	// stored or spooled; wait until the replayer has emptied the spool.
	t0 := time.Now()
	for time.Since(t0) < drainMax && ctx.Err() == nil && srv.Stats().Spool.Records > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	stats := srv.Stats()
	if err := shutdown(); err != nil {
		return fmt.Errorf("overload: %w", err)
	}
	res.Drain = time.Since(t0).Seconds()
	res.Refused, res.Spooled = stats.Refused, stats.Spool.SpooledEvents

	var rows []struct {
		N uint64 `json:"n"`
	}
	q := store.Query{Name: "bench_overload_count", SQL: "SELECT count() AS n FROM " + db + ".events WHERE tenant = {tenant:String}"}
	if err := st.Query(ctx, q, store.Params{}.String("tenant", store.DefaultTenant), &rows); err != nil {
		return fmt.Errorf("overload: cannot count stored events: %w", err)
	}
	if len(rows) != 1 {
		return fmt.Errorf("overload: count query returned %d rows", len(rows))
	}
	res.Stored = int64(rows[0].N)
	a := res.Answers
	fmt.Fprintf(w, "overload: %d requests: %d ok, %d UNAVAILABLE (%d with RetryInfo), %d RESOURCE_EXHAUSTED, other %v; stored %d of %d accepted\n",
		a.Requests, a.OK, a.Unavailable, a.UnavailableRetry, a.Exhausted, a.Other, res.Stored, a.AcceptedEvents)
	switch {
	case res.Stored != a.AcceptedEvents:
		return fmt.Errorf("overload: stored %d events, %d were accepted", res.Stored, a.AcceptedEvents)
	case len(a.Other) > 0:
		return fmt.Errorf("overload: unexpected answers %v", a.Other)
	case a.Unavailable != a.UnavailableRetry:
		return fmt.Errorf("overload: %d of %d UNAVAILABLE answers carried no RetryInfo", a.Unavailable-a.UnavailableRetry, a.Unavailable)
	}
	return nil
}

// resetPeakRSS resets the process's VmHWM to its current RSS through
// /proc/self/clear_refs, and reports whether it could.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// procStatus returns a "kB" field of /proc/self/status in bytes, or 0.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != field {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return n << 10
	}
	return 0
}
