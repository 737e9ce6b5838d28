// Command bench is mcpdrift's benchmark suite, run by `make bench`
// (`go run ./bench $(BENCHARGS)`). It measures, on the same requests and in
// the same run:
//
//	a. a bare pdata decode of the OTLP requests (the baseline);
//	b. the ingester without a store: OTLP/gRPC on loopback, decode,
//	   validate, batch, answer — into a store.Writer that discards;
//	c. the ingester into the embedded store (chDB), materialised views
//	   included, checking that every event sent was stored;
//	d. the sending client's own cost.
//
// The requests are built once, before anything is measured, from the drift
// simulator's realistic stream, grouped by resource as SDK exporters send
// them. The sender runs in a child process that replays the pre-marshalled
// bytes with a pass-through gRPC codec, so the ingester's process CPU
// (getrusage user + system, chDB's threads included) is measured alone and
// the client's is measured on its own. CPU per event is the figure to read
// on a noisy machine; events/s depends on the machine's load.
//
// The program prints a table — figure, value, baseline measured in the same
// run, ratio, target — and writes the same as JSON to -out. It never fails
// on a time: only on errors and on a stored count that differs from the
// events sent.
//
//	go run ./bench -events 1000000 -batch 500 -streams 4 -cpuprofile store.prof
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
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
	flag.IntVar(&cfg.IngestBatch, "ingest.batch-events", cfg.IngestBatch, "the ingester's BatchMaxEvents; 0 means streams × batch (at most the ingester's default), so that a store batch is sealed as soon as every sender has a request in it")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "simulator seed")
	flag.StringVar(&cfg.Out, "out", cfg.Out, "where to write the results as JSON; empty: nowhere")
	flag.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the ingester process during run (c), the store run, to this file")
	flag.BoolVar(&cfg.SkipStore, "skip-store", false, "skip run (c), for machines without libchdb")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bench: unexpected arguments: %v\n", flag.Args())
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := Run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}
