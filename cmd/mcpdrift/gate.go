package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/gate"
)

// Exit codes of mcpdrift gate.
const (
	gatePass  = 0 // the adapter can be retired (verdict ready)
	gateFail  = 1 // it cannot (blocked or at_risk)
	gateError = 2 // no decision: bad flags, unknown adapter, API unreachable
)

const gateUsage = `Usage: mcpdrift gate adapter <id> [flags]

Decides whether adapter <id> can be retired, for a release pipeline: exit 0
when it can (verdict ready), 1 when it cannot (blocked or at_risk), 2 on
error. Prints the decision as Markdown, fit for a pull-request comment.
Reads a running API (-api, default %s) or, when -api is not given and
nothing answers there, the data directory directly.

Flags:
`

// gateCmd runs `mcpdrift gate` and returns its exit code.
func gateCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpdrift gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), gateUsage, defaultAPI)
		fs.PrintDefaults()
	}
	var rf readFlags
	rf.register(fs)
	window := fs.String("window", apiv1.DefaultWindow, "the window, ending now, whose calls count (14d, 36h); the reports' default")
	maxCalls := fs.String("max-calls", "", "most calls through the adapter in the window that allow retiring it (default 0 when -max-share is not given)")
	maxShare := fs.String("max-share", "", "highest share of the tool's calls through the adapter that allows retiring it (0.005 or 0.5%)")
	longSession := fs.String("long-session", "", "session age from which a caller is long-running and puts the adapter at risk (default 24h)")
	unknownCallers := fs.String("unknown-callers", "", "at_risk (default) or safe: how calls without a session age or privilege, and calls to the adapter's tool without a client revision, are judged")
	environment := fs.String("environment", "", "only this environment")
	service := fs.String("service", "", "only this service")
	var exclude multiFlag
	fs.Var(&exclude, "exclude-client", "leave out this client: name or name@version (repeatable)")

	fail := func(err error) int {
		fmt.Fprintln(stderr, "mcpdrift gate:", err)
		return gateError
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fs.SetOutput(stdout)
		fs.Usage()
		return gatePass
	}
	if len(args) < 2 || args[0] != "adapter" || strings.HasPrefix(args[1], "-") {
		fs.Usage()
		return fail(errors.New("want: mcpdrift gate adapter <id> [flags]"))
	}
	id := args[1]
	if err := rf.parse(fs, args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return gatePass
		}
		return fail(err)
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("unexpected argument %q: flags go after the adapter id", fs.Arg(0)))
	}

	q := url.Values{apiv1.ParamWindow: {*window}}
	for name, v := range map[string]string{apiv1.ParamMaxCalls: *maxCalls, apiv1.ParamMaxShare: *maxShare,
		apiv1.ParamLongSession: *longSession, apiv1.ParamUnknownCallers: *unknownCallers,
		apiv1.ParamEnvironment: *environment, apiv1.ParamService: *service} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if len(exclude) > 0 {
		q[apiv1.ParamExcludeClient] = exclude
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	src, err := rf.open(ctx, stderr)
	if err != nil {
		return fail(err)
	}
	defer src.close()
	path, _ := api.ReportPath("adapter-retirement")
	var report apiv1.ReportBody[apiv1.AdapterRow]
	if err := src.client.GetJSON(ctx, path, q, &report); err != nil {
		return fail(rf.apiError(err))
	}
	d, err := gate.Decide(report, id, exclude)
	if err != nil {
		return fail(err)
	}
	if err := d.Markdown(stdout); err != nil {
		return fail(err)
	}
	if d.Pass() {
		return gatePass
	}
	return gateFail
}
