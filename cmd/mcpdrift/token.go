package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/envflag"
	"github.com/mcpdrift/mcpdrift/internal/render"
)

// defaultTokensFile is where `token create` writes unless told otherwise.
func defaultTokensFile() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "mcpdrift", "tokens.jsonl")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config", "mcpdrift", "tokens.jsonl")
	}
	return "tokens.jsonl"
}

// tokenCmd runs `mcpdrift token create|list`.
func tokenCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("token: want a subcommand: create or list")
	}
	switch args[0] {
	case "create":
		return tokenCreate(args[1:], stdout, stderr)
	case "list":
		return tokenList(args[1:], stdout, stderr)
	}
	return fmt.Errorf("token: unknown subcommand %q: want create or list", args[0])
}

func tokenCreate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcpdrift token create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tenant := fs.String("tenant", "", "tenant the token is bound to (required)")
	var scopes multiFlag
	fs.Var(&scopes, "scope", "scope of the token: ingest, read, audit or drifttest; repeatable or comma-separated (required)")
	file := fs.String("file", defaultTokensFile(), "token file to append the token's hash to (the -auth.tokens-file of serve, api and ingest)")
	desc := fs.String("description", "", "a note stored with the token")
	if err := envflag.Parse(fs, args, "MCPDRIFT_TOKEN"); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("token create: unexpected argument %q", fs.Arg(0))
	}
	if *tenant == "" {
		return errors.New("token create: -tenant is required")
	}
	if len(scopes) == 0 {
		return errors.New("token create: -scope is required (ingest, read, audit or drifttest)")
	}
	sc, err := auth.ParseScopes(strings.Join(scopes, ","))
	if err != nil {
		return fmt.Errorf("token create: -scope: %w", err)
	}
	token, rec, err := auth.Generate(*tenant, sc, *desc)
	if err != nil {
		return fmt.Errorf("token create: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(*file), 0o700); err != nil {
		return fmt.Errorf("token create: cannot create the token file's directory: %w", err)
	}
	if err := auth.Append(*file, rec); err != nil {
		return fmt.Errorf("token create: %w", err)
	}
	fmt.Fprintln(stdout, token)
	fmt.Fprintf(stderr, "token %s for tenant %s with scopes %v added to %s (its SHA-256 only).\n"+
		"This is the only time the token is shown. Serve with -auth.tokens-file=%s; send it as Authorization: Bearer <token>.\n",
		rec.ID, rec.Tenant, rec.Scopes, *file, *file)
	return nil
}

func tokenList(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcpdrift token list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", defaultTokensFile(), "token file")
	if err := envflag.Parse(fs, args, "MCPDRIFT_TOKEN"); err != nil {
		return err
	}
	t, err := auth.Load(*file)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d tokens in %s; tenants %v\n\n", t.Len(), *file, t.Tenants())
	tbl := render.Table{Columns: []render.Column{
		{Name: "id", Title: "ID"}, {Name: "tenant", Title: "Tenant"}, {Name: "scopes", Title: "Scopes"},
		{Name: "created", Title: "Created"}, {Name: "description", Title: "Description"},
	}}
	for _, r := range t.Records() {
		tbl.Rows = append(tbl.Rows, []string{r.ID, r.Tenant, joinScopes(r.Scopes), r.Created.Format("2006-01-02"), r.Description})
	}
	return tbl.Text(stdout)
}

func joinScopes(sc []auth.Scope) string {
	out := make([]string, len(sc))
	for i, s := range sc {
		out[i] = string(s)
	}
	return strings.Join(out, ",")
}
