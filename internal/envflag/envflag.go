// Package envflag overlays environment variables on a flag set: every flag
// not given on the command line takes its value from PREFIX_NAME, where NAME
// is the flag name upper-cased with dots and dashes as underscores
// (-store.dsn ← MCPDRIFT_STORE_DSN). Flags win over the environment.
package envflag

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// Parse parses args into fs, then fills the flags that were not set from the
// environment.
func Parse(fs *flag.FlagSet, args []string, prefix string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
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

// EnvName returns the environment variable that overlays flag name.
func EnvName(prefix, name string) string {
	r := strings.NewReplacer(".", "_", "-", "_")
	return prefix + "_" + strings.ToUpper(r.Replace(name))
}
