package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/toolchange"
)

// Exit codes of mcpdrift check.
const (
	checkSafe     = 0 // every change is safe
	checkDecision = 1 // some change needs a decision (or breaks the seed's rule)
	checkError    = 2 // no answer: bad flags, unreadable lists, server or API unreachable
)

const checkUsage = `Usage: mcpdrift check [flags] old.json [new.json]

The release check of a tools/list change, before the deploy: compares the
old list with the new one (new.json, or the live server at -server) tool by
tool and prints, as Markdown fit for a pull-request comment, each change's
class (additive, bounded migration, semantic, authority, removal), why,
whether old arguments stay valid, and the path the seed asks for. Each file
is a tools/list result as a server returns it (the result object or its
JSON-RPC response). Exit 0 when every change is safe, 1 when one needs a
decision or breaks the seed's rule, 2 on error.

Flags:
`

// checkFlags are mcpdrift check's flags.
type checkFlags struct {
	server    string
	format    string
	authority string
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
	fail := func(err error) int {
		fmt.Fprintln(stderr, "mcpdrift check:", err)
		return checkError
	}
	files, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return checkSafe
	}
	if err != nil {
		return fail(err)
	}
	if cf.format != "md" && cf.format != "json" {
		return fail(fmt.Errorf("-format: want md or json, not %q", cf.format))
	}
	switch {
	case cf.server == "" && len(files) != 2:
		fs.Usage()
		return fail(errors.New("want: mcpdrift check old.json new.json, or mcpdrift check -server URL old.json"))
	case cf.server != "" && len(files) != 1:
		fs.Usage()
		return fail(errors.New("with -server, name only the old list: mcpdrift check -server URL old.json"))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	old, err := readToolList(files[0])
	if err != nil {
		return fail(err)
	}
	var new toolchange.List
	if cf.server != "" {
		lctx, cancel := context.WithTimeout(ctx, time.Minute)
		new, err = toolchange.ListServer(lctx, cf.server, version, &http.Client{Timeout: time.Minute})
		cancel()
	} else {
		new, err = readToolList(files[1])
	}
	if err != nil {
		return fail(err)
	}
	report := toolchange.Compare(old, new, toolchange.Options{AuthorityFields: splitList(cf.authority)})
	if cf.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(report)
	} else {
		err = report.Markdown(stdout)
	}
	if err != nil {
		return fail(err)
	}
	if report.Pass() {
		return checkSafe
	}
	return checkDecision
}

// parseInterspersed parses flags given before, between or after the
// positional arguments, which it returns.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func readToolList(path string) (toolchange.List, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return toolchange.List{}, err
	}
	l, err := toolchange.Decode(b)
	if err != nil {
		return toolchange.List{}, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
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
