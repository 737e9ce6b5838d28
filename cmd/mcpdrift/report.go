package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/app/embeddedstore"
	"github.com/mcpdrift/mcpdrift/internal/envflag"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/queries"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// defaultAPI is where report and gate look for a running server when -api
// is not given.
var defaultAPI = "http://127.0.0.1:8080"

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}

// readFlags say where report and gate read from: a running API, or the
// data directory directly.
type readFlags struct {
	api   string
	token string
	store *embeddedstore.Section
}

func (r *readFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.api, "api", "", "URL of a running mcpdrift API (default "+defaultAPI+"; when not given and nothing answers there, the data directory is read directly)")
	fs.StringVar(&r.token, "token", "", "bearer token for an API that runs with tokens (a read token; audit for the audit report)")
	r.store = embeddedstore.New()
	r.store.RegisterFlags(fs)
	envflag.Annotate(fs, app.EnvPrefix, readEnv...)
}

// readEnv are the flags of report, gate and check that take their value
// from the environment (MCPDRIFT_API, MCPDRIFT_TOKEN, MCPDRIFT_DATA_DIR…);
// the others never do, so that a stray variable never filters a report.
var readEnv = []string{"api", "token", "data.dir", "retention.days", "audit.retention.days", "retention.daily.days"}

// parse parses args into fs, the readEnv flags overlaid from the
// environment.
func (r *readFlags) parse(fs *flag.FlagSet, args []string) error {
	return envflag.ParseOnly(fs, args, app.EnvPrefix, readEnv...)
}

// source is where a command reads reports from.
type source struct {
	client *apiclient.Client
	close  func()
}

// open returns a client for the API at -api, or at defaultAPI when -api is
// not given; when nothing (or no mcpdrift) answers there, it opens the data
// directory and serves the API in this process, without listening.
func (r *readFlags) open(ctx context.Context, stderr io.Writer) (source, error) {
	hc := &http.Client{Timeout: 5 * time.Minute}
	if r.api != "" {
		return source{client: &apiclient.Client{BaseURL: r.api, HTTP: hc, Token: r.token}, close: hc.CloseIdleConnections}, nil
	}
	if answers(ctx, defaultAPI) {
		return source{client: &apiclient.Client{BaseURL: defaultAPI, HTTP: hc, Token: r.token}, close: hc.CloseIdleConnections}, nil
	}
	dir := r.store.Dir
	if _, err := os.Stat(filepath.Join(dir, "clickhouse")); err != nil {
		return source{}, fmt.Errorf("no mcpdrift API answers at %s, and %s holds no mcpdrift data: start `mcpdrift serve`, or pass -api URL or -data.dir", defaultAPI, dir)
	}
	st, err := embedded.Open(ctx, r.store.Config)
	if errors.Is(err, store.ErrInUse) {
		return source{}, fmt.Errorf("no mcpdrift API answers at %s, and a server holds the data directory %s: pass -api with the address that server's API listens on (its -api.listen)", defaultAPI, dir)
	}
	if err != nil {
		return source{}, err
	}
	sch := r.store.Schema()
	runner, err := queries.New(st, sch.Database, queries.WithRetentionDays(sch.RetentionDays),
		queries.WithChanges(registry.ChangeOf), queries.WithSameContract(registry.SameContract))
	if err != nil {
		st.Close()
		return source{}, err
	}
	srv, err := api.New(api.DefaultConfig(), st, runner, version, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		st.Close()
		return source{}, err
	}
	fmt.Fprintf(stderr, "mcpdrift: no API answers at %s; reading %s directly\n", defaultAPI, st.Dir())
	return source{
		client: &apiclient.Client{BaseURL: "http://in-process", HTTP: &http.Client{Transport: apiclient.HandlerTransport(srv.Handler())}},
		close:  func() { st.Close() },
	}, nil
}

// answers reports whether an mcpdrift API answers its health check at
// base.
func answers(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var h apiv1.Health
	err := (&apiclient.Client{BaseURL: base}).GetJSON(ctx, "/healthz", nil, &h)
	return err == nil && h.Status == "ok"
}

// reportFilterFlags are the report parameters the CLI passes through, by
// flag name; the API checks them. Flag names use dashes where the
// parameters use underscores.
var reportFilterFlags = []struct{ name, usage string }{
	{"from", "start of the window: RFC 3339, a date (2026-11-30, midnight UTC), now, or relative (-7d, -24h); default -7d"},
	{"to", "end of the window, in the same forms; default now"},
	{"window", "adapter-retirement: the window as a duration ending at -to (14d), instead of -from"},
	{"tool", "only this tool"},
	{"service", "only this service"},
	{"environment", "only this environment"},
	{"client", "only this client: name or name@version"},
	{"max-calls", "adapter-retirement: most calls that allow retiring an adapter (default 0 when -max-share is not given)"},
	{"max-share", "adapter-retirement: highest share of the tool's calls that allows retiring an adapter (0.005 or 0.5%)"},
	{"long-session", "adapter-retirement: session age from which a caller is long-running (default 24h)"},
	{"unknown-callers", "adapter-retirement: at_risk (default) or safe: how calls without a session age or privilege, and calls to an adapter's tool without a client revision, are judged"},
	{"adapter", "adapter-retirement: only this adapter id"},
	{"top-clients", "adapter-retirement: blocking clients listed per adapter (default 5)"},
	{"run", "audit: only this agent run"},
	{"session", "audit: only this session"},
	{"request-id", "audit: only this request id"},
	{"limit", "violations, audit: rows per page (default 100, at most 1000)"},
	{"cursor", "violations, audit: the next cursor of the previous page"},
}

func paramName(flagName string) string { return strings.ReplaceAll(flagName, "-", "_") }

func flagName(param string) string { return strings.ReplaceAll(param, "_", "-") }

const reportUsage = `Usage: mcpdrift report <name> [flags]

Prints a report from a running mcpdrift API (-api, default %s); when
-api is not given and nothing answers there, it reads the data directory
(-data.dir) directly, which works only while no server holds it.

Reports: %s

Flags:
`

func reportCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcpdrift report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), reportUsage, defaultAPI, strings.Join(api.ReportNames(), ", "))
		fs.PrintDefaults()
	}
	var rf readFlags
	rf.register(fs)
	format := fs.String("format", "table", "output format: table (the main columns, fitted to -width), wide (every column, full values), json, csv or md")
	fs.Func("o", "short for -format (-o wide)", func(v string) error { *format = v; return nil })
	width := fs.Int("width", -1, "fit table lines within this many columns, cutting long cells with …; 0: no limit (default: $COLUMNS or 120 on a terminal, no limit otherwise)")
	values := map[string]*string{}
	for _, f := range reportFilterFlags {
		values[f.name] = fs.String(f.name, "", f.usage)
	}
	var exclude multiFlag
	fs.Var(&exclude, "exclude-client", "leave out this client's events: name or name@version (repeatable)")

	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
			fs.SetOutput(stdout)
			fs.Usage()
			return flag.ErrHelp
		}
		return fmt.Errorf("report: name the report first, one of %s (mcpdrift report -h lists the flags)", strings.Join(api.ReportNames(), ", "))
	}
	name := args[0]
	path, ok := api.ReportPath(name)
	if !ok {
		return fmt.Errorf("report: unknown report %q; the reports are %s", name, strings.Join(api.ReportNames(), ", "))
	}
	if err := rf.parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("report: unexpected argument %q: flags go after the report name", fs.Arg(0))
	}

	q := url.Values{apiv1.ParamFormat: {*format}}
	if n := tableWidth(*width, stdout); n > 0 && *format == "table" {
		q.Set(apiv1.ParamWidth, strconv.Itoa(n))
	}
	takes := api.ReportParams(name)
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		if _, ok := values[f.Name]; !ok && f.Name != "exclude-client" {
			return
		}
		if !slices.Contains(takes, paramName(f.Name)) {
			bad = append(bad, "-"+f.Name)
			return
		}
		if f.Name != "exclude-client" {
			q.Set(paramName(f.Name), *values[f.Name])
		}
	})
	if len(bad) > 0 {
		var ok []string
		for _, p := range takes {
			if p != apiv1.ParamFormat {
				ok = append(ok, "-"+flagName(p))
			}
		}
		return fmt.Errorf("report %s does not take %s; it takes %s", name, strings.Join(bad, ", "), strings.Join(ok, ", "))
	}
	if len(exclude) > 0 {
		q[apiv1.ParamExcludeClient] = exclude
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	src, err := rf.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer src.close()
	body, err := src.client.Get(ctx, path, q)
	if err != nil {
		return fmt.Errorf("report %s: %w", name, rf.apiError(err))
	}
	if *format == "json" {
		var buf bytes.Buffer
		if json.Indent(&buf, body, "", "  ") == nil {
			body = buf.Bytes()
		}
	}
	_, err = stdout.Write(body)
	return err
}

// defaultWidth is the width tables are fitted to on a terminal when
// COLUMNS does not say.
const defaultWidth = 120

// tableWidth is the width a table printed to stdout is fitted to: -width
// when given, else on a terminal $COLUMNS or defaultWidth; output to a
// file or a pipe is never cut. 0 is no limit.
func tableWidth(flagWidth int, stdout io.Writer) int {
	if flagWidth >= 0 {
		return flagWidth
	}
	f, ok := stdout.(*os.File)
	if !ok {
		return 0
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return 0
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return defaultWidth
}

// apiError says what went wrong in the terms of the command line: the
// parameter a problem names becomes the flag that set it, and a refused
// token points at -token.
func (r *readFlags) apiError(err error) error {
	var p *apiv1.Problem
	if !errors.As(err, &p) || p.Parameter == "" {
		return err
	}
	detail := p.Detail
	tokenEnv := envflag.EnvName(app.EnvPrefix, "token")
	switch {
	case p.Parameter == "Authorization" && p.Status == http.StatusUnauthorized && r.token == "":
		return fmt.Errorf("the API runs with tokens: pass a bearer token with -token or %s (mcpdrift token create makes one)", tokenEnv)
	case p.Parameter == "Authorization":
		return fmt.Errorf("the API refused the token of -token or %s: %s", tokenEnv, detail)
	case strings.HasPrefix(detail, "unknown parameter") || p.Parameter == "report":
		return err
	case p.Parameter == "Accept":
		return errors.New(detail)
	}
	return fmt.Errorf("-%s: %s", flagName(p.Parameter), detail)
}
