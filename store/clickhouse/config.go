package clickhouse

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/mcpdrift/mcpdrift/store/schema"
)

// Config configures the server backend.
type Config struct {
	// DSN locates the server or the nodes of a cluster, over the native
	// protocol: clickhouse://user:pass@host1:9000,host2:9000/db?secure=true.
	// Several addresses fail over to one another (in order, unless the DSN
	// sets connection_open_strategy). Query parameters understood by
	// clickhouse-go (secure, skip_verify, compress, dial_timeout,
	// read_timeout, max_open_conns, max_idle_conns, conn_max_lifetime, …)
	// override the fields below; other parameters are sent as settings. The
	// database in the path, if any, must agree with Schema.Database.
	DSN string
	// Schema holds the database, the retention periods, the cluster name
	// (cluster mode when set) and the deduplication window.
	Schema schema.Options
	// Compression is the block compression of the native protocol: lz4,
	// zstd, none, or auto (the default): lz4 unless every address of the
	// DSN is a loopback one (see loopbackOnly).
	Compression string
	// DialTimeout bounds connecting to one address.
	DialTimeout time.Duration
	// ReadTimeout bounds waiting for the server's next packet.
	ReadTimeout time.Duration
	// MaxOpenConns bounds the connection pool.
	MaxOpenConns int
	// MaxIdleConns is how many idle connections the pool keeps.
	MaxIdleConns int
	// ConnMaxLifetime is how long a connection is reused.
	ConnMaxLifetime time.Duration
	// Insert shapes the inserts into events_in.
	Insert InsertConfig
}

// InsertConfig shapes the inserts into events_in.
type InsertConfig struct {
	// MaxRows is the most rows sent in one INSERT; a larger batch is split
	// into several, each with its own deduplication token derived from the
	// batch's. It bounds the memory one INSERT takes on the server
	// (docs/operations.md gives the figure). Its default, 200,000, lets
	// the ingest role's replayer send the groups it gathers by default
	// (-ingest.insert.max-events) whole: each INSERT runs every
	// materialised view and leaves a part in every table they fill, so
	// fewer, larger INSERTs cost the server less CPU and fewer merges.
	MaxRows int
	// MinRows is the size below which batches without a token are held and
	// merged with others into one INSERT, for at most MaxDelay. Batches with
	// a token are sent as they are, so that a retry deduplicates.
	MinRows int
	// MaxDelay is how long a small batch without a token waits for others.
	MaxDelay time.Duration
	// Senders is how many INSERTs run at once.
	Senders int
	// Attempts is how many times one INSERT is tried when it fails with a
	// transient error (a dropped connection, a timeout, too many parts). The
	// retries carry the same deduplication token.
	Attempts int
	// Backoff is the wait before the first retry; it doubles after each.
	Backoff time.Duration
	// Timeout bounds one INSERT of merged batches, which no caller's context
	// bounds.
	Timeout time.Duration
}

// DefaultConfig returns the configuration for dsn with the default schema.
func DefaultConfig(dsn string) Config {
	sch := schema.DefaultOptions()
	sch.DeduplicationWindow = DefaultDeduplicationWindow
	return Config{
		DSN:             dsn,
		Schema:          sch,
		Compression:     "auto",
		DialTimeout:     10 * time.Second,
		ReadTimeout:     5 * time.Minute,
		MaxOpenConns:    16,
		MaxIdleConns:    8,
		ConnMaxLifetime: time.Hour,
		Insert: InsertConfig{
			MaxRows:  200_000,
			MinRows:  10_000,
			MaxDelay: 200 * time.Millisecond,
			Senders:  4,
			Attempts: 3,
			Backoff:  200 * time.Millisecond,
			Timeout:  time.Minute,
		},
	}
}

// DefaultDeduplicationWindow is the non_replicated_deduplication_window set
// on a single server: how many recent inserts per table a retry is checked
// against. It matches the default replicated_deduplication_window.
const DefaultDeduplicationWindow = 1000

// Validate reports the first invalid field by name.
func (c Config) Validate() error {
	if _, err := c.options(); err != nil {
		return err
	}
	if err := c.Schema.Validate(); err != nil {
		return fmt.Errorf("store schema: %w", err)
	}
	switch {
	case c.DialTimeout <= 0:
		return fmt.Errorf("store.dial-timeout: must be positive, not %v", c.DialTimeout)
	case c.ReadTimeout <= 0:
		return fmt.Errorf("store.read-timeout: must be positive, not %v", c.ReadTimeout)
	case c.MaxOpenConns < 1:
		return fmt.Errorf("store.max-open-conns: must be at least 1, not %d", c.MaxOpenConns)
	case c.MaxIdleConns < 0 || c.MaxIdleConns > c.MaxOpenConns:
		return fmt.Errorf("store.max-idle-conns: must be between 0 and store.max-open-conns (%d), not %d", c.MaxOpenConns, c.MaxIdleConns)
	case c.ConnMaxLifetime <= 0:
		return fmt.Errorf("store.conn-max-lifetime: must be positive, not %v", c.ConnMaxLifetime)
	}
	return c.Insert.validate(c.MaxOpenConns)
}

func (ic InsertConfig) validate(maxOpenConns int) error {
	switch {
	case ic.MaxRows < 1 || ic.MaxRows > 1_000_000:
		return fmt.Errorf("store.insert.max-rows: must be between 1 and 1000000, not %d", ic.MaxRows)
	case ic.MinRows < 0 || ic.MinRows > ic.MaxRows:
		return fmt.Errorf("store.insert.min-rows: must be between 0 and store.insert.max-rows (%d), not %d", ic.MaxRows, ic.MinRows)
	case ic.MaxDelay <= 0:
		return fmt.Errorf("store.insert.max-delay: must be positive, not %v", ic.MaxDelay)
	case ic.Senders < 1 || ic.Senders > maxOpenConns:
		return fmt.Errorf("store.insert.senders: must be between 1 and store.max-open-conns (%d), not %d", maxOpenConns, ic.Senders)
	case ic.Attempts < 1:
		return fmt.Errorf("store.insert.attempts: must be at least 1, not %d", ic.Attempts)
	case ic.Backoff < 0:
		return fmt.Errorf("store.insert.backoff: must not be negative, not %v", ic.Backoff)
	case ic.Timeout <= 0:
		return fmt.Errorf("store.insert.timeout: must be positive, not %v", ic.Timeout)
	}
	return nil
}

// loopbackOnly reports whether every address in addrs (host:port, as
// validated by options) is a loopback one: localhost, 127.0.0.0/8 or ::1,
// by name only (nothing is resolved). Compression trades CPU on both
// sides for bytes on a wire; over loopback there is no wire to spare
// (docs/operations.md gives what lz4 costs there). Any other address
// keeps lz4, which divides the bytes a real network carries.
func loopbackOnly(addrs []string) bool {
	for _, addr := range addrs {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return false
		}
		if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
			return false
		}
	}
	return len(addrs) > 0
}

// RedactedDSN returns the DSN with its password replaced, for logs.
func (c Config) RedactedDSN() string { return redact(c.DSN) }

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		if i := strings.Index(dsn, "@"); i >= 0 {
			return "xxxxx" + dsn[i:]
		}
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// dsnParams are the DSN query parameters that override Config fields.
var dsnParams = []string{"compress", "dial_timeout", "read_timeout", "max_open_conns", "max_idle_conns", "conn_max_lifetime"}

// options turns the configuration into the driver's options. The driver
// connects without a database (every statement names its tables), so that
// the database can be created by Migrate.
func (c Config) options() (*clickhouse.Options, error) {
	if c.DSN == "" {
		return nil, errors.New("store.dsn: must not be empty")
	}
	u, err := url.Parse(c.DSN)
	if err != nil {
		return nil, fmt.Errorf("store.dsn: cannot parse %q: want clickhouse://user:pass@host:9000/db", redact(c.DSN))
	}
	switch u.Scheme {
	case "clickhouse", "tcp":
	default:
		return nil, fmt.Errorf("store.dsn: scheme %q is not supported: want clickhouse:// (the native protocol, port 9000 or 9440 with secure=true)", u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("store.dsn: %q names no host", redact(c.DSN))
	}
	opts, err := clickhouse.ParseDSN(c.DSN)
	if err != nil {
		return nil, fmt.Errorf("store.dsn: %w", err)
	}
	for _, addr := range opts.Addr {
		host, port, err := net.SplitHostPort(addr)
		if err != nil || host == "" {
			return nil, fmt.Errorf("store.dsn: address %q: want host:port", addr)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("store.dsn: address %q: invalid port", addr)
		}
	}
	if db := opts.Auth.Database; db != "" && db != c.Schema.Database {
		return nil, fmt.Errorf("store.dsn: database %q differs from store.database %q: set one of them, or both alike", db, c.Schema.Database)
	}
	opts.Auth.Database = ""
	q := u.Query()
	if !q.Has("compress") {
		comp := c.Compression
		if comp == "auto" {
			comp = "lz4"
			if loopbackOnly(opts.Addr) {
				comp = "none"
			}
		}
		switch comp {
		case "lz4":
			opts.Compression = &clickhouse.Compression{Method: clickhouse.CompressionLZ4}
		case "zstd":
			opts.Compression = &clickhouse.Compression{Method: clickhouse.CompressionZSTD}
		case "none", "":
			opts.Compression = nil
		default:
			return nil, fmt.Errorf("store.compression: want auto, lz4, zstd or none, not %q", c.Compression)
		}
	}
	if !q.Has("dial_timeout") {
		opts.DialTimeout = c.DialTimeout
	}
	if !q.Has("read_timeout") {
		opts.ReadTimeout = c.ReadTimeout
	}
	if !q.Has("max_open_conns") {
		opts.MaxOpenConns = c.MaxOpenConns
	}
	if !q.Has("max_idle_conns") {
		opts.MaxIdleConns = c.MaxIdleConns
	}
	if !q.Has("conn_max_lifetime") {
		opts.ConnMaxLifetime = c.ConnMaxLifetime
	}
	opts.ClientInfo.Products = append(opts.ClientInfo.Products, struct{ Name, Version string }{Name: "mcpdrift", Version: "1"})
	return opts, nil
}
