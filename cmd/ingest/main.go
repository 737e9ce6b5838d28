// Command ingest is the scale-out OTLP ingester: any number of them run
// against one ClickHouse server or cluster (-store.dsn) behind a load
// balancer, each with a spool of its own (-ingest.spool.dir). It runs the
// same ingest pipeline as `mcpdrift serve` — spool, acknowledgement
// modes, grouped inserts — and never migrates the schema (the api does):
// it is ready once the store answers, on a cluster every shard, and holds
// every migration. For a single machine, `mcpdrift serve` runs ingest and
// API together on the embedded store.
//
// Every flag can be set through the environment: -store.dsn ←
// MCPDRIFT_STORE_DSN; flags win.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpdrift/mcpdrift/internal/app"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is the ingest role's configuration before flags.
func config() app.Config { return app.DefaultConfig(app.RoleIngest, "ingest", app.NewServerStore()) }

func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return app.Main(ctx, config(), args, version, stdout, stderr)
}
