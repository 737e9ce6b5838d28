package main

import (
	"bytes"
	"errors"
	"flag"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/envflag"
)

// flagHelp reads the flag list of a -h output, as flag.PrintDefaults
// writes it: each flag's line ("  -name arg"; one-letter flags carry their
// usage after a tab), then its usage lines. It returns each flag's line
// and its usage text.
func flagHelp(t *testing.T, out string) (lines, usage map[string]string) {
	t.Helper()
	lines, usage = map[string]string{}, map[string]string{}
	name := ""
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "  -"):
			head, rest, _ := strings.Cut(l, "\t")
			name = strings.TrimPrefix(strings.Fields(head)[0], "-")
			lines[name], usage[name] = head, rest
		case strings.HasPrefix(l, "    \t") && name != "":
			usage[name] += " " + strings.TrimPrefix(l, "    \t")
		default:
			name = ""
		}
	}
	if len(lines) == 0 {
		t.Fatalf("no flags in the usage:\n%s", out)
	}
	return lines, usage
}

// argName is what PrintDefaults writes after a flag's name: nothing, or one
// word (its type, or the back-quoted name its usage gives).
var argName = regexp.MustCompile(`^  -[a-z0-9.-]+( [a-z]+)?$`)

// TestUsage reads every command's -h: each flag's argument is one word
// (PrintDefaults takes back-quoted usage text for the argument's name),
// and the flags that the environment sets name their variable.
func TestUsage(t *testing.T) {
	help := func(t *testing.T, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		run(append(args, "-h"), &out, &errOut)
		return out.String() + errOut.String()
	}
	roleHelp := func(t *testing.T, cfg app.Config) string {
		t.Helper()
		var out bytes.Buffer
		if err := cfg.Parse([]string{"-h"}, &out); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("%s -h: %v", cfg.Program, err)
		}
		return out.String()
	}
	readEnvOnly := func(name string) bool {
		for _, n := range readEnv {
			if n == name {
				return true
			}
		}
		return false
	}
	every := func(string) bool { return true }
	for _, c := range []struct {
		name string
		out  func(t *testing.T) string
		// env says which flags the environment sets, under prefix.
		env    func(flag string) bool
		prefix string
	}{
		{"serve", func(t *testing.T) string { return help(t, "serve") }, every, app.EnvPrefix},
		{"ingest", func(t *testing.T) string {
			return roleHelp(t, app.DefaultConfig(app.RoleIngest, "ingest", app.NewServerStore()))
		}, every, app.EnvPrefix},
		{"api", func(t *testing.T) string {
			return roleHelp(t, app.DefaultConfig(app.RoleAPI, "api", app.NewServerStore()))
		}, every, app.EnvPrefix},
		{"migrate", func(t *testing.T) string { return help(t, "migrate") }, every, app.EnvPrefix},
		{"simulate", func(t *testing.T) string { return help(t, "simulate") }, every, app.EnvPrefix},
		{"report", func(t *testing.T) string { return help(t, "report") }, readEnvOnly, app.EnvPrefix},
		{"report stale-usage", func(t *testing.T) string { return help(t, "report", "stale-usage") }, readEnvOnly, app.EnvPrefix},
		{"gate", func(t *testing.T) string { return help(t, "gate") }, readEnvOnly, app.EnvPrefix},
		{"check", func(t *testing.T) string { return help(t, "check") }, readEnvOnly, app.EnvPrefix},
		{"token create", func(t *testing.T) string { return help(t, "token", "create") }, every, "MCPDRIFT_TOKEN"},
		{"token list", func(t *testing.T) string { return help(t, "token", "list") }, every, "MCPDRIFT_TOKEN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines, usage := flagHelp(t, c.out(t))
			for name, l := range lines {
				if !argName.MatchString(l) {
					t.Errorf("-%s: argument is not one word: %q", name, l)
				}
				note := "(env " + envflag.EnvName(c.prefix, name) + ")"
				if got := strings.Contains(usage[name], note); got != c.env(name) {
					t.Errorf("-%s: usage names %s: %v, want %v: %q", name, note, got, c.env(name), usage[name])
				}
			}
		})
	}
	// The variable a person looks for first.
	if _, usage := flagHelp(t, help(t, "report")); !strings.Contains(usage["token"], "(env MCPDRIFT_TOKEN)") {
		t.Errorf("report -h: -token does not name MCPDRIFT_TOKEN: %q", usage["token"])
	}
}
