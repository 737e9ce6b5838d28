// Command api is the scale-out report API: any number of them run
// against one ClickHouse server or cluster (-store.dsn). For a single
// machine, `mcpdrift serve` runs ingest and API together on the embedded
// store.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/mcpdrift/mcpdrift/internal/envflag"
)

func main() {
	fs := flag.NewFlagSet("api", flag.ContinueOnError)
	dsn := fs.String("store.dsn", "", "ClickHouse server DSN, e.g. clickhouse://user:pass@host1:9000,host2:9000/mcpdrift")
	if err := envflag.Parse(fs, os.Args[1:], "MCPDRIFT"); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if *dsn == "" {
		fmt.Fprintln(os.Stderr, "api: -store.dsn (MCPDRIFT_STORE_DSN) is required: this role runs against a ClickHouse server.\nFor one machine, run `mcpdrift serve`, which embeds the store.")
		os.Exit(2)
	}
	fmt.Fprintln(os.Stderr, "api: the ClickHouse server backend is not part of this build yet; run `mcpdrift serve` on the embedded store meanwhile.")
	os.Exit(1)
}
