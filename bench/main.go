// Command bench is mcpdrift's benchmark suite, run by `make bench`
// (`go run ./bench $(BENCHARGS)`). It measures, on the same requests and in
// the same run:
//
//	a. a bare pdata decode of the OTLP requests (the baseline);
//	b. the ingester without a store: OTLP/gRPC on loopback, decode,
//	   validate, batch, answer — into a store.Writer that discards;
//	c. the ingester into the embedded store (chDB), materialised views
//	   included, checking that every event sent was stored; and the
//	   scale-out ingest role, assembled as `ingest` runs it, into a
//	   ClickHouse server run from libchdb in its own process, CPU of both
//	   processes counted, the rows per INSERT the server ran, the CPU
//	   and the peak memory of those INSERTs and the merges they left
//	   (-server-flags gives that ingest role other flags); then
//	   the engine's floors for the same rows: Native blocks of 200,000
//	   inserted by the engine itself into the raw table alone and into
//	   events_in with every view, each store figure beside its ratio to
//	   the all-views floor;
//	d. the sending client's own cost.
//
// Every ingester runs with the default redaction rules, as the commands
// always do; -redact=false leaves redaction out, to show its share.
//
// The requests are built once, before anything is measured, from the drift
// simulator's realistic stream, grouped by resource as SDK exporters send
// them. The sender runs in a child process that replays the pre-marshalled
// bytes with a pass-through gRPC codec, so the ingester's process CPU
// (getrusage user + system, chDB's threads included) is measured alone and
// the client's is measured on its own. CPU per event is the figure to read
// on a noisy machine; events/s depends on the machine's load.
//
// That is the ingest suite. The reports suite loads -report-events events
// from the drift simulator (hundreds of tools, thousands of sessions,
// dozens of client versions, over a week) straight into a fresh embedded
// store with 100k-event Writes, times the reports over HTTP, runs OPTIMIZE
// FINAL on every table, then:
//
//	e. reports the load's rate and the store's CPU per event;
//	f. times every report over the whole week — p50 and p95 over repeated
//	   runs, with the clock fixed at the simulated end — and, for every
//	   report that has a raw fallback, the same report from the raw events
//	   in the same run, checking that both answers are equal (the repair
//	   times of repairs within 5%: t-digests); and every report through
//	   the HTTP API on loopback, as a client reads it (JSON encoded and
//	   decoded), on the store as the load left it and after OPTIMIZE
//	   FINAL.
//
// The storage suite, on the same load, reads system.parts:
//
//	g. the bytes on disk per event of every table, and the compressed and
//	   uncompressed size of the events table's largest columns.
//
// The overload suite starts the ingester over a fresh embedded store with a
// deliberately small capacity (-overload-max-pending events pending,
// -overload-spool-bytes of spool) and floods it from the sender child for
// -overload-duration on -overload-streams streams, on loopback, honouring
// no retry hint; then it waits for the spool to drain:
//
//	h. the events offered and accepted per second, the share of requests
//	   refused (UNAVAILABLE with RetryInfo, HTTP 503 with Retry-After's
//	   equivalent; RESOURCE_EXHAUSTED, 429's), the ingester process's peak
//	   RSS (VmHWM), and a check that the store holds exactly the events
//	   accepted.
//
// The console suite, named only when asked (it needs Chromium: `make
// chromium`), serves the console and the API over the same load after
// OPTIMIZE FINAL and drives Chromium with chromedp:
//
//	j. each page's time from navigation until every table and chart shows
//	   its answer (the release check: from pressing Check with two pasted
//	   lists until its answer), against the design's 1 s, and the API
//	   requests the page sent, which must be one per table and chart.
//
// The collector suite runs only when -suite names it too: it builds the
// OpenTelemetry Collector of deploy/otelcol/bench-builder.yaml with
// scripts/otelcol-build.sh (minutes the first time, cached by the
// manifest's content), the OTLP receiver, the batch processor and the
// contrib ClickHouse exporter, then:
//
//	k. sends the ingest suite's requests (the same count, batch and seed,
//	   the same sender child) to that Collector, which writes them into a
//	   ClickHouse server run from libchdb in the exporter's own schema;
//	   CPU of the Collector process and of the server process, from the
//	   first request until the exporter's logs table holds every event and
//	   both are idle; then run (c), `serve` as shipped, on the same
//	   requests, and the ratio of the two. The logs table must hold
//	   exactly the events sent.
//
// -suite selects them (default all, as `make bench` runs: every suite but
// console and collector).
//
// The program prints a table — figure, value, baseline measured in the same
// run, ratio, target — and writes the same as JSON to -out (the results
// file a release checks in under bench/results/, from which
// docs/capacity.md's tables are generated) and, with -markdown, as those
// Markdown tables, one per suite run. It never fails
// on a time: only on errors, on a stored count that differs from the
// events sent, on a rollup answer that differs from the raw one, and on an
// overload run whose stored count differs from the events accepted.
//
//	go run ./bench -events 1000000 -batch 500 -streams 4 -cpuprofile store.prof
//	go run ./bench -suite reports,storage -report-events 10000000
//	go run ./bench -suite overload -overload-duration 60s -overload-streams 64
//	go run ./bench -suite console -report-events 10000000
//	go run ./bench -suite collector -events 1000000 -markdown /tmp/collector.md
//
// With -render DIR it runs nothing: it rewrites the sections of DIR's
// README.md and docs/capacity.md that lie between `<!-- bench:… FILE -->`
// markers from the results files they name (render.go), as go generate
// ./bench does for the repository:
//
//	go run ./bench -suite ingest,reports -out bench/results/2026-12-05.json
//	go generate ./bench
package main

//go:generate go run . -render ..

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	// The sender child re-executes this binary (see client.go).
	if spec := os.Getenv(clientEnv); spec != "" {
		os.Exit(clientMain(spec))
	}

	cfg := DefaultConfig()
	flag.IntVar(&cfg.Events, "events", cfg.Events, "events to send through each run")
	flag.IntVar(&cfg.Batch, "batch", cfg.Batch, fmt.Sprintf("log records per OTLP request (%d–%d)", minBatch, maxBatch))
	flag.IntVar(&cfg.Streams, "streams", cfg.Streams, "concurrent senders, each with one request in flight")
	flag.DurationVar(&cfg.SpoolAfter, "ingest.spool-after", cfg.SpoolAfter, "give the ingester a write-ahead spool with this store-latency budget (as serve runs by default); 0: no spool")
	flag.StringVar(&cfg.Ack, "ingest.ack", cfg.Ack, `the ingester's acknowledgement mode: "stored", or "spooled" (with a write-ahead spool, as serve runs by default: exports acknowledged once fsynced to the spool, the store written in large inserts)`)
	flag.IntVar(&cfg.IngestBatch, "ingest.batch-events", cfg.IngestBatch, "the ingester's BatchMaxEvents; 0 means streams × batch (at most the ingester's default), so that a store batch is sealed as soon as every sender has a request in it")
	flag.IntVar(&cfg.InsertEvents, "ingest.insert-events", cfg.InsertEvents, `the ingester's InsertMaxEvents with -ingest.ack spooled: most events per store insert; 0: the ingester's default`)
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "simulator seed")
	flag.IntVar(&cfg.FloorBlock, "floor.block-events", 0, "cut each insert of run (c)'s floors into Native blocks of this many events (as many blocks as spooled batches, say), to show what the engine's cost owes to block size; 0: one block per insert, as the stores send")
	flag.StringVar(&cfg.Out, "out", cfg.Out, "where to write the results as JSON (a release's go to bench/results/<date>.json, which docs/capacity.md's tables are generated from); empty: nowhere")
	flag.StringVar(&cfg.Markdown, "markdown", "", "where to write the figures as Markdown tables, one per suite run, with the command line, the date and the commit (as docs/capacity.md shows them); empty: nowhere")
	flag.StringVar(&cfg.CollectorBin, "collector-bin", "", "the Collector the collector suite runs, built from deploy/otelcol/bench-builder.yaml; empty: scripts/otelcol-build.sh builds it (minutes the first time) or takes it from its cache")
	flag.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the ingester process during run (c), the store run, to this file")
	flag.StringVar(&cfg.ServerCPUProfile, "server-cpuprofile", "", "write a CPU profile of the ingest role's process (this one, not the server's) during run (c) into a ClickHouse server, to this file")
	serverFlags := flag.String("server-flags", "", "space-separated flags given to the ingest role of run (c) into a ClickHouse server after its own, to measure an alternative to its defaults (e.g. \"-store.insert.max-rows=200000 -store.compression=none\")")
	flag.BoolVar(&cfg.SkipStore, "skip-store", false, "skip run (c), for machines without libchdb")
	flag.BoolVar(&cfg.Redact, "redact", cfg.Redact, "run the ingesters with the default redaction rules, as the commands always do; -redact=false leaves redaction out, to show its share")
	flag.BoolVar(&cfg.SkipServer, "skip-server", false, "skip run (c) of the ingest role into a ClickHouse server (run from libchdb)")
	suites := flag.String("suite", "all", "comma-separated suites to run: ingest, reports, storage, console, overload, collector, or all (every one but console, which needs Chromium, and collector, which builds the OpenTelemetry Collector)")
	flag.IntVar(&cfg.ReportEvents, "report-events", cfg.ReportEvents, "simulated events loaded into a fresh store for the reports and storage suites")
	flag.IntVar(&cfg.ReportBatch, "report-batch", cfg.ReportBatch, "events per store Write of that load")
	flag.IntVar(&cfg.ReportRuns, "report-runs", cfg.ReportRuns, "measured runs of each report")
	flag.IntVar(&cfg.ReportWarmups, "report-warmups", cfg.ReportWarmups, "unmeasured runs of each report before its measured runs")
	flag.DurationVar(&cfg.ReportSpan, "report-span", cfg.ReportSpan, "simulated time the loaded events cover; the reports' window covers it")
	flag.IntVar(&cfg.ReportTools, "report-tools", cfg.ReportTools, "simulated tools of the reports load")
	flag.IntVar(&cfg.ReportSessions, "report-sessions", cfg.ReportSessions, "simulated sessions of the reports load")
	flag.IntVar(&cfg.ReportClients, "report-clients", cfg.ReportClients, "simulated client name@version pairs of the reports load")
	flag.IntVar(&cfg.ReportServers, "report-servers", cfg.ReportServers, "simulated MCP servers of the reports load")
	flag.StringVar(&cfg.ReportDir, "report-dir", "", "keep the reports load's store in this empty or missing directory, for EXPLAIN afterwards (default: a temporary directory, removed)")
	flag.StringVar(&cfg.ReportExplain, "report-explain", "", "write EXPLAIN indexes = 1 of every report query to this file")
	flag.DurationVar(&cfg.OverloadDuration, "overload-duration", cfg.OverloadDuration, "how long the overload suite floods the ingester")
	flag.IntVar(&cfg.OverloadStreams, "overload-streams", cfg.OverloadStreams, "concurrent senders of the flood, each with one request in flight")
	flag.IntVar(&cfg.OverloadEvents, "overload-events", cfg.OverloadEvents, "distinct events the flood's requests are built from (a refused request is sent again, an accepted one never)")
	flag.IntVar(&cfg.OverloadBatch, "overload-batch", cfg.OverloadBatch, "log records per request of the flood")
	flag.IntVar(&cfg.OverloadMaxPending, "overload-max-pending", cfg.OverloadMaxPending, "the flooded ingester's MaxPendingEvents")
	flag.Int64Var(&cfg.OverloadSpoolBytes, "overload-spool-bytes", cfg.OverloadSpoolBytes, "the flooded ingester's spool MaxBytes")
	render := flag.String("render", "", "run nothing: rewrite the generated sections of README.md and docs/capacity.md under this repository root from the results files their markers name (go generate ./bench)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bench: unexpected arguments: %v\n", flag.Args())
		os.Exit(2)
	}
	if *render != "" {
		changed, err := renderDocs(*render)
		for _, name := range changed {
			fmt.Printf("rewrote %s\n", name)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			os.Exit(1)
		}
		return
	}
	cfg.ServerFlags = strings.Fields(*serverFlags)
	var err error
	cfg.Command = commandLine(os.Args[1:])
	if cfg.Suites, err = ParseSuites(*suites); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := Run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}
