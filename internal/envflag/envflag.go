// Package envflag overlays environment variables on a flag set: every flag
// not given on the command line takes its value from PREFIX_NAME, where NAME
// is the flag name upper-cased with dots and dashes as underscores
// (-store.dsn ← MCPDRIFT_STORE_DSN). Flags win over the environment. Each
// overlaid flag's usage ends with its variable, "(env MCPDRIFT_STORE_DSN)",
// so that -h lists them.
package envflag

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Parse parses args into fs, then fills every flag that was not set from
// the environment.
func Parse(fs *flag.FlagSet, args []string, prefix string) error {
	return ParseOnly(fs, args, prefix)
}

// ParseOnly is Parse for the named flags only; with no names, every flag
// of fs is overlaid. The others never read the environment.
func ParseOnly(fs *flag.FlagSet, args []string, prefix string, names ...string) error {
	// Before fs.Parse, which prints the usage on -h.
	Annotate(fs, prefix, names...)
	if err := fs.Parse(args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil || !overlaid(f, names) {
			return
		}
		name := EnvName(prefix, f.Name)
		if v, ok := os.LookupEnv(name); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("invalid value %q for %s (flag -%s): %w", v, name, f.Name, e)
			}
		}
	})
	return err
}

// Annotate ends the usage of each named flag (every flag, with no names)
// with the variable that overlays it: "(env MCPDRIFT_STORE_DSN)". Parse and
// ParseOnly call it; a command that prints its usage without parsing calls
// it itself. Annotating twice adds nothing.
func Annotate(fs *flag.FlagSet, prefix string, names ...string) {
	fs.VisitAll(func(f *flag.Flag) {
		if note := " (env " + EnvName(prefix, f.Name) + ")"; overlaid(f, names) && !strings.HasSuffix(f.Usage, note) {
			f.Usage += note
		}
	})
}

func overlaid(f *flag.Flag, names []string) bool {
	return len(names) == 0 || slices.Contains(names, f.Name)
}

// EnvName returns the environment variable that overlays flag name.
func EnvName(prefix, name string) string {
	r := strings.NewReplacer(".", "_", "-", "_")
	return prefix + "_" + strings.ToUpper(r.Replace(name))
}
