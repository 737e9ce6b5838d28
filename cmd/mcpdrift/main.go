// Command mcpdrift is the all-in-one mcpdrift binary: `serve` runs the OTLP
// ingester and the API in one process on the embedded store, `migrate`
// brings the schema up to date.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/envflag"
	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/internal/logging"
	"github.com/mcpdrift/mcpdrift/internal/selfmetrics"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `mcpdrift — MCP tool schema drift analytics

Usage:
  mcpdrift serve   [flags]   run the OTLP ingester and the API on the embedded store
  mcpdrift migrate [flags]   apply pending schema migrations and exit
  mcpdrift simulate [flags]  drive a running ingester with a realistic drifting fleet
  mcpdrift report <name> [flags]     print a report (adapter-retirement, stale-usage, …)
  mcpdrift gate adapter <id> [flags] release gate: exit 0 when the adapter can be retired
  mcpdrift token create -tenant T -scope S   make a bearer token (printed once, stored hashed)
  mcpdrift token list [-file path]            list the tokens of a token file
  mcpdrift version           print the version

Run 'mcpdrift <command> -h' for the flags of a command. Every flag can also
be set through the environment: -data.dir ← MCPDRIFT_DATA_DIR.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(args[1:], stdout, stderr)
	case "migrate":
		err = migrate(args[1:], stdout, stderr)
	case "simulate":
		err = simulateCmd(args[1:], stdout, stderr)
	case "report":
		err = reportCmd(args[1:], stdout, stderr)
	case "gate":
		return gateCmd(args[1:], stdout, stderr)
	case "token":
		err = tokenCmd(args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "mcpdrift", version)
		return 0
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "mcpdrift: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "mcpdrift:", err)
		return 1
	}
	return 0
}

// storeFlags are the flags of every command that opens the embedded store.
type storeFlags struct {
	dir                string
	retentionDays      int
	auditRetentionDays int
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dir, "data.dir", defaultDataDir(), "data directory of the embedded store (one process owns it)")
	fs.IntVar(&f.retentionDays, "retention.days", 30, "days raw events and rollups are kept")
	fs.IntVar(&f.auditRetentionDays, "audit.retention.days", 30, "days call arguments (the audit table) are kept")
}

func (f *storeFlags) config() embedded.Config {
	cfg := embedded.DefaultConfig(f.dir)
	cfg.Schema.RetentionDays = f.retentionDays
	cfg.Schema.AuditRetentionDays = f.auditRetentionDays
	return cfg
}

func defaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "mcpdrift")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "mcpdrift")
	}
	return "mcpdrift-data"
}

func migrate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcpdrift migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	if err := envflag.Parse(fs, args, "MCPDRIFT"); err != nil {
		return err
	}
	ctx := context.Background()
	st, err := embedded.Open(ctx, sf.config())
	if err != nil {
		return err
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintf(stdout, "schema of %s is up to date\n", st.Dir())
		return nil
	}
	fmt.Fprintf(stdout, "applied migrations %v to %s\n", applied, st.Dir())
	return nil
}

func serve(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcpdrift serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs)
	icfg := ingest.DefaultConfig()
	acfg := api.DefaultConfig()
	fs.StringVar(&icfg.GRPCListen, "otlp.grpc.listen", icfg.GRPCListen, "OTLP/gRPC listen address")
	fs.StringVar(&icfg.HTTPListen, "otlp.http.listen", icfg.HTTPListen, "OTLP/HTTP listen address")
	fs.IntVar(&icfg.MaxRequestBytes, "otlp.max-request-bytes", icfg.MaxRequestBytes, "largest OTLP request accepted, compressed or not")
	fs.IntVar(&icfg.BatchMaxEvents, "ingest.batch.max-events", icfg.BatchMaxEvents, "events per batch: one spool append (fsync) or, with -ingest.ack stored, one store insert")
	fs.DurationVar(&icfg.BatchMaxDelay, "ingest.batch.max-delay", icfg.BatchMaxDelay, "longest a batch waits before it is written (with -ingest.ack spooled a batch is also written as soon as the spool is idle)")
	fs.IntVar(&icfg.MaxPendingEvents, "ingest.max-pending-events", icfg.MaxPendingEvents, "events awaiting their insert beyond which exports are refused (503/UNAVAILABLE)")
	spoolDir := fs.String("ingest.spool.dir", "", `write-ahead spool directory (default: <data.dir>/spool; "off" acknowledges only once stored)`)
	fs.Int64Var(&icfg.Spool.MaxBytes, "ingest.spool.max-bytes", icfg.Spool.MaxBytes, "spool size beyond which exports are refused (503/UNAVAILABLE)")
	fs.Int64Var(&icfg.Spool.SegmentBytes, "ingest.spool.segment-bytes", icfg.Spool.SegmentBytes, "size of one spool segment file")
	fs.BoolVar(&icfg.Spool.Fsync, "ingest.spool.fsync", icfg.Spool.Fsync, "fsync every spool append before acknowledging")
	fs.DurationVar(&icfg.SpoolAfter, "ingest.spool.after", icfg.SpoolAfter, "with -ingest.ack stored: store write latency beyond which batches are acknowledged from the spool and written later")
	ack := fs.String("ingest.ack", "", `when an export is acknowledged: "spooled" (the default with a spool: once fsynced to the spool; the store is written in large grouped inserts) or "stored" (once inserted, or spooled when the store is slow or failing)`)
	fs.IntVar(&icfg.InsertMaxEvents, "ingest.insert.max-events", icfg.InsertMaxEvents, "with -ingest.ack spooled: most events per store insert")
	fs.DurationVar(&icfg.InsertMaxDelay, "ingest.insert.max-delay", icfg.InsertMaxDelay, "with -ingest.ack spooled: longest the store insert waits for more spooled batches (how far reports trail acknowledgements)")
	fs.IntVar(&icfg.DedupIDs, "ingest.dedup.ids", icfg.DedupIDs, "ids of recently stored events kept to drop retried exports")
	fs.DurationVar(&icfg.DedupWindow, "ingest.dedup.window", icfg.DedupWindow, "how far back, in event time, stored ids are loaded at start-up")
	fs.StringVar(&acfg.Listen, "api.listen", acfg.Listen, "API listen address")
	var sec securityFlags
	sec.register(fs, &acfg)
	logLevel := fs.String("log.level", "info", "log level: debug, info, warn, error")
	logFormat := fs.String("log.format", "text", "log format: text or json")
	if err := envflag.Parse(fs, args, "MCPDRIFT"); err != nil {
		return err
	}
	log, err := logging.New(stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	switch *spoolDir {
	case "off":
		icfg.Spool.Dir = ""
	case "":
		icfg.Spool.Dir = filepath.Join(sf.dir, "spool")
	default:
		icfg.Spool.Dir = *spoolDir
	}
	switch {
	case *ack != "":
		icfg.Ack = ingest.AckMode(*ack)
	case icfg.Spool.Dir != "":
		icfg.Ack = ingest.AckSpooled
	default:
		icfg.Ack = ingest.AckStored
	}
	if err := icfg.Validate(); err != nil {
		return err
	}
	if err := acfg.Validate(); err != nil {
		return err
	}
	iopts, aopts, err := sec.options(icfg, acfg, log)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	scfg := sf.config()
	st, err := embedded.Open(ctx, scfg)
	if err != nil {
		return err
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	log.Info("embedded store open", "dir", st.Dir(), "clickhouse", st.Version(), "migrations_applied", applied,
		"retention_days", scfg.Schema.RetentionDays, "audit_retention_days", scfg.Schema.AuditRetentionDays)

	reports, err := queries.New(st, scfg.Schema.Database, queries.WithRetentionDays(scfg.Schema.RetentionDays))
	if err != nil {
		return err
	}
	in, err := ingest.New(icfg, st, log, iopts...)
	if err != nil {
		return err
	}
	if err := in.Start(ctx); err != nil {
		return err
	}
	reg, err := selfmetrics.NewRegistry(selfmetrics.NewIngestCollector(in))
	if err != nil {
		_ = in.Shutdown(context.Background())
		return err
	}
	aopts = append(aopts, api.WithMetrics(selfmetrics.Handler(reg)),
		api.WithReadyCheck("migrations", selfmetrics.MigrationsApplied(st, scfg.Schema)),
		api.WithReadyCheck("spool", func(context.Context) error { return in.SpoolReady() }))
	srv, err := api.New(acfg, st, reports, version, log, aopts...)
	if err != nil {
		return err
	}
	reg.MustRegister(selfmetrics.NewAPICollector(srv))
	if err := srv.Start(); err != nil {
		_ = in.Shutdown(context.Background())
		return err
	}
	fmt.Fprintf(stdout, `mcpdrift %s is running
  OTLP/gRPC  %s
  OTLP/HTTP  %s://%s/v1/logs
  API        %s://%s/api/v1/tools
  data       %s
  spool      %s
Press Ctrl-C to stop.
`, version, in.GRPCAddr(), scheme(sec.otlpTLS.Enabled()), in.HTTPAddr(), scheme(acfg.TLS.Enabled()), srv.Addr(), st.Dir(), orOff(icfg.Spool.Dir))

	<-ctx.Done()
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errA := srv.Shutdown(sctx)
	errI := in.Shutdown(sctx)
	return errors.Join(errA, errI)
}

func orOff(dir string) string {
	if dir == "" {
		return "off (exports are acknowledged once stored)"
	}
	return dir
}
