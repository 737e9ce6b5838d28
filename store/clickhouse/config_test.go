package clickhouse

import (
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

func TestConfigValidate(t *testing.T) {
	f := func(name string, mod func(*Config), wantErr string) {
		t.Helper()
		cfg := DefaultConfig("clickhouse://user:s3cret@ch1:9000,ch2:9000/mcpdrift")
		mod(&cfg)
		err := cfg.Validate()
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error: %v", name, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%s: error %v, want one containing %q", name, err, wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: error leaks the password: %v", name, err)
		}
	}
	f("default", func(*Config) {}, "")
	f("no database in path", func(c *Config) { c.DSN = "clickhouse://ch1:9000" }, "")
	f("tcp scheme", func(c *Config) { c.DSN = "tcp://ch1:9000" }, "")
	f("tls", func(c *Config) { c.DSN = "clickhouse://u:s3cret@ch1:9440/mcpdrift?secure=true&skip_verify=false" }, "")
	f("empty", func(c *Config) { c.DSN = "" }, "store.dsn: must not be empty")
	f("http", func(c *Config) { c.DSN = "http://ch1:8123/mcpdrift" }, `scheme "http" is not supported`)
	f("https", func(c *Config) { c.DSN = "https://u:s3cret@ch1:8443/?secure=true" }, `scheme "https" is not supported`)
	f("no host", func(c *Config) { c.DSN = "clickhouse:///mcpdrift" }, "names no host")
	f("no port", func(c *Config) { c.DSN = "clickhouse://u:s3cret@ch1/mcpdrift" }, `address "ch1": want host:port`)
	f("bad port", func(c *Config) { c.DSN = "clickhouse://ch1:9000,ch2:99999" }, `address "ch2:99999": invalid port`)
	f("unparsable", func(c *Config) { c.DSN = "clickhouse://u:s3cret@ch1:9000/%zz" }, "store.dsn: cannot parse")
	f("database conflict", func(c *Config) { c.DSN = "clickhouse://ch1:9000/other" }, `database "other" differs from store.database "mcpdrift"`)
	f("database agrees", func(c *Config) { c.DSN = "clickhouse://ch1:9000/drift"; c.Schema.Database = "drift" }, "")
	f("bad database", func(c *Config) { c.Schema.Database = "drop table"; c.DSN = "clickhouse://ch1:9000" }, "invalid database")
	f("cluster", func(c *Config) { c.Schema.Cluster = "mcpdrift" }, "")
	f("bad cluster", func(c *Config) { c.Schema.Cluster = "a b" }, "invalid cluster")
	f("compression", func(c *Config) { c.Compression = "snappy" }, "store.compression")
	f("compression none", func(c *Config) { c.Compression = "none" }, "")
	f("dial timeout", func(c *Config) { c.DialTimeout = 0 }, "store.dial-timeout")
	f("read timeout", func(c *Config) { c.ReadTimeout = -time.Second }, "store.read-timeout")
	f("pool", func(c *Config) { c.MaxOpenConns = 0 }, "store.max-open-conns")
	f("idle", func(c *Config) { c.MaxIdleConns = 17 }, "store.max-idle-conns")
	f("lifetime", func(c *Config) { c.ConnMaxLifetime = 0 }, "store.conn-max-lifetime")
	f("max rows", func(c *Config) { c.Insert.MaxRows = 0 }, "store.insert.max-rows")
	f("max rows huge", func(c *Config) { c.Insert.MaxRows = 2_000_000 }, "store.insert.max-rows")
	f("min rows over max rows", func(c *Config) { c.Insert.MinRows = c.Insert.MaxRows + 1 }, "store.insert.min-rows")
	f("max delay", func(c *Config) { c.Insert.MaxDelay = 0 }, "store.insert.max-delay")
	f("senders", func(c *Config) { c.Insert.Senders = 0 }, "store.insert.senders")
	f("senders over pool", func(c *Config) { c.Insert.Senders = 17 }, "store.insert.senders")
	f("attempts", func(c *Config) { c.Insert.Attempts = 0 }, "store.insert.attempts")
	f("backoff", func(c *Config) { c.Insert.Backoff = -1 }, "store.insert.backoff")
	f("timeout", func(c *Config) { c.Insert.Timeout = 0 }, "store.insert.timeout")
	f("dedup window", func(c *Config) { c.Schema.DeduplicationWindow = -1 }, "deduplication window")
}

func TestOptionsFromDSN(t *testing.T) {
	cfg := DefaultConfig("clickhouse://alice:s3cret@ch1:9440,ch2:9440/mcpdrift?secure=true&dial_timeout=3s&max_execution_time=60")
	opts, err := cfg.options()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(opts.Addr, ","); got != "ch1:9440,ch2:9440" {
		t.Errorf("addresses = %s", got)
	}
	if opts.Auth.Username != "alice" || opts.Auth.Password != "s3cret" || opts.Auth.Database != "" {
		t.Errorf("auth = %+v, want alice without a database (statements name it)", opts.Auth)
	}
	if opts.TLS == nil || opts.TLS.InsecureSkipVerify {
		t.Errorf("TLS = %+v, want verified TLS", opts.TLS)
	}
	if opts.Compression == nil || opts.Compression.Method != clickhouse.CompressionLZ4 {
		t.Errorf("compression = %+v, want lz4", opts.Compression)
	}
	if opts.DialTimeout != 3*time.Second {
		t.Errorf("dial timeout = %v, want the DSN's 3s", opts.DialTimeout)
	}
	if opts.ReadTimeout != cfg.ReadTimeout || opts.MaxOpenConns != 16 || opts.MaxIdleConns != 8 || opts.ConnMaxLifetime != time.Hour {
		t.Errorf("pool = %v %d %d %v, want the config's", opts.ReadTimeout, opts.MaxOpenConns, opts.MaxIdleConns, opts.ConnMaxLifetime)
	}
	if opts.Settings["max_execution_time"] == nil {
		t.Errorf("settings = %v, want max_execution_time passed through", opts.Settings)
	}

	cfg = DefaultConfig("clickhouse://ch1:9000?compress=zstd&max_open_conns=4")
	cfg.Compression = "none"
	if opts, err = cfg.options(); err != nil {
		t.Fatal(err)
	}
	if opts.Compression == nil || opts.Compression.Method != clickhouse.CompressionZSTD || opts.MaxOpenConns != 4 {
		t.Errorf("the DSN's compress and max_open_conns must win: %+v %d", opts.Compression, opts.MaxOpenConns)
	}
	cfg = DefaultConfig("clickhouse://ch1:9000")
	cfg.Compression = "none"
	if opts, _ = cfg.options(); opts.Compression != nil {
		t.Errorf("compression none gave %+v", opts.Compression)
	}
}

// TestCompressionAuto: by default the native protocol is lz4-compressed
// unless every address of the DSN is a loopback one, where it is not
// (no wire to spare bytes on); an explicit method or the DSN's compress
// wins.
func TestCompressionAuto(t *testing.T) {
	for _, tc := range []struct {
		dsn, method string
		want        string // the method's name, "none" without one
	}{
		{"clickhouse://127.0.0.1:9000", "", "none"},
		{"clickhouse://localhost:9000,127.0.0.2:9001", "", "none"},
		{"clickhouse://[::1]:9000", "", "none"},
		{"clickhouse://ch1:9000", "", "lz4"},
		{"clickhouse://10.0.0.7:9000", "", "lz4"},
		{"clickhouse://127.0.0.1:9000,ch2:9000", "", "lz4"},
		{"clickhouse://127.0.0.1:9000", "lz4", "lz4"},
		{"clickhouse://127.0.0.1:9000?compress=zstd", "", "zstd"},
		{"clickhouse://ch1:9000", "none", "none"},
	} {
		cfg := DefaultConfig(tc.dsn)
		if tc.method != "" {
			cfg.Compression = tc.method
		}
		opts, err := cfg.options()
		if err != nil {
			t.Fatalf("%s: %v", tc.dsn, err)
		}
		got := "none"
		if opts.Compression != nil {
			got = opts.Compression.Method.String()
		}
		if got != tc.want {
			t.Errorf("%s with compression %q: method %s, want %s", tc.dsn, cfg.Compression, got, tc.want)
		}
	}
}

func TestRedactedDSN(t *testing.T) {
	for dsn, want := range map[string]string{
		"clickhouse://alice:s3cret@ch1:9000/db": "clickhouse://alice:xxxxx@ch1:9000/db",
		"clickhouse://ch1:9000":                 "clickhouse://ch1:9000",
		"clickhouse://alice@ch1:9000":           "clickhouse://alice@ch1:9000",
	} {
		if got := redact(dsn); got != want {
			t.Errorf("redact(%q) = %q, want %q", dsn, got, want)
		}
	}
}
