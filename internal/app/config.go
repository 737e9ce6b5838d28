// Package app assembles mcpdrift's components into the process each
// binary runs — the all-in-one `mcpdrift serve`, the scale-out `ingest`
// and `api` — in one place: a Config with one section per component,
// its flags (each component registers its own), its validation (naming
// flags), and Run. The mains only pick the role and the store section,
// parse and handle signals.
//
// The store section is the one part that differs by binary: the scale-out
// roles run on a ClickHouse server (ServerStore) and must not link the
// embedded store, which needs cgo; the all-in-one binary brings its own
// section (app/embeddedstore).
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/clientview"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/envflag"
	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/internal/logging"
	"github.com/mcpdrift/mcpdrift/internal/redact"
)

// Role is what a process runs.
type Role string

// Roles.
const (
	// RoleServe runs the ingester and the API in one process on one store.
	RoleServe Role = "serve"
	// RoleIngest runs the ingester, with a health listener of its own.
	RoleIngest Role = "ingest"
	// RoleAPI runs the API, and migrates the schema.
	RoleAPI Role = "api"
)

// service is the role's service.name in self-traces, unless
// OTEL_SERVICE_NAME says otherwise: mcpdrift for the all-in-one,
// mcpdrift-ingest and mcpdrift-api for the scale-out roles.
func (r Role) service() string {
	if r == RoleServe {
		return "mcpdrift"
	}
	return "mcpdrift-" + string(r)
}

// Ingests reports whether the role runs the OTLP ingester.
func (r Role) Ingests() bool { return r == RoleServe || r == RoleIngest }

// Serves reports whether the role runs the report API.
func (r Role) Serves() bool { return r == RoleServe || r == RoleAPI }

// EnvPrefix is the prefix of the environment variables that set flags:
// -store.dsn ← MCPDRIFT_STORE_DSN.
const EnvPrefix = "MCPDRIFT"

// Config is everything a process is configured with, one section per
// component. Sections that the role does not run are ignored.
type Config struct {
	// Role is what the process runs.
	Role Role
	// Program names the process in logs and errors.
	Program string
	// Store is the store section: the embedded store or a ClickHouse
	// server, exactly one.
	Store StoreSection
	// Ingest is the OTLP ingester (RoleServe, RoleIngest).
	Ingest ingest.Config
	// OTLPTLS are the TLS settings of both OTLP listeners.
	OTLPTLS auth.TLSConfig
	// Redact are the redaction rules and key of call arguments.
	Redact redact.Flags
	// NoRedaction builds the ingester without a redactor. No flag sets
	// it: every command redacts; the bench sets it to show redaction's
	// share of the cost.
	NoRedaction bool
	// API is the report API (RoleServe, RoleAPI).
	API api.Config
	// ClientViews is when calls seen only from the client's side are
	// counted (RoleServe, RoleAPI: the processes that migrate).
	ClientViews clientview.Config
	// Auth is the token file, and whether listeners may face other
	// machines without one.
	Auth auth.Flags
	// HealthListen serves /healthz, /readyz and /metrics (RoleIngest; the
	// API serves them itself).
	HealthListen string
	// Migrate applies pending migrations at start-up (RoleAPI; RoleServe
	// always does, RoleIngest never).
	Migrate bool
	// MigrateOnly applies pending migrations and exits (RoleAPI).
	MigrateOnly bool
	// MigrateWait is how long start-up waits for the store to answer
	// before migrating (RoleAPI).
	MigrateWait time.Duration
	// ShutdownTimeout bounds the graceful shutdown: requests in flight
	// finish and pending events are written.
	ShutdownTimeout time.Duration
	// LogLevel and LogFormat shape the structured logs.
	LogLevel, LogFormat string
	// CheckOnly validates the configuration and exits.
	CheckOnly bool
}

// DefaultConfig returns the defaults of role on st. The all-in-one role
// listens on loopback and logs text, for a desk; the scale-out roles listen
// on every interface and log JSON, for a cluster.
func DefaultConfig(role Role, program string, st StoreSection) Config {
	c := Config{
		Role:            role,
		Program:         program,
		Store:           st,
		Ingest:          ingest.DefaultConfig(),
		API:             api.DefaultConfig(),
		ClientViews:     clientview.DefaultConfig(),
		HealthListen:    "0.0.0.0:8081",
		Migrate:         true,
		MigrateWait:     2 * time.Minute,
		ShutdownTimeout: 30 * time.Second,
		LogLevel:        "info",
		LogFormat:       "json",
	}
	// Empty: spooled with a spool, stored without (ingest.Config.Resolve).
	c.Ingest.Ack = ""
	c.Ingest.Spool.Dir = ""
	if role == RoleServe {
		c.LogFormat = "text"
	} else {
		c.Ingest.GRPCListen, c.Ingest.HTTPListen = "0.0.0.0:4317", "0.0.0.0:4318"
		c.API.Listen = "0.0.0.0:8080"
	}
	return c
}

// RegisterFlags registers the flags of every component the role runs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Store.RegisterFlags(fs)
	if c.Role.Ingests() {
		c.Ingest.RegisterFlags(fs)
		c.OTLPTLS.RegisterFlags(fs, "otlp.tls", "the OTLP listeners")
		c.Redact.Register(fs)
	}
	if c.Role.Serves() {
		c.API.RegisterFlags(fs)
		c.ClientViews.RegisterFlags(fs)
	}
	c.Auth.Register(fs)
	switch c.Role {
	case RoleIngest:
		fs.StringVar(&c.HealthListen, "health.listen", c.HealthListen, "listen address of /healthz, /readyz and /metrics")
	case RoleAPI:
		fs.BoolVar(&c.Migrate, "migrate", c.Migrate, "apply pending schema migrations at start-up")
		fs.BoolVar(&c.MigrateOnly, "migrate.only", c.MigrateOnly, "apply pending schema migrations and exit")
		fs.DurationVar(&c.MigrateWait, "migrate.wait", c.MigrateWait, "how long start-up waits for the store to answer before migrating")
	}
	fs.DurationVar(&c.ShutdownTimeout, "shutdown.timeout", c.ShutdownTimeout, "longest graceful shutdown: requests in flight finish and pending events are written")
	fs.StringVar(&c.LogLevel, "log.level", c.LogLevel, "log level: debug, info, warn, error")
	fs.StringVar(&c.LogFormat, "log.format", c.LogFormat, "log format: text or json")
	fs.BoolVar(&c.CheckOnly, "config.check", c.CheckOnly, "validate the configuration and exit")
}

// Parse parses args, with the MCPDRIFT_* environment overlaid (flags win),
// into c, resolves the flags' shorthands and validates the result. It
// returns flag.ErrHelp after -h.
func (c *Config) Parse(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet(c.Program, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.RegisterFlags(fs)
	if err := envflag.Parse(fs, args, EnvPrefix); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c.Resolve()
	return c.Validate()
}

// Resolve turns the flags' shorthands into what they mean: the default
// spool directory, -ingest.spool.dir off, the acknowledgement mode that
// suits the spool.
func (c *Config) Resolve() {
	if c.Role.Ingests() {
		if c.Ingest.Spool.Dir == "" {
			c.Ingest.Spool.Dir = c.Store.SpoolDir()
		}
		c.Ingest.Resolve()
	}
}

// Validate reports the first invalid setting by the name of its flag.
func (c Config) Validate() error {
	if c.Store == nil {
		return errors.New("no store section: set exactly one")
	}
	if err := c.Store.Validate(); err != nil {
		return err
	}
	var listeners [][2]string
	if c.Role.Ingests() {
		if err := c.Ingest.Validate(); err != nil {
			return err
		}
		if err := c.OTLPTLS.Validate("otlp.tls"); err != nil {
			return err
		}
		if _, err := c.Redact.Build(); err != nil {
			return err
		}
		listeners = append(listeners, [2]string{"otlp.grpc.listen", c.Ingest.GRPCListen}, [2]string{"otlp.http.listen", c.Ingest.HTTPListen})
	}
	if c.Role.Serves() {
		if err := c.API.Validate(); err != nil {
			return err
		}
		if err := c.ClientViews.Validate(); err != nil {
			return err
		}
		// With -migrate.only the API never listens.
		if !c.MigrateOnly {
			listeners = append([][2]string{{"api.listen", c.API.Listen}}, listeners...)
		}
	}
	if c.Role == RoleServe && c.Ingest.Tenant != c.API.Tenant {
		return fmt.Errorf("ingest.tenant %q and api.tenant %q: must agree, one process serves one tenant without tokens", c.Ingest.Tenant, c.API.Tenant)
	}
	if err := c.Auth.Check(listeners...); err != nil {
		return err
	}
	if _, err := c.Auth.Load(); err != nil {
		return err
	}
	switch c.Role {
	case RoleIngest:
		if _, _, err := net.SplitHostPort(c.HealthListen); err != nil {
			return fmt.Errorf("health.listen: invalid address %q: %w", c.HealthListen, err)
		}
	case RoleAPI:
		switch {
		case c.MigrateOnly && !c.Migrate:
			return errors.New("migrate.only: contradicts migrate=false")
		case c.MigrateWait <= 0:
			return fmt.Errorf("migrate.wait: must be positive, not %v", c.MigrateWait)
		}
	}
	if c.ShutdownTimeout <= 0 {
		return fmt.Errorf("shutdown.timeout: must be positive, not %v", c.ShutdownTimeout)
	}
	if _, err := logging.New(io.Discard, c.LogLevel, c.LogFormat); err != nil {
		return err
	}
	return nil
}

// DefaultDataDir is where mcpdrift keeps its data unless told otherwise:
// $XDG_DATA_HOME/mcpdrift, else ~/.local/share/mcpdrift.
func DefaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "mcpdrift")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "mcpdrift")
	}
	return "mcpdrift-data"
}

// Main parses args into c and runs it until ctx ends, as the binaries do,
// and returns the process's exit code: 0 once stopped (or after -h or
// -config.check), 2 for a bad configuration, 1 when the run fails. Errors
// are printed to stderr after c.Program.
func Main(ctx context.Context, c Config, args []string, version string, stdout, stderr io.Writer) int {
	err := c.Parse(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", c.Program, err)
		return 2
	case c.CheckOnly:
		fmt.Fprintf(stdout, "%s: configuration is valid\n", c.Program)
		return 0
	}
	if err := Run(ctx, c, version, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", c.Program, err)
		return 1
	}
	return 0
}
