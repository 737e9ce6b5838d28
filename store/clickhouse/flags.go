package clickhouse

import "flag"

// RegisterFlags binds c's fields to flags of fs under store.* (and the
// retention flags the all-in-one binary also has), with c's values as
// defaults. Every binary that runs against a server registers the same
// flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.DSN, "store.dsn", c.DSN, "ClickHouse server DSN over the native protocol, e.g. clickhouse://user:pass@host1:9000,host2:9000/mcpdrift?secure=true (several hosts fail over)")
	fs.StringVar(&c.Schema.Database, "store.database", c.Schema.Database, "ClickHouse database of mcpdrift's tables (the DSN's path, if any, must agree)")
	fs.StringVar(&c.Schema.Cluster, "store.cluster", c.Schema.Cluster, "ClickHouse cluster (remote_servers name) for ON CLUSTER DDL, Replicated *_local tables and Distributed tables; empty for a single server")
	fs.IntVar(&c.Schema.DeduplicationWindow, "store.dedup-window", c.Schema.DeduplicationWindow, "non_replicated_deduplication_window set on a single server's tables, so that retried inserts are stored once (0 leaves the tables as they are)")
	c.Schema.RegisterRetentionFlags(fs)
	fs.StringVar(&c.Compression, "store.compression", c.Compression, "native protocol compression: lz4, zstd, none, or auto: none when every address of -store.dsn is a loopback one (localhost, 127.0.0.0/8, ::1), lz4 otherwise")
	fs.DurationVar(&c.DialTimeout, "store.dial-timeout", c.DialTimeout, "timeout to connect to one ClickHouse address")
	fs.DurationVar(&c.ReadTimeout, "store.read-timeout", c.ReadTimeout, "timeout waiting for the server during a query")
	fs.IntVar(&c.MaxOpenConns, "store.max-open-conns", c.MaxOpenConns, "connection pool size")
	fs.IntVar(&c.MaxIdleConns, "store.max-idle-conns", c.MaxIdleConns, "idle connections kept in the pool")
	fs.DurationVar(&c.ConnMaxLifetime, "store.conn-max-lifetime", c.ConnMaxLifetime, "how long a connection is reused")
	fs.IntVar(&c.Insert.MaxRows, "store.insert.max-rows", c.Insert.MaxRows, "most rows in one INSERT; larger batches are split")
	fs.IntVar(&c.Insert.MinRows, "store.insert.min-rows", c.Insert.MinRows, "batches without a deduplication token smaller than this are merged before they are inserted")
	fs.DurationVar(&c.Insert.MaxDelay, "store.insert.max-delay", c.Insert.MaxDelay, "longest a small batch without a token waits to be merged")
	fs.IntVar(&c.Insert.Senders, "store.insert.senders", c.Insert.Senders, "INSERTs run at once")
	fs.IntVar(&c.Insert.Attempts, "store.insert.attempts", c.Insert.Attempts, "tries of one INSERT on transient errors (same deduplication token)")
	fs.DurationVar(&c.Insert.Backoff, "store.insert.backoff", c.Insert.Backoff, "wait before the first retry of an INSERT, doubled after each")
	fs.DurationVar(&c.Insert.Timeout, "store.insert.timeout", c.Insert.Timeout, "timeout of one INSERT of merged batches")
}
