// Command chservers starts, by hand, the ClickHouse servers the tests run
// against: one server and a 2-shard cluster, out of the cached libchdb, on
// loopback ports, with the cluster's schema applied as the tests apply it
// (clickhousetest.Cluster.Migrate). It prints their addresses, the
// environment that points the server tests at the server, and the command
// lines of the scale-out roles on the cluster, and stops them (SIGTERM, by
// pid) on Ctrl-C.
//
//	go run ./internal/testing/clickhousetest/chservers -dir /tmp/ch
//
// Test scaffolding, not a way to run ClickHouse in production.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

func main() {
	dir := flag.String("dir", "", "directory of the servers' data (default: a new temporary directory, removed at exit)")
	migrate := flag.Bool("migrate", true, "apply the schema (database mcpdrift) to the cluster, as the tests do")
	flag.Parse()
	if err := run(*dir, *migrate); err != nil {
		fmt.Fprintln(os.Stderr, "chservers:", err)
		os.Exit(1)
	}
}

func run(dir string, migrate bool) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "chservers-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	defer clickhousetest.StopAll()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	server, err := clickhousetest.StartServer(ctx, filepath.Join(dir, "server"))
	if err != nil {
		return err
	}
	defer server.Stop()
	cluster, err := clickhousetest.StartCluster(ctx, filepath.Join(dir, "cluster"), 2)
	if err != nil {
		return err
	}
	defer cluster.Stop()
	if migrate {
		if _, err := cluster.Migrate(ctx, schema.DefaultOptions()); err != nil {
			return err
		}
	}
	fmt.Printf("ClickHouse server (pid %d): native %s, HTTP %s\n", server.Pid(), server.Addr(), server.HTTPURL())
	for _, n := range cluster.Nodes {
		fmt.Printf("cluster %s, %s (pid %d): native %s, HTTP %s\n", cluster.Name, n.Name, n.Pid(), n.Addr(), n.HTTPURL())
	}
	fmt.Printf("\nPoint the server tests at the server (the cluster tests start a cluster of their own):\n\n  export %s=%s\n\n",
		clickhousetest.ServerDSNEnv, server.DSN())
	fmt.Printf("Run the scale-out roles on the cluster (its schema is in database mcpdrift):\n\n"+
		"  bin/ingest -store.dsn=%s -store.cluster=%s -auth.insecure-allow-no-tokens\n"+
		"  bin/api -store.dsn=%s -store.cluster=%s -migrate=false -auth.insecure-allow-no-tokens\n\nCtrl-C stops them.\n",
		cluster.DSN(), cluster.Name, cluster.DSN(), cluster.Name)
	<-ctx.Done()
	return nil
}
