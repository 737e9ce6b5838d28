package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/envflag"
	"github.com/mcpdrift/mcpdrift/internal/logging"
	"github.com/mcpdrift/mcpdrift/internal/simulate"
)

// headerFlags collects repeatable -otlp.header k=v flags.
type headerFlags map[string]string

func (h headerFlags) String() string { return fmt.Sprint(map[string]string(h)) }

func (h headerFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, not %q", v)
	}
	h[k] = val
	return nil
}

// timeFlag is an RFC 3339 time; empty means unset.
type timeFlag struct{ t *time.Time }

func (f timeFlag) String() string {
	if f.t == nil || f.t.IsZero() {
		return ""
	}
	return f.t.Format(time.RFC3339)
}

func (f timeFlag) Set(v string) error {
	if v == "" {
		*f.t = time.Time{}
		return nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return fmt.Errorf("want RFC 3339, e.g. 2026-11-30T00:00:00Z: %w", err)
	}
	*f.t = t
	return nil
}

func simulateCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcpdrift simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := simulate.DefaultConfig()
	cfg.Headers = headerFlags{}
	fs.StringVar(&cfg.Endpoint, "otlp.endpoint", cfg.Endpoint, "OTLP endpoint of the ingester (host:port)")
	fs.StringVar(&cfg.Protocol, "otlp.protocol", cfg.Protocol, "OTLP protocol: grpc or http")
	fs.BoolVar(&cfg.Insecure, "otlp.insecure", cfg.Insecure, "plain-text OTLP (no TLS)")
	fs.Var(headerFlags(cfg.Headers), "otlp.header", "extra OTLP header key=value (repeatable), e.g. Authorization=Bearer ...")
	fs.Uint64Var(&cfg.Seed, "sim.seed", cfg.Seed, "random seed: the same seed sends the same events")
	fs.Var(timeFlag{&cfg.Start}, "sim.start", "simulated start time (RFC 3339; empty: now minus -sim.span)")
	fs.DurationVar(&cfg.Span, "sim.span", cfg.Span, "simulated time the run covers")
	fs.Int64Var(&cfg.Events, "sim.events", cfg.Events, "stop after this many events (0: no limit)")
	fs.DurationVar(&cfg.Duration, "sim.duration", cfg.Duration, "stop after this much real time (0: no limit)")
	fs.Float64Var(&cfg.Rate, "sim.rate", cfg.Rate, "events per second of real time (0: as fast as possible)")
	fs.IntVar(&cfg.Servers, "sim.servers", cfg.Servers, "MCP server services")
	fs.IntVar(&cfg.Tools, "sim.tools", cfg.Tools, "tools across the servers")
	fs.IntVar(&cfg.Clients, "sim.clients", cfg.Clients, "client name@version combinations")
	fs.IntVar(&cfg.Sessions, "sim.sessions", cfg.Sessions, "agent sessions (0: sized from the event count)")
	fs.IntVar(&cfg.Changes, "sim.changes", cfg.Changes, "contract changes deployed during the span (0: one of each kind)")
	fs.StringVar(&cfg.Environment, "sim.environment", cfg.Environment, "deployment.environment.name of the fleet")
	fs.Float64Var(&cfg.ViolationRate, "sim.violation-rate", cfg.ViolationRate, "share of calls that carry an injected safety violation")
	fs.BoolVar(&cfg.AuditArgs, "sim.audit-args", cfg.AuditArgs, "send raw and normalised arguments on calls")
	ledgerOut := fs.String("ledger.out", "-", "where to write the ledger of what was sent as JSON (-: stdout, empty: nowhere)")
	logLevel := fs.String("log.level", "info", "log level: debug, info, warn, error")
	if err := envflag.Parse(fs, args, "MCPDRIFT"); err != nil {
		return err
	}
	log, err := logging.New(stderr, *logLevel, "text")
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ledger, runErr := simulate.Run(ctx, cfg, log)
	if *ledgerOut != "" {
		w := stdout
		if *ledgerOut != "-" {
			f, err := os.Create(*ledgerOut)
			if err != nil {
				return fmt.Errorf("cannot write the ledger: %w", err)
			}
			defer f.Close()
			w = f
		}
		if err := ledger.WriteJSON(w); err != nil {
			return fmt.Errorf("cannot write the ledger: %w", err)
		}
	}
	return runErr
}
