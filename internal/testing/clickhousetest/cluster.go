package clickhousetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/clickhouse"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// ClusterName is the remote_servers entry of a Cluster.
const ClusterName = "mcpdrift_test"

// Cluster is nodes that are the shards, one replica each, of the
// remote_servers entry ClusterName.
type Cluster struct {
	Name  string
	Nodes []*Node
}

// DSN lists every node, so that a client fails over between them.
func (c *Cluster) DSN() string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr()
	}
	return "clickhouse://" + strings.Join(addrs, ",")
}

// Stop stops every node.
func (c *Cluster) Stop() error {
	var errs []error
	for _, n := range c.Nodes {
		errs = append(errs, n.Stop())
	}
	return errors.Join(errs...)
}

// StartCluster starts shards nodes under dir (one directory each) that
// know one another as the shards of ClusterName.
func StartCluster(ctx context.Context, dir string, shards int) (*Cluster, error) {
	if shards < 1 {
		return nil, fmt.Errorf("cannot start a cluster of %d shards", shards)
	}
	c := &Cluster{Name: ClusterName}
	for i := range shards {
		// The config needs every node's port: create the nodes first, then
		// rewrite their configs with the whole cluster.
		n, err := newNode(fmt.Sprintf("shard%d", i+1), filepath.Join(dir, fmt.Sprintf("shard%d", i+1)), "", DefaultMemoryBytes)
		if err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, n)
	}
	for i, n := range c.Nodes {
		if err := writeConfig(n, DefaultMemoryBytes, c.remoteServers()+macros(i+1)); err != nil {
			return nil, err
		}
	}
	for _, n := range c.Nodes {
		if err := n.Start(ctx); err != nil {
			_ = c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// remoteServers is the remote_servers section naming every node.
func (c *Cluster) remoteServers() string {
	var b strings.Builder
	b.WriteString("    <remote_servers>\n        <" + c.Name + ">\n")
	for _, n := range c.Nodes {
		fmt.Fprintf(&b, "            <shard><internal_replication>true</internal_replication><replica><host>127.0.0.1</host><port>%d</port></replica></shard>\n", n.TCPPort)
	}
	b.WriteString("        </" + c.Name + ">\n    </remote_servers>\n")
	return b.String()
}

func macros(shard int) string {
	return fmt.Sprintf("    <macros><shard>%02d</shard><replica>r1</replica></macros>\n", shard)
}

// Migrate applies the cluster-mode schema of opts (opts.Cluster is set to
// the cluster's name) as test scaffolding, doing by hand what distributed
// DDL and replication would do: schema.Apply runs its cluster-mode
// statements through an Execer that runs each ON CLUSTER statement on
// every node in turn, with ON CLUSTER removed and Replicated engines made
// plain, before the next statement, and every other statement (the
// backfills through Distributed tables) once, on the first node. Records in
// schema_migrations go to every node, as the replicated table would carry
// them. Since no table is replicated, it then sets the
// non_replicated_deduplication_window of every *_local table, so that
// retried inserts deduplicate as on replicated tables.
func (c *Cluster) Migrate(ctx context.Context, opts schema.Options) ([]int, error) {
	return c.MigrateThrough(ctx, opts, 0)
}

// MigrateThrough is Migrate stopped after migration last (every migration
// when last is 0), as schema.ApplyThrough.
func (c *Cluster) MigrateThrough(ctx context.Context, opts schema.Options, last int) ([]int, error) {
	opts.Cluster = c.Name
	f, err := c.fanout(opts)
	if err != nil {
		return nil, err
	}
	defer f.close()
	applied, err := schema.ApplyThrough(ctx, f, opts, last)
	if err != nil {
		return applied, err
	}
	for _, t := range schema.MergeTreeTables {
		sql := fmt.Sprintf("ALTER TABLE %s.%s%s ON CLUSTER '%s' MODIFY SETTING non_replicated_deduplication_window = %d",
			opts.Database, t, schema.LocalSuffix, c.Name, clickhouse.DefaultDeduplicationWindow)
		if err := f.Exec(ctx, sql, nil); err != nil {
			if last > 0 && strings.Contains(err.Error(), "code: 60,") {
				// UNKNOWN_TABLE: a later migration creates it.
				continue
			}
			return applied, fmt.Errorf("cannot set the deduplication window of %s: %w", t, err)
		}
	}
	return applied, nil
}

// fanout opens a store on every node, its schema options opts (in cluster
// mode: inserts through Distributed tables are sent to the shards at once).
func (c *Cluster) fanout(opts schema.Options) (fanout, error) {
	var f fanout
	for _, n := range c.Nodes {
		cfg := clickhouse.DefaultConfig(n.DSN())
		cfg.Schema = opts
		st, err := clickhouse.Open(cfg)
		if err != nil {
			f.close()
			return fanout{}, err
		}
		f.nodes = append(f.nodes, st)
		f.names = append(f.names, n.Name)
	}
	return f, nil
}

// DropDatabase drops db on every node.
func (c *Cluster) DropDatabase(ctx context.Context, db string) error {
	var errs []error
	for _, n := range c.Nodes {
		st, err := clickhouse.Open(clickhouse.DefaultConfig(n.DSN()))
		if err != nil {
			return err
		}
		errs = append(errs, st.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" SYNC", nil))
		st.Close()
	}
	return errors.Join(errs...)
}

// fanout runs the statements of a cluster-mode schema on a cluster that
// has no DDL worker and no replication; see Cluster.Migrate.
type fanout struct {
	nodes []*clickhouse.Store
	names []string
}

var (
	onClusterRE  = regexp.MustCompile(` ON CLUSTER '[^']*'`)
	replicatedRE = regexp.MustCompile(`Replicated([A-Za-z]*MergeTree)\('[^']*', '\{replica\}'(, )?`)
	migrationsRE = regexp.MustCompile(`^INSERT INTO [A-Za-z0-9_]+\.schema_(migrations|lock) `)
)

// Unreplicate rewrites a cluster-mode statement for one node: without ON
// CLUSTER, and with ReplicatedXMergeTree(path, replica, args…) as
// XMergeTree(args…).
func Unreplicate(sql string) string {
	return replicatedRE.ReplaceAllString(onClusterRE.ReplaceAllString(sql, ""), "$1(")
}

func (f fanout) Exec(ctx context.Context, sql string, params store.Params) error {
	if !onClusterRE.MatchString(sql) && !migrationsRE.MatchString(sql) {
		return f.nodes[0].Exec(ctx, sql, params)
	}
	sql = Unreplicate(sql)
	for i, st := range f.nodes {
		if err := st.Exec(ctx, sql, params); err != nil {
			return fmt.Errorf("node %s: %w", f.names[i], err)
		}
	}
	return nil
}

func (f fanout) Query(ctx context.Context, q store.Query, params store.Params, dest any) error {
	return f.nodes[0].Query(ctx, q, params, dest)
}

func (f fanout) close() {
	for _, st := range f.nodes {
		st.Close()
	}
}

// writeConfig rewrites n's config.xml.
func writeConfig(n *Node, memory int64, extra string) error {
	if err := os.WriteFile(n.configPath(), []byte(nodeConfig(memory, extra)), 0o640); err != nil {
		return fmt.Errorf("cannot write the config of node %s: %w", n.Name, err)
	}
	return nil
}
