// Command api is the scale-out report API: any number of them run against
// one ClickHouse server or cluster (-store.dsn), stateless, behind a load
// balancer. It applies pending schema migrations at start-up unless
// -migrate=false; -migrate.only applies them and exits, for a Kubernetes Job
// or a one-off step. Concurrent migrators are safe: every statement is
// idempotent (IF NOT EXISTS), so several api replicas starting at once may
// all migrate. For a single machine, `mcpdrift serve` runs ingest and API
// together on the embedded store.
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

// config is the api role's configuration before flags.
func config() app.Config { return app.DefaultConfig(app.RoleAPI, "api", app.NewServerStore()) }

func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return app.Main(ctx, config(), args, version, stdout, stderr)
}
