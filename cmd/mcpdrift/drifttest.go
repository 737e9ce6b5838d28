package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/drifttest"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

// Exit codes of mcpdrift drifttest.
const (
	driftPass    = 0 // every call was adapted, rejected cleanly or accepted as current
	driftFailure = 1 // a call broke the seed's rules
	driftError   = 2 // no answer: bad flags, a refused host, an unreachable server
)

const driftUsage = `Usage: mcpdrift drifttest [flags] -server URL -allow-host HOST[,HOST...] old.json
       mcpdrift drifttest [flags] -server-cmd 'COMMAND ARGS...' old.json
       mcpdrift drifttest -deployed -service S [-environment E] [flags] -server URL -allow-host HOST

The seed's core test, run against your own server before a deploy. It SENDS
REAL tools/call REQUESTS: point it at a test or staging deployment only.

old.json is the tools/list an agent planned with (as mcpdrift check reads
it). With -deployed, the old list is instead what -service advertises now
(in -environment, or its only one), from the registry of the mcpdrift API
at -api (else -mcpdrift's), as mcpdrift check -deployed reads it; a service
whose instances advertise several revisions of a tool at once (a deploy in
progress) is refused with exit 2, naming them. drifttest lists the server's
tools now and, for each tool that changed or was removed, sends calls the
old input schema accepts (the release check's counterexample, then
instances of the old schema): once as a client that declares the old
revision in _meta (dev.mcpdrift/revision), once as a stock client that
declares nothing. Each answer must be normalised by an adapter, rejected
cleanly (error_code, side_effect_started false, the current revision,
required_action) or, for arguments the new revision accepts with the same
meaning, run as current. A success with no adapter, a vague error, a
rejection after a side effect started, or a removed tool that answers
success fails. With -mcpdrift, the API the server sends its drift events
to, each answer is checked against the server's call event in the audit: a
side effect it reports, an adapter, a field the adapter dropped; -audit
adds arguments agents really sent with the old revision, as the audit
stores them (redacted). -reverse ADAPTER sends only the calls an adapter
serves, to the build without it, and shows who its retirement would hit,
weighed by usage as mcpdrift gate weighs it. Exit 0 when every call passes,
1 on a failure, 2 on error (a host not in -allow-host is refused before
anything is sent).

Flags:
`

// driftFlags are mcpdrift drifttest's flags.
type driftFlags struct {
	server    string
	serverCmd string
	allow     string
	maxCalls  int
	dryRun    bool
	format    string
	authority string
	timeout   time.Duration
	mcpdrift  string
	auditWait time.Duration
	audit     bool
	auditMax  int
	reverse   string
	window    string
	// deployed, service and environment take the old list from the
	// registry; read says where it is, as for mcpdrift check, and holds
	// the token of every request to mcpdrift.
	deployed    bool
	service     string
	environment string
	read        readFlags
}

// drifttestCmd runs `mcpdrift drifttest` and returns its exit code.
func drifttestCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpdrift drifttest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), driftUsage)
		fs.PrintDefaults()
	}
	var df driftFlags
	fs.StringVar(&df.server, "server", "", "URL of the MCP server under test (streamable HTTP); its host must be in -allow-host")
	fs.StringVar(&df.serverCmd, "server-cmd", "", "command of the MCP server under test over stdio, split on spaces; started once per pass")
	fs.StringVar(&df.allow, "allow-host", "", "comma-separated hosts (name or name:port) -server may name; any other is refused with exit 2")
	fs.IntVar(&df.maxCalls, "max-calls", 6, "at most this many calls per tool, both passes together")
	fs.BoolVar(&df.dryRun, "dry-run", false, "list the server's tools and print the calls, send none")
	fs.StringVar(&df.format, "format", "md", "output: md (a pull-request comment) or json")
	fs.StringVar(&df.authority, "authority-fields", strings.Join(toolchange.DefaultAuthorityFields, ","),
		"comma-separated field names that widen or redirect an action when added, as mcpdrift check takes them")
	fs.DurationVar(&df.timeout, "call-timeout", 30*time.Second, "how long each call may take before it counts as a vague error")
	fs.StringVar(&df.mcpdrift, "mcpdrift", "", "URL of the mcpdrift API the server under test sends its drift events to: each answer is checked against the server's call event in the audit")
	fs.DurationVar(&df.auditWait, "audit-wait", 30*time.Second, "with -mcpdrift: how long to wait for the call events to be stored")
	fs.BoolVar(&df.audit, "audit", false, "with -mcpdrift: also send arguments agents really sent when planning with the old revision, from the audit (redacted as stored)")
	fs.IntVar(&df.auditMax, "audit-max", 2, "with -audit: at most this many recorded argument objects per tool")
	fs.StringVar(&df.reverse, "reverse", "", "with -mcpdrift: send only the calls this adapter serves, to a server built without it, and show who its retirement would hit")
	fs.StringVar(&df.window, "window", "", "with -reverse: the window of the adapter's usage, as mcpdrift gate takes it (default the report's, 7d)")
	fs.BoolVar(&df.deployed, "deployed", false, "take the old list from the registry: what -service advertises now, instead of old.json")
	fs.StringVar(&df.service, "service", "", "with -deployed: the service whose advertised list is the old one")
	fs.StringVar(&df.environment, "environment", "", "with -deployed: the environment of that list, needed when the service advertises in several")
	df.read.register(fs)
	fs.Lookup("api").Usage = "with -deployed: URL of the mcpdrift API whose registry holds the old list (default -mcpdrift's when given, else " + defaultAPI +
		", else the data directory read directly)"
	fs.Lookup("token").Usage = "bearer token for an API that runs with tokens: the read scope for -deployed and -reverse, audit for -mcpdrift"
	fail := func(err error) int {
		fmt.Fprintln(stderr, "mcpdrift drifttest:", err)
		return driftError
	}
	files, err := parseInterspersed(fs, args, df.read.parse)
	if errors.Is(err, flag.ErrHelp) {
		return driftPass
	}
	if err != nil {
		return fail(err)
	}
	if df.format != "md" && df.format != "json" {
		return fail(fmt.Errorf("-format: want md or json, not %q", df.format))
	}
	if df.audit && df.mcpdrift == "" {
		return fail(errors.New("-audit reads the audit of the API named by -mcpdrift: give both"))
	}
	if df.reverse != "" && df.mcpdrift == "" {
		return fail(errors.New("-reverse reads the adapter's usage from the API named by -mcpdrift: give both"))
	}
	switch {
	case df.deployed && len(files) > 0:
		return fail(fmt.Errorf("-deployed takes the old list from the registry, and %s names one too: give one of them", files[0]))
	case df.deployed && df.service == "":
		return fail(errors.New("-deployed needs -service: the service whose advertised list is the old one"))
	case !df.deployed && (df.service != "" || df.environment != ""):
		return fail(errors.New("-service and -environment choose the registry's list: give -deployed with them"))
	case !df.deployed && len(files) != 1:
		fs.Usage()
		return fail(errors.New("want one old list: mcpdrift drifttest -server URL -allow-host HOST old.json, or -deployed -service S"))
	}
	target := drifttest.Target{URL: df.server}
	if df.serverCmd != "" {
		target.Command = strings.Fields(df.serverCmd)
	}
	// Refused before the old list is even read: nothing reaches a host
	// the user did not name.
	if err := target.Check(splitList(df.allow)); err != nil {
		return fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var old toolchange.List
	var deployed *registry.Deployed
	if df.deployed {
		deployed, old, err = df.deployedList(ctx, stderr)
	} else {
		_, old, err = readToolList(files[0])
	}
	if err != nil {
		return fail(err)
	}
	opts := drifttest.Options{
		Target: target, AllowHosts: splitList(df.allow), MaxCallsPerTool: df.maxCalls, DryRun: df.dryRun,
		AuthorityFields: splitList(df.authority), Version: version, CallTimeout: df.timeout,
	}
	if df.mcpdrift != "" {
		opts.Audit = &drifttest.Audit{Client: &apiclient.Client{BaseURL: strings.TrimSuffix(df.mcpdrift, "/"), Token: df.read.token,
			HTTP: &http.Client{Timeout: time.Minute}}, Wait: df.auditWait}
		if df.audit {
			opts.Sample = df.auditMax
		}
		opts.Reverse, opts.ReverseWindow = df.reverse, df.window
	}
	report, err := drifttest.Run(ctx, old, opts)
	if err != nil {
		return fail(err)
	}
	report.Deployed = deployed
	if df.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(report)
	} else {
		if deployed != nil {
			err = deployed.WriteMarkdown(stdout)
		}
		if err == nil {
			err = report.Markdown(stdout)
		}
	}
	if err != nil {
		return fail(err)
	}
	if report.Pass() {
		return driftPass
	}
	return driftFailure
}

// deployedList reads what -service advertises now in -environment from
// the registry (GET /api/v1/deployed, the list mcpdrift check -deployed
// compares against) at -api, else at -mcpdrift, else where report reads.
// A tool advertised under several revisions at once is an error
// (drifttest.DeployedList).
func (df *driftFlags) deployedList(ctx context.Context, stderr io.Writer) (*registry.Deployed, toolchange.List, error) {
	if df.read.api == "" && df.mcpdrift != "" {
		df.read.api = strings.TrimSuffix(df.mcpdrift, "/")
	}
	src, err := df.read.open(ctx, stderr)
	if err != nil {
		return nil, toolchange.List{}, err
	}
	defer src.close()
	q := url.Values{apiv1.ParamService: {df.service}}
	if df.environment != "" {
		q.Set(apiv1.ParamEnvironment, df.environment)
	}
	var d registry.Deployed
	if err := getRegistry(ctx, src.client, "/api/v1/deployed", q, &d); err != nil {
		return nil, toolchange.List{}, df.read.apiError(err)
	}
	old, err := drifttest.DeployedList(d)
	if err != nil {
		return nil, toolchange.List{}, err
	}
	return &d, old, nil
}
