package schema

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"github.com/mcpdrift/mcpdrift/store"
)

// LocalSuffix is appended to a table's name for the replicated table that
// holds a shard's rows in cluster mode.
const LocalSuffix = "_local"

// ShardingKey is the sharding key of every Distributed table: one tenant's
// tool lives on one shard.
const ShardingKey = "cityHash64(tenant, tool)"

// replicationPath is the ZooKeeper/Keeper path of a sharded replicated table;
// globalReplicationPath that of a table every node holds in full.
const (
	replicationPath       = "/clickhouse/tables/{shard}/{database}/{table}"
	globalReplicationPath = "/clickhouse/tables/all/{database}/{table}"
)

// funcs returns the template functions of the cluster actions for opts.
func funcs(opts Options) template.FuncMap {
	cluster := opts.Cluster != ""
	return template.FuncMap{
		"table": func(name string) string {
			if cluster {
				return opts.Database + "." + name + LocalSuffix
			}
			return opts.Database + "." + name
		},
		"engine": func(name string, args ...string) string {
			if cluster {
				args = append([]string{quote(replicationPath), quote("{replica}")}, args...)
				name = "Replicated" + name
			}
			if len(args) == 0 {
				return name
			}
			return name + "(" + strings.Join(args, ", ") + ")"
		},
		"distributed": func(name string) string {
			if !cluster {
				return ""
			}
			return distributedDDL(opts, name) + ";"
		},
	}
}

// distributedDDL creates the Distributed table name in front of name_local.
func distributedDDL(opts Options, name string) string {
	return "CREATE TABLE IF NOT EXISTS " + opts.Database + "." + name + " ON CLUSTER " + quote(opts.Cluster) +
		" AS " + opts.Database + "." + name + LocalSuffix +
		"\nENGINE = Distributed(" + quote(opts.Cluster) + ", " + opts.Database + ", " + name + LocalSuffix + ", " + ShardingKey + ")"
}

// quote renders s as a ClickHouse string literal. Callers pass validated
// names and fixed paths, so only quotes and backslashes need escaping.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// The cluster actions and their single-node form, for checksums.
var (
	clusterBlockRE = regexp.MustCompile(`(?s)\{\{if \.Cluster\}\}.*?\{\{end\}\}\n?`)
	distributedRE  = regexp.MustCompile(`\{\{distributed "[a-z0-9_]+"\}\}\n?`)
	onClusterRE    = regexp.MustCompile(`\{\{\.OnCluster\}\}`)
	tableRE        = regexp.MustCompile(`\{\{table "([a-z0-9_]+)"\}\}`)
	engineRE       = regexp.MustCompile(`\{\{engine "([A-Za-z]+)"\}\}`)
	engineArgsRE   = regexp.MustCompile(`\{\{engine "([A-Za-z]+)" "([^"]*)"\}\}`)
)

// singleNodeForm rewrites a migration file as it was written before cluster
// mode: every cluster action replaced by its single-node rendering, every
// cluster-only block and Distributed line removed.
func singleNodeForm(raw []byte) []byte {
	s := clusterBlockRE.ReplaceAll(raw, nil)
	s = distributedRE.ReplaceAll(s, nil)
	s = onClusterRE.ReplaceAll(s, nil)
	s = tableRE.ReplaceAll(s, []byte("{{.Database}}.$1"))
	s = engineArgsRE.ReplaceAll(s, []byte("$1($2)"))
	return engineRE.ReplaceAll(s, []byte("$1"))
}

// boot runs bootStatements unless every node already has both tables:
// a start-up after the first runs no DDL (ON CLUSTER DDL is slow).
func boot(ctx context.Context, db Execer, opts Options) error {
	tables, nodes := "system.tables", "system.one"
	if opts.Cluster != "" {
		tables = "clusterAllReplicas(" + quote(opts.Cluster) + ", system.tables)"
		nodes = "clusterAllReplicas(" + quote(opts.Cluster) + ", system.one)"
	}
	var rows []struct {
		OK uint8 `json:"ok"`
	}
	q := store.Query{Name: "schema_boot", SQL: "SELECT toUInt8(ifNull((SELECT count() FROM " + tables +
		" WHERE database = {database:String} AND name IN ('schema_migrations', '" + lockTable + "')) = 2 * (SELECT count() FROM " + nodes + "), 0)) AS ok"}
	if err := db.Query(ctx, q, store.Params{}.String("database", opts.Database), &rows); err != nil {
		return fmt.Errorf("cannot list the migrations tables: %w", err)
	}
	if len(rows) == 1 && rows[0].OK == 1 {
		return nil
	}
	for _, s := range bootStatements(opts) {
		if err := db.Exec(ctx, s, nil); err != nil {
			return fmt.Errorf("cannot create the migrations tables: %w", err)
		}
	}
	return nil
}

// bootStatements create the database and the migrations table. In cluster
// mode the migrations table is replicated to every node of the cluster (one
// replica set, not one per shard), so that every process sees the same
// record.
func bootStatements(opts Options) []string {
	onCluster, engine, lockEngine := "", "ReplacingMergeTree(applied_at)", "MergeTree"
	if opts.Cluster != "" {
		onCluster = " ON CLUSTER " + quote(opts.Cluster)
		engine = "ReplicatedReplacingMergeTree(" + quote(globalReplicationPath) + ", " + quote("{replica}") + ", applied_at)"
		lockEngine = "ReplicatedMergeTree(" + quote(globalReplicationPath) + ", " + quote("{replica}") + ")"
	}
	return []string{
		"CREATE DATABASE IF NOT EXISTS " + opts.Database + onCluster,
		"CREATE TABLE IF NOT EXISTS " + opts.Database + `.schema_migrations` + onCluster + `
(
    version    UInt32,
    name       String,
    checksum   String,
    applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ` + engine + `
ORDER BY version`,
		// The lock of the migrators and the epoch writers read (lock.go).
		// Its rows are deduplicated by token on a single node too: that
		// is the claim's compare-and-set.
		"CREATE TABLE IF NOT EXISTS " + opts.Database + "." + lockTable + onCluster + `
(
    seq   UInt64,
    owner String,
    at    DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ` + lockEngine + `
ORDER BY seq
SETTINGS non_replicated_deduplication_window = 1000`,
	}
}

// alterTable starts an ALTER of the table that holds name's rows.
func alterTable(opts Options, name string) string {
	if opts.Cluster != "" {
		return "ALTER TABLE " + opts.Database + "." + name + LocalSuffix + " ON CLUSTER " + quote(opts.Cluster)
	}
	return "ALTER TABLE " + opts.Database + "." + name
}
