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
	"syscall"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/app/embeddedstore"
	"github.com/mcpdrift/mcpdrift/internal/envflag"
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
  mcpdrift check old.json new.json   release check of a tools/list change: exit 0 when every change is safe
  mcpdrift check -deployed -service S new.json   the same, against what S advertises now
  mcpdrift drifttest -server URL -allow-host H old.json  send old calls to a test server: exit 0 when each is adapted or rejected cleanly
  mcpdrift revisions TOOL    the history of a tool's advertised revisions, or -old R -new R their diff
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
		return serve(args[1:], stdout, stderr)
	case "migrate":
		err = migrate(args[1:], stdout, stderr)
	case "simulate":
		err = simulateCmd(args[1:], stdout, stderr)
	case "report":
		err = reportCmd(args[1:], stdout, stderr)
	case "gate":
		return gateCmd(args[1:], stdout, stderr)
	case "check":
		return checkCmd(args[1:], stdout, stderr)
	case "drifttest":
		return drifttestCmd(args[1:], stdout, stderr)
	case "revisions":
		err = revisionsCmd(args[1:], stdout, stderr)
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

// serveConfig is serve's configuration before flags: the ingester and the
// API on the embedded store.
func serveConfig() app.Config {
	return app.DefaultConfig(app.RoleServe, "mcpdrift serve", embeddedstore.New())
}

func serve(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return app.Main(ctx, serveConfig(), args, version, stdout, stderr)
}

func migrate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcpdrift migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sec := embeddedstore.New()
	sec.RegisterFlags(fs)
	if err := envflag.Parse(fs, args, app.EnvPrefix); err != nil {
		return err
	}
	if err := sec.Validate(); err != nil {
		return err
	}
	ctx := context.Background()
	st, err := embedded.Open(ctx, sec.Config)
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
