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
	"github.com/mcpdrift/mcpdrift/internal/envflag"
	"github.com/mcpdrift/mcpdrift/internal/registry"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

// Exit codes of mcpdrift check.
const (
	checkSafe     = 0 // every change is safe
	checkDecision = 1 // some change needs a decision (or breaks the seed's rule)
	checkError    = 2 // no answer: bad flags, unreadable lists, server or API unreachable
)

const checkUsage = `Usage: mcpdrift check [flags] old.json [new.json]
       mcpdrift check -deployed -service S [flags] [new.json]

The release check of a tools/list change, before the deploy: compares the
old list with the new one (new.json, or the live server at -server) tool by
tool and prints, as Markdown fit for a pull-request comment, each change's
class (additive, bounded migration, semantic, authority, removal), why,
whether old arguments stay valid, and the path the seed asks for. Each file
is a tools/list result as a server returns it (the result object or its
JSON-RPC response). Exit 0 when every change is safe, 1 when one needs a
decision or breaks the seed's rule, 2 on error.

With a store (-api URL, or -data.dir), the check is weighed by the calls
planned with each tool's old revision over -window: who still plans with
it, and what the rollout would do to them. A change that needs a decision
is safe when no call in the window used the old revision or an older one,
and none left its revision unsaid (or -unknown-callers safe judges those
safe).

With -deployed, the old list is what -service advertises now (in
-environment, or its only one), from the registry of advertised
definitions; a tool whose instances advertise several revisions at once
is said to be mid-deploy.

Flags:
`

// checkFlags are mcpdrift check's flags.
type checkFlags struct {
	server      string
	format      string
	authority   string
	read        readFlags
	window      string
	environment string
	service     string
	exclude     multiFlag
	unknown     string
	deployed    bool
}

// weighed reports whether the check reads a store: -api or -data.dir was
// given, as a flag or from the environment.
func (cf *checkFlags) weighed(fs *flag.FlagSet) bool {
	set := cf.read.api != ""
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "data.dir" })
	_, env := os.LookupEnv(envflag.EnvName("MCPDRIFT", "data.dir"))
	return set || env
}

// checkCmd runs `mcpdrift check` and returns its exit code.
func checkCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpdrift check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), checkUsage)
		fs.PrintDefaults()
	}
	var cf checkFlags
	fs.StringVar(&cf.server, "server", "", "URL of a live MCP server (streamable HTTP) whose tools/list is the new list, instead of new.json")
	fs.StringVar(&cf.format, "format", "md", "output: md (a pull-request comment) or json")
	fs.StringVar(&cf.authority, "authority-fields", strings.Join(toolchange.DefaultAuthorityFields, ","),
		"comma-separated field names that widen or redirect an action when added (matched ignoring case, _ and -)")
	cf.read.register(fs)
	fs.StringVar(&cf.window, "window", apiv1.DefaultWindow, "with a store: the window, ending now, whose calls weigh the check (14d, 36h)")
	fs.StringVar(&cf.environment, "environment", "", "with a store: only the calls of this environment")
	fs.StringVar(&cf.service, "service", "", "with a store: only the calls of this service")
	fs.Var(&cf.exclude, "exclude-client", "with a store: leave out this client, name or name@version (repeatable)")
	fs.BoolVar(&cf.deployed, "deployed", false, "take the old list from the registry: what -service advertises now (needs a store)")
	fs.StringVar(&cf.unknown, "unknown-callers", "", "with a store: at_risk (default) or safe: how calls that did not say which revision they were planned with are judged")
	fail := func(err error) int {
		fmt.Fprintln(stderr, "mcpdrift check:", err)
		return checkError
	}
	files, err := parseInterspersed(fs, args, cf.read.parse)
	if errors.Is(err, flag.ErrHelp) {
		return checkSafe
	}
	if err != nil {
		return fail(err)
	}
	if cf.format != "md" && cf.format != "json" {
		return fail(fmt.Errorf("-format: want md or json, not %q", cf.format))
	}
	if cf.unknown != "" && cf.unknown != toolchange.UnknownCallersAtRisk && cf.unknown != toolchange.UnknownCallersSafe {
		return fail(fmt.Errorf("-unknown-callers: want at_risk or safe, not %q", cf.unknown))
	}
	switch {
	case cf.deployed && cf.service == "":
		return fail(errors.New("-deployed needs -service: the service whose advertised list is the old one"))
	case cf.deployed && cf.server == "" && len(files) != 1:
		fs.Usage()
		return fail(errors.New("with -deployed, name only the new list: mcpdrift check -deployed -service S new.json"))
	case cf.deployed && cf.server != "" && len(files) != 0:
		fs.Usage()
		return fail(errors.New("with -deployed and -server, name no list"))
	case cf.deployed:
		files = append([]string{""}, files...) // no old list: the registry's
	case cf.server == "" && len(files) != 2:
		fs.Usage()
		return fail(errors.New("want: mcpdrift check old.json new.json, or mcpdrift check -server URL old.json"))
	case cf.server != "" && len(files) != 1:
		fs.Usage()
		return fail(errors.New("with -server, name only the old list: mcpdrift check -server URL old.json"))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var oldDoc []byte
	var old toolchange.List
	if !cf.deployed {
		if oldDoc, old, err = readToolList(files[0]); err != nil {
			return fail(err)
		}
	}
	var newDoc []byte
	var new toolchange.List
	if cf.server != "" {
		lctx, cancel := context.WithTimeout(ctx, time.Minute)
		newDoc, err = toolchange.ListServer(lctx, cf.server, version, &http.Client{Timeout: time.Minute})
		cancel()
		if err == nil {
			if new, err = toolchange.Decode(newDoc); err != nil {
				err = fmt.Errorf("the tools of %s: %w", cf.server, err)
			}
		}
	} else {
		newDoc, new, err = readToolList(files[1])
	}
	if err != nil {
		return fail(err)
	}
	fields := splitList(cf.authority)
	var report toolchange.Report
	var out any
	var deployed *registry.Deployed
	if cf.weighed(fs) || cf.deployed {
		body, err := cf.weigh(ctx, stderr, apiv1.CheckRequest{Old: oldDoc, New: newDoc, AuthorityFields: fields})
		if err != nil {
			return fail(err)
		}
		report, out, deployed = body.Report(), body, body.Deployed
	} else {
		report = toolchange.Compare(old, new, toolchange.Options{AuthorityFields: fields})
		out = report
	}
	if cf.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(out)
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
		return checkSafe
	}
	return checkDecision
}

// weigh asks the API (or the data directory, served in this process) for
// the check weighed by usage.
func (cf *checkFlags) weigh(ctx context.Context, stderr io.Writer, req apiv1.CheckRequest) (apiclient.CheckBody, error) {
	src, err := cf.read.open(ctx, stderr)
	if err != nil {
		return apiclient.CheckBody{}, err
	}
	defer src.close()
	q := url.Values{apiv1.ParamWindow: {cf.window}}
	if cf.environment != "" {
		q.Set(apiv1.ParamEnvironment, cf.environment)
	}
	if cf.service != "" {
		q.Set(apiv1.ParamService, cf.service)
	}
	if len(cf.exclude) > 0 {
		q[apiv1.ParamExcludeClient] = cf.exclude
	}
	if cf.unknown != "" {
		q.Set(apiv1.ParamUnknownCallers, cf.unknown)
	}
	var body apiclient.CheckBody
	if err := src.client.PostJSON(ctx, "/api/v1/check", q, req, &body); err != nil {
		return apiclient.CheckBody{}, cf.read.apiError(err)
	}
	return body, nil
}

// parseInterspersed parses flags given before, between or after the
// positional arguments, which it returns; parse parses one run of them.
func parseInterspersed(fs *flag.FlagSet, args []string, parse func(*flag.FlagSet, []string) error) ([]string, error) {
	var pos []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// readToolList reads a tools/list document from a file.
func readToolList(path string) ([]byte, toolchange.List, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, toolchange.List{}, err
	}
	l, err := toolchange.Decode(b)
	if err != nil {
		return nil, toolchange.List{}, fmt.Errorf("%s: %w", path, err)
	}
	return b, l, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	out := []string{}
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
