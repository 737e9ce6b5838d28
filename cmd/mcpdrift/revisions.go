package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/registry"
)

const revisionsUsage = `Usage: mcpdrift revisions [flags] TOOL

The history of a tool's advertised revisions, from the registry of
advertised definitions (dev.mcpdrift.advertised): per service and
environment, each revision's first and last advertisement, its instances,
how long it overlapped the revision before (a rolling deploy serving
both), and the change from it as the release check classifies it. With
-old and -new, the change between those two revisions instead: class,
verdict, whether old arguments stay valid (with a counterexample) and a
line diff of the two definitions.

Flags:
`

// revisionsCmd runs `mcpdrift revisions`.
func revisionsCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcpdrift revisions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), revisionsUsage)
		fs.PrintDefaults()
	}
	var read readFlags
	read.register(fs)
	service := fs.String("service", "", "only the revisions this service advertised")
	environment := fs.String("environment", "", "only the revisions advertised in this environment")
	old := fs.String("old", "", "with -new: the older revision of a diff")
	new := fs.String("new", "", "with -old: the newer revision of a diff")
	format := fs.String("format", "text", "output: text or json")
	pos, err := parseInterspersed(fs, args, read.parse)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		fs.Usage()
		return errors.New("want: mcpdrift revisions [flags] TOOL")
	case (*old == "") != (*new == ""):
		return errors.New("-old and -new go together")
	case *format != "text" && *format != "json":
		return fmt.Errorf("-format: want text or json, not %q", *format)
	}
	tool := pos[0]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	src, err := read.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer src.close()
	q := url.Values{}
	if *service != "" {
		q.Set(apiv1.ParamService, *service)
	}
	if *environment != "" {
		q.Set(apiv1.ParamEnvironment, *environment)
	}
	path := "/api/v1/tools/" + url.PathEscape(tool)
	var body any
	if *old != "" {
		q.Set(apiv1.ParamOld, *old)
		q.Set(apiv1.ParamNew, *new)
		var d registry.Diff
		if err := getRegistry(ctx, src.client, path+"/diff", q, &d); err != nil {
			return read.apiError(err)
		}
		body = d
		if *format == "text" {
			return d.WriteText(stdout)
		}
	} else {
		var h apiv1.RevisionsBody
		if err := getRegistry(ctx, src.client, path+"/revisions", q, &h); err != nil {
			return read.apiError(err)
		}
		body = h
		if *format == "text" {
			return registry.WriteText(stdout, tool, h.Histories)
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(body)
}

// getRegistry requests one of the registry's endpoints, which answer JSON
// only (Client.GetJSON asks for format=json, which they do not take).
func getRegistry(ctx context.Context, c *apiclient.Client, path string, q url.Values, dest any) error {
	body, err := c.Get(ctx, path, q)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, dest); err != nil {
		return fmt.Errorf("cannot decode the answer of %s (%d bytes): %w", path, len(body), err)
	}
	return nil
}
