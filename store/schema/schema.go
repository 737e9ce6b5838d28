// Package schema holds mcpdrift's ClickHouse schema as versioned, embedded
// migrations and applies them. Both store backends run the same files: only
// the database name, the retention periods and the enum definitions (derived
// from otelschema) are templated.
package schema

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

//go:embed migrations/*.sql
var files embed.FS

// Options are the values that vary between deployments.
type Options struct {
	// Database is the ClickHouse database that holds mcpdrift's tables.
	Database string
	// RetentionDays is how long raw events and rollups are kept.
	RetentionDays int
	// AuditRetentionDays is how long call arguments are kept.
	AuditRetentionDays int
}

// DefaultOptions returns the options of a default deployment.
func DefaultOptions() Options {
	return Options{Database: "mcpdrift", RetentionDays: 30, AuditRetentionDays: 30}
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate reports the first invalid option by name.
func (o Options) Validate() error {
	if !identRE.MatchString(o.Database) {
		return fmt.Errorf("invalid database %q: want a plain identifier", o.Database)
	}
	if o.RetentionDays < 1 {
		return fmt.Errorf("invalid retention of %d days: want at least 1", o.RetentionDays)
	}
	if o.AuditRetentionDays < 1 {
		return fmt.Errorf("invalid audit retention of %d days: want at least 1", o.AuditRetentionDays)
	}
	return nil
}

// Migration is one versioned schema change.
type Migration struct {
	Version int
	Name    string
	// Statements are the rendered SQL statements, in order.
	Statements []string
	// Checksum is the SHA-256 of the file as written (before rendering).
	Checksum string
}

var fileRE = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// Migrations renders every embedded migration for opts, in version order.
func Migrations(opts Options) ([]Migration, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(files, "migrations")
	if err != nil {
		return nil, fmt.Errorf("cannot list migrations: %w", err)
	}
	data := templateData(opts)
	var out []Migration
	for _, e := range entries {
		m := fileRE.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %q does not match NNNN_name.sql", e.Name())
		}
		version, _ := strconv.Atoi(m[1])
		raw, err := files.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("cannot read migration %s: %w", e.Name(), err)
		}
		tmpl, err := template.New(e.Name()).Option("missingkey=error").Parse(string(raw))
		if err != nil {
			return nil, fmt.Errorf("cannot parse migration %s: %w", e.Name(), err)
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, data); err != nil {
			return nil, fmt.Errorf("cannot render migration %s: %w", e.Name(), err)
		}
		// The checksum covers the file as written, so that changing a
		// setting such as the retention does not invalidate it.
		sum := sha256.Sum256(raw)
		out = append(out, Migration{
			Version:    version,
			Name:       m[2],
			Statements: splitStatements(buf.String()),
			Checksum:   hex.EncodeToString(sum[:]),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("two migrations have version %d", out[i].Version)
		}
	}
	return out, nil
}

// splitStatements splits a rendered file on semicolons that end a line,
// dropping comment-only and empty statements.
func splitStatements(sql string) []string {
	var out []string
	for _, part := range strings.Split(sql, ";\n") {
		var lines []string
		for _, l := range strings.Split(part, "\n") {
			if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "--") {
				continue
			}
			lines = append(lines, l)
		}
		if s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.Join(lines, "\n")), ";")); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func templateData(opts Options) map[string]any {
	return map[string]any{
		"Database":           opts.Database,
		"RetentionDays":      opts.RetentionDays,
		"AuditRetentionDays": opts.AuditRetentionDays,
		"EventNameEnum":      enumType(otelschema.EventName(0), 6),
		"OutcomeEnum":        enumType(otelschema.Outcome(0), 7),
		"ChangeClassEnum":    enumType(otelschema.ChangeClass(0), 5),
		"RepairActionEnum":   enumType(otelschema.RepairAction(0), 4),
		"RepairResultEnum":   enumType(otelschema.RepairResult(0), 2),
		"ApprovalEnum":       enumType(otelschema.Approval(0), 4),
		"PrivilegeEnum":      enumType(otelschema.Privilege(0), 4),
		"RefreshResultEnum":  enumType(otelschema.RefreshResult(0), 2),
	}
}

// enumType renders an Enum8 whose values are the Go enum's numbers, so the
// store can write the Go value as it is.
func enumType[T interface {
	~uint8
	String() string
}](_ T, last int) string {
	var b strings.Builder
	b.WriteString("Enum8('' = 0")
	for i := 1; i <= last; i++ {
		name := T(i).String()
		if name == "" {
			panic(fmt.Sprintf("enum %T has no name for %d", T(0), i))
		}
		fmt.Fprintf(&b, ", '%s' = %d", name, i)
	}
	b.WriteString(")")
	return b.String()
}

// Execer runs DDL and reads the migrations table.
type Execer interface {
	store.Querier
	// Exec runs one statement that returns no rows, with params bound to
	// its {name:Type} placeholders.
	Exec(ctx context.Context, sql string, params store.Params) error
}

// ErrChecksum is returned when an applied migration no longer matches its
// file.
var ErrChecksum = errors.New("applied migration differs from its file")

// Apply creates the database and the migrations table if needed, then
// applies, in order, every migration not recorded as applied, recording each
// after its last statement succeeds. Statements are idempotent, so a run cut
// short is completed by the next one. It returns the versions applied.
func Apply(ctx context.Context, db Execer, opts Options) ([]int, error) {
	migrations, err := Migrations(opts)
	if err != nil {
		return nil, err
	}
	boot := []string{
		"CREATE DATABASE IF NOT EXISTS " + opts.Database,
		"CREATE TABLE IF NOT EXISTS " + opts.Database + `.schema_migrations
(
    version    UInt32,
    name       String,
    checksum   String,
    applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(applied_at)
ORDER BY version`,
	}
	for _, s := range boot {
		if err := db.Exec(ctx, s, nil); err != nil {
			return nil, fmt.Errorf("cannot create the migrations table: %w", err)
		}
	}
	var applied []struct {
		Version  int    `json:"version"`
		Checksum string `json:"checksum"`
	}
	q := store.Query{Name: "schema_migrations", SQL: "SELECT version, argMax(checksum, applied_at) AS checksum FROM " + opts.Database + ".schema_migrations GROUP BY version"}
	if err := db.Query(ctx, q, nil, &applied); err != nil {
		return nil, fmt.Errorf("cannot read applied migrations: %w", err)
	}
	done := make(map[int]string, len(applied))
	for _, a := range applied {
		done[a.Version] = a.Checksum
	}
	var versions []int
	for _, m := range migrations {
		if sum, ok := done[m.Version]; ok {
			if sum != m.Checksum {
				return versions, fmt.Errorf("migration %04d_%s: %w (recorded %.12s, file %.12s)", m.Version, m.Name, ErrChecksum, sum, m.Checksum)
			}
			continue
		}
		for i, s := range m.Statements {
			if err := db.Exec(ctx, s, nil); err != nil {
				return versions, fmt.Errorf("migration %04d_%s, statement %d of %d: %w", m.Version, m.Name, i+1, len(m.Statements), err)
			}
		}
		rec := "INSERT INTO " + opts.Database + ".schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})"
		params := store.Params{}.Int("version", int64(m.Version)).String("name", m.Name).String("checksum", m.Checksum)
		if err := db.Exec(ctx, rec, params); err != nil {
			return versions, fmt.Errorf("cannot record migration %04d_%s: %w", m.Version, m.Name, err)
		}
		versions = append(versions, m.Version)
	}
	if err := applyRetention(ctx, db, opts); err != nil {
		return versions, err
	}
	return versions, nil
}

// Rollup tiers: the minutely tier is kept at most MinuteTierDays and the
// hourly tier at most HourTierDays, both capped by the retention setting;
// the daily tier and the raw events are kept for the retention. Report
// queries read a window's minutes, hours and days from the tier that still
// holds them (see queries/plan.go).
const (
	MinuteTierDays = 2
	HourTierDays   = 90
)

// retention lists the tables whose TTL follows a retention setting: the
// migrations create them with the setting of the day, and every start-up
// brings them to the current one, capped at maxDays when it is set.
var retention = []struct {
	table, expr string
	audit       bool
	maxDays     int
}{
	{table: "events", expr: "toDateTime(time)"},
	{table: "calls_1m", expr: "minute", maxDays: MinuteTierDays},
	{table: "calls_1h", expr: "hour", maxDays: HourTierDays},
	{table: "calls_1d", expr: "day"},
	{table: "repairs_1m", expr: "minute", maxDays: MinuteTierDays},
	{table: "repairs_1h", expr: "hour", maxDays: HourTierDays},
	{table: "repairs_1d", expr: "day"},
	{table: "audit_calls", expr: "toDateTime(time)", audit: true},
}

// applyRetention sets each table's TTL to the configured retention. It only
// changes metadata: existing parts are trimmed by later merges.
func applyRetention(ctx context.Context, db Execer, opts Options) error {
	for _, r := range retention {
		days := opts.RetentionDays
		if r.audit {
			days = opts.AuditRetentionDays
		}
		if r.maxDays > 0 && days > r.maxDays {
			days = r.maxDays
		}
		sql := fmt.Sprintf("ALTER TABLE %s.%s MODIFY TTL %s + INTERVAL %d DAY SETTINGS materialize_ttl_after_modify = 0", opts.Database, r.table, r.expr, days)
		if err := db.Exec(ctx, sql, nil); err != nil {
			return fmt.Errorf("cannot set the retention of %s to %d days: %w", r.table, days, err)
		}
	}
	return nil
}
