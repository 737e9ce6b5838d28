// Package schema holds mcpdrift's ClickHouse schema as versioned, embedded
// migrations and applies them. Both store backends run the same files: only
// the database name, the retention periods, the enum definitions (derived
// from otelschema) and the cluster layout are templated.
//
// # Cluster mode
//
// With Options.Cluster set, the same files render for a ClickHouse cluster
// through four template actions that render as the single-node schema
// otherwise (testdata/single.sql pins that rendering byte for byte):
//
//   - {{table "events"}} names the table that holds the rows: the database's
//     events on a single node, events_local in cluster mode;
//   - {{.OnCluster}} is empty on a single node, ON CLUSTER 'name' otherwise;
//   - {{engine "MergeTree"}} renders MergeTree, or ReplicatedMergeTree with
//     the replication path /clickhouse/tables/{shard}/{database}/{table} and
//     the {replica} macro; extra arguments are the engine's own, as in
//     {{engine "ReplacingMergeTree" "declared_at"}};
//   - {{distributed "events"}}, on the line after a table's statement,
//     renders nothing on a single node and, in cluster mode, the Distributed
//     table under the usual name in front of the local tables, sharded by
//     cityHash64(tenant, tool) so that a tool's rows stay on one shard (each
//     shard then computes a tool's rollups on its own, and ReplacingMergeTree
//     finds every declaration of an adapter on one shard).
//
// Materialised views read and write the local tables, so each shard fans out
// what the Distributed events_in sends it; reports read the Distributed
// tables. Statements that only a cluster needs sit in {{if .Cluster}} blocks.
// A migration's checksum is computed on the file with those actions replaced
// by their single-node rendering, so that checksums recorded before cluster
// mode existed still match, and without its comment lines, so that a
// comment can be corrected in a released migration; a store records it, and
// a file whose statements change no longer matches (add a new migration).
//
// # Upgrades
//
// Migrations run under a lock that writers read before each insert, so
// that the api can migrate while ingest runs (lock.go, docs/upgrade.md).
// A fresh store runs the baseline instead of replaying the migrations
// (baseline.go): one file that creates the schema as migrations 1 to NNNN
// leave it, cut from them and checked against them on every backend.
//
// current.sql is the schema a fresh store ends with, and current.md which
// view feeds which table and which report reads it, both checked against a
// fresh store on every backend.
package schema

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"flag"
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
	// AuditRetentionDays is how long call arguments are kept: at most
	// RetentionDays, since they are columns of the events (a column TTL).
	AuditRetentionDays int
	// DailyRetentionDays is how long the daily rollups (calls_1d,
	// repairs_1d, usage_1d) are kept: at least RetentionDays, so that
	// usage history outlives the raw events at a fraction of their bytes.
	// Zero keeps them for RetentionDays.
	DailyRetentionDays int
	// Cluster is the name of the ClickHouse cluster (a remote_servers entry,
	// with {shard} and {replica} macros on every node) to create the schema
	// on: ON CLUSTER DDL, Replicated engines under *_local names, Distributed
	// tables in front. Empty means a single node.
	Cluster string
	// DeduplicationWindow, when positive, sets non_replicated_deduplication_window
	// to that many blocks on every MergeTree table of a single-node schema at
	// each Apply, so that an insert retried with the same
	// insert_deduplication_token is stored once. Zero leaves the tables as
	// they are (the embedded store); replicated tables deduplicate without it.
	DeduplicationWindow int
}

// DefaultOptions returns the options of a default deployment.
func DefaultOptions() Options {
	return Options{Database: "mcpdrift", RetentionDays: 30, AuditRetentionDays: 30}
}

var (
	identRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	clusterRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
)

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
	if o.AuditRetentionDays > o.RetentionDays {
		return fmt.Errorf("invalid audit retention of %d days: want at most the retention, %d days: call arguments are kept in the events", o.AuditRetentionDays, o.RetentionDays)
	}
	if o.DailyRetentionDays != 0 && o.DailyRetentionDays < o.RetentionDays {
		return fmt.Errorf("invalid daily retention of %d days: want 0 (the retention) or at least the retention, %d days: the daily rollups are what is left of older events", o.DailyRetentionDays, o.RetentionDays)
	}
	if o.Cluster != "" && !clusterRE.MatchString(o.Cluster) {
		return fmt.Errorf("invalid cluster %q: want letters, digits, '_', '-' or '.'", o.Cluster)
	}
	if o.DeduplicationWindow < 0 {
		return fmt.Errorf("invalid deduplication window of %d blocks: want 0 or more", o.DeduplicationWindow)
	}
	return nil
}

// DailyDays is how long the daily rollups are kept: DailyRetentionDays,
// or RetentionDays when it is zero.
func (o Options) DailyDays() int {
	if o.DailyRetentionDays == 0 {
		return o.RetentionDays
	}
	return o.DailyRetentionDays
}

// RegisterRetentionFlags binds o's retention settings to the flags every
// binary that opens a store shares, with o's values as defaults.
func (o *Options) RegisterRetentionFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.RetentionDays, "retention.days", o.RetentionDays, "days raw events and rollups are kept")
	fs.IntVar(&o.AuditRetentionDays, "audit.retention.days", o.AuditRetentionDays, "days call arguments are kept for the audit (at most -retention.days)")
	fs.IntVar(&o.DailyRetentionDays, "retention.daily.days", o.DailyRetentionDays, "days the daily rollups (usage, stale usage and repairs by day) are kept: 0 for -retention.days, else at least it")
}

// Migration is one versioned schema change.
type Migration struct {
	Version int
	Name    string
	// Statements are the rendered SQL statements, in order.
	Statements []string
	// Checksum is the SHA-256 of the file as written (before rendering),
	// in its single-node form, its comment lines left out.
	Checksum string
}

// releasedChecksums are the checksums stores recorded for the first
// migrations, computed on their files comments included, as they were
// released: such a record matches its migration too.
var releasedChecksums = map[int]string{
	1: "72e84571746bce555beadff6369e74d3084a1322d70b22890571616f55636b4c",
	2: "7aea8e349e287b38a027a7a3c34ce7ef7a8b65868f45467bc1e3f232a99b434b",
	3: "f3582cbeaaad3e12204d9b4901dbe4ac8723ed84b4c9eda3220064d328d313aa",
	4: "40748c02dbaf23f47e9c17e5de13cce53391c521ccee59296b55ab39207044b0",
	5: "781c1f9a7b3a69dd0b741a40dff309c9e4174ac12932cf632402584a2171637b",
	6: "e3d8747ac480919a6e6931a64f493e51615d5f74d38b808e9c654937ad3e4e69",
	7: "d8e15f30fa29d471e53cb2f2b0641f248e489aa507edc094c32d894282239869",
	8: "38d8bfa686e0e987e894770477ddf87d8502fc7a2af86e2083c3317fc7928811",
}

// checksum is the checksum of a migration file.
func checksum(raw []byte) string {
	var b bytes.Buffer
	for _, line := range bytes.SplitAfter(singleNodeForm(raw), []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("--")) {
			b.Write(line)
		}
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
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
		tmpl, err := template.New(e.Name()).Option("missingkey=error").Funcs(funcs(opts)).Parse(string(raw))
		if err != nil {
			return nil, fmt.Errorf("cannot parse migration %s: %w", e.Name(), err)
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, data); err != nil {
			return nil, fmt.Errorf("cannot render migration %s: %w", e.Name(), err)
		}
		// The checksum covers the file as written, so that changing a
		// setting such as the retention does not invalidate it (see the
		// package doc).
		out = append(out, Migration{
			Version:    version,
			Name:       m[2],
			Statements: splitStatements(buf.String()),
			Checksum:   checksum(raw),
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
	onCluster := ""
	if opts.Cluster != "" {
		onCluster = " ON CLUSTER " + quote(opts.Cluster)
	}
	return map[string]any{
		"Cluster":            opts.Cluster != "",
		"OnCluster":          onCluster,
		"Database":           opts.Database,
		"RetentionDays":      opts.RetentionDays,
		"AuditRetentionDays": opts.AuditRetentionDays,
		"EventNameEnum":      eventNameEnum(),
		"OutcomeEnum":        enumType(otelschema.Outcome(0), 7),
		"ChangeClassEnum":    enumType(otelschema.ChangeClass(0), 5),
		"RepairActionEnum":   enumType(otelschema.RepairAction(0), 4),
		"RepairResultEnum":   enumType(otelschema.RepairResult(0), 2),
		"ApprovalEnum":       enumType(otelschema.Approval(0), 4),
		"PrivilegeEnum":      enumType(otelschema.Privilege(0), 4),
		"RefreshResultEnum":  enumType(otelschema.RefreshResult(0), 2),
		"RevisionSourceEnum": enumType(otelschema.RevisionSource(0), 3),
		"ClientViewEnum":     enumType(otelschema.ClientView(0), 2),
	}
}

// eventNameEnum renders the Enum8 of event names: their stored names
// (otelschema.EventName.Stored), which the store has kept since its first
// version whatever name an event comes in under.
func eventNameEnum() string {
	var b strings.Builder
	b.WriteString("Enum8('' = 0")
	for e := otelschema.EventName(1); e.String() != ""; e++ {
		fmt.Fprintf(&b, ", '%s' = %d", e.Stored(), e)
	}
	b.WriteString(")")
	return b.String()
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
	return ApplyThrough(ctx, db, opts, 0)
}

// ApplyThrough is Apply stopped after migration last (every migration when
// last is 0): a staged upgrade, or a test that needs a store as an older
// release left it. The retention and the tables' settings are brought to
// opts on the tables that exist.
//
// Migrations run under the schema lock (lock.go), taken only when one is
// pending: while it is held, writers that check the schema epoch
// (WriteGuard) hold their batches, and a second migrator waits, then finds
// the migrations recorded. A start-up that finds the schema, the retention
// and the settings as opts say runs no DDL.
//
// A store with no migration recorded and no table of its own runs the
// newest baseline at or below last instead of the migrations it stands
// for, records them, then applies the migrations after it (baseline.go).
func ApplyThrough(ctx context.Context, db Execer, opts Options, last int) ([]int, error) {
	if last < 0 {
		return nil, fmt.Errorf("invalid last migration %d: want 0 (all) or a version", last)
	}
	migrations, err := Migrations(opts)
	if err != nil {
		return nil, err
	}
	if last > 0 {
		// Migrations after last are left for a later Apply.
		migrations = migrations[:sort.Search(len(migrations), func(i int) bool { return migrations[i].Version > last })]
	}
	if err := boot(ctx, db, opts); err != nil {
		return nil, err
	}
	done, err := appliedChecksums(ctx, db, opts)
	if err != nil {
		return nil, err
	}
	if err := checkChecksums(migrations, done); err != nil {
		return nil, err
	}
	if pending(migrations, done) {
		// Migrations to apply: under the lock, which holds the writes of
		// every ingester meanwhile ("Migrating while ingest runs"), and
		// with the records read again, since another migrator may have
		// applied them while this one waited for the lock.
		l, err := acquire(ctx, db, opts)
		if err != nil {
			return nil, err
		}
		if done, err = appliedChecksums(ctx, db, opts); err == nil {
			err = checkChecksums(migrations, done)
		}
		if err != nil {
			// Nothing migrated: the lock is released.
			_ = l.release(ctx, true)
			return nil, err
		}
		// A store with no migration recorded has no events_in: no insert
		// to wait for (and a fresh store, or a test's, starts at once).
		if len(done) > 0 {
			if err := l.drain(ctx); err != nil {
				_ = l.release(ctx, true)
				return nil, err
			}
		}
		var versions []int
		versions, err = applyFresh(ctx, db, opts, migrations, done)
		if err == nil {
			var more []int
			more, err = applyPending(ctx, db, opts, migrations, done)
			versions = append(versions, more...)
		}
		if rerr := l.release(ctx, err == nil); err == nil && rerr != nil {
			err = rerr
		}
		if err != nil {
			return versions, err
		}
		return finish(ctx, db, opts, versions)
	}
	return finish(ctx, db, opts, nil)
}

// appliedChecksums reads the recorded migrations: version → checksum.
func appliedChecksums(ctx context.Context, db Execer, opts Options) (map[int]string, error) {
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
	return done, nil
}

// pending reports whether one of migrations is not recorded in done.
func pending(migrations []Migration, done map[int]string) bool {
	for _, m := range migrations {
		if _, ok := done[m.Version]; !ok {
			return true
		}
	}
	return false
}

// checkChecksums checks that every migration recorded in done matches its
// file.
func checkChecksums(migrations []Migration, done map[int]string) error {
	for _, m := range migrations {
		if sum, ok := done[m.Version]; ok && sum != m.Checksum && sum != releasedChecksums[m.Version] {
			return fmt.Errorf("migration %04d_%s: %w (recorded %.12s, file %.12s)", m.Version, m.Name, ErrChecksum, sum, m.Checksum)
		}
	}
	return nil
}

// applyFresh runs the baseline on a store that takes one (baseline.go),
// recording in done the migrations it stands for, and returns their
// versions; on any other store it does nothing.
func applyFresh(ctx context.Context, db Execer, opts Options, migrations []Migration, done map[int]string) ([]int, error) {
	b, err := baselineFor(opts, migrations)
	if err != nil || b == nil {
		return nil, err
	}
	ok, err := useBaseline(ctx, db, opts, done)
	if err != nil || !ok {
		return nil, err
	}
	versions, err := applyBaseline(ctx, db, opts, b, migrations)
	if err != nil {
		return nil, err
	}
	for _, m := range migrations[:len(versions)] {
		done[m.Version] = m.Checksum
	}
	return versions, nil
}

// applyPending applies, in order, the migrations not recorded in done,
// recording each after its last statement.
func applyPending(ctx context.Context, db Execer, opts Options, migrations []Migration, done map[int]string) ([]int, error) {
	var versions []int
	for _, m := range migrations {
		if _, ok := done[m.Version]; ok {
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
	return versions, nil
}

// finish brings the retention and the tables' settings to opts after the
// migrations, on the tables that exist and differ.
func finish(ctx context.Context, db Execer, opts Options, versions []int) ([]int, error) {
	if err := applyRetention(ctx, db, opts); err != nil {
		return versions, err
	}
	if err := applyCompactInserts(ctx, db, opts); err != nil {
		return versions, err
	}
	if err := applyDeduplicationWindow(ctx, db, opts); err != nil {
		return versions, err
	}
	return versions, nil
}

// Rollup tiers: the minutely tier (recent_calls, aggregated when read, and
// repairs_1m) is kept at most MinuteTierDays and the hourly tier at most
// HourTierDays, both capped by the retention setting; the raw events are
// kept for the retention and the daily tier for the daily retention
// (Options.DailyDays), which may be longer. Report
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
	table, expr  string
	audit, daily bool
	maxDays      int
}{
	{table: "events", expr: "toDateTime(time)"},
	{table: "recent_calls", expr: "toDateTime(time)", maxDays: MinuteTierDays},
	{table: "calls_1h", expr: "hour", maxDays: HourTierDays},
	{table: "calls_1d", expr: "day", daily: true},
	{table: "repairs_1m", expr: "minute", maxDays: MinuteTierDays},
	{table: "repairs_1h", expr: "hour", maxDays: HourTierDays},
	{table: "repairs_1d", expr: "day", daily: true},
	{table: "usage_1h", expr: "hour", maxDays: HourTierDays},
	{table: "usage_1d", expr: "day", daily: true},
	// Rare rows, and no daily tier: kept for the retention.
	{table: "rejected_1h", expr: "hour"},
	{table: "adapted_1h", expr: "hour"},
	{table: "retries_1h", expr: "hour"},
	{table: "audit_calls", expr: "toDateTime(time)", audit: true},
	{table: "violation_candidates", expr: "toDateTime(time)"},
	{table: "propagation_events", expr: "toDateTime(time)"},
	{table: "adapter_call_candidates", expr: "toDateTime(time)"},
}

// applyRetention sets each table's TTL to the configured retention, on the
// tables whose TTL differs (settingsTodo). It only changes metadata:
// existing parts are trimmed by later merges.
func applyRetention(ctx context.Context, db Execer, opts Options) error {
	days := make(map[string]int, len(retention))
	var names, clauses []string
	for _, r := range retention {
		d := opts.RetentionDays
		switch {
		case r.audit:
			d = opts.AuditRetentionDays
		case r.daily:
			d = opts.DailyDays()
		}
		if r.maxDays > 0 && d > r.maxDays {
			d = r.maxDays
		}
		days[r.table] = d
		names = append(names, r.table)
		clauses = append(clauses, clausePattern(fmt.Sprintf("TTL %s + toIntervalDay(%d)", r.expr, d)))
	}
	todo, err := settingsTodo(ctx, db, opts, "schema_retention", names, clauses)
	if err != nil {
		return fmt.Errorf("cannot read the tables' retention: %w", err)
	}
	for _, r := range retention {
		if !todo[r.table] {
			continue
		}
		sql := fmt.Sprintf("%s MODIFY TTL %s + INTERVAL %d DAY SETTINGS materialize_ttl_after_modify = 0", alterTable(opts, r.table), r.expr, days[r.table])
		if err := db.Exec(ctx, sql, nil); err != nil {
			return fmt.Errorf("cannot set the retention of %s to %d days: %w", r.table, days[r.table], err)
		}
	}
	return applyColumnRetention(ctx, db, opts)
}

// auditColumns are the columns of events that keep a call's arguments, for
// the audit retention (a column TTL: an expired value becomes empty at the
// next merge, the row stays for the events' retention).
var auditColumns = []string{"args_raw", "args_normalized"}

//go:embed column_ttl_todo.sql
var columnTTLTodoSQL string

// applyColumnRetention sets the TTL of auditColumns to the audit
// retention, where it differs. A column's TTL is not in engine_full, so
// it is matched in create_table_query, as "`args_raw` String CODEC(…) TTL
// …": the column's name in the pattern tells it from the table's TTL.
func applyColumnRetention(ctx context.Context, db Execer, opts Options) error {
	days := opts.AuditRetentionDays
	patterns := make([]string, len(auditColumns))
	modify := make([]string, len(auditColumns))
	for i, col := range auditColumns {
		patterns[i] = clausePattern(fmt.Sprintf("`%s` String CODEC(ZSTD(3)) TTL toDateTime(time) + toIntervalDay(%d)", col, days))
		modify[i] = fmt.Sprintf("MODIFY COLUMN %s TTL toDateTime(time) + INTERVAL %d DAY", col, days)
	}
	table := "events"
	if opts.Cluster != "" {
		table += LocalSuffix
	}
	tables := "system.tables"
	if opts.Cluster != "" {
		tables = "clusterAllReplicas(" + quote(opts.Cluster) + ", system.tables)"
	}
	var todo []struct {
		Name string `json:"name"`
	}
	q := store.Query{Name: "schema_audit_retention", SQL: strings.ReplaceAll(columnTTLTodoSQL, "{{.Tables}}", tables)}
	params := store.Params{}.String("database", opts.Database).String("table", table).
		String("has", regexp.QuoteMeta("`"+auditColumns[0]+"` ")).String("clause", strings.Join(patterns, ".*"))
	if err := db.Query(ctx, q, params, &todo); err != nil {
		return fmt.Errorf("cannot read the audit retention of events: %w", err)
	}
	if len(todo) == 0 {
		return nil
	}
	sql := fmt.Sprintf("%s %s SETTINGS materialize_ttl_after_modify = 0", alterTable(opts, "events"), strings.Join(modify, ", "))
	if err := db.Exec(ctx, sql, nil); err != nil {
		return fmt.Errorf("cannot set the audit retention of events' %s to %d days: %w", strings.Join(auditColumns, ", "), days, err)
	}
	return nil
}

// clausePattern matches clause as engine_full renders it, and not as the
// start of a longer number ("= 100" is not in "= 1000").
func clausePattern(clause string) string {
	return regexp.QuoteMeta(clause) + "([^0-9]|$)"
}

//go:embed settings_todo.sql
var settingsTodoSQL string

// settingsTodo returns the tables of names (as named on a single node)
// whose engine_full lacks the clause at the same index, on some node.
func settingsTodo(ctx context.Context, db Execer, opts Options, name string, names, clauses []string) (map[string]bool, error) {
	local := make([]string, len(names))
	for i, t := range names {
		local[i] = t
		if opts.Cluster != "" {
			local[i] += LocalSuffix
		}
	}
	tables := "system.tables"
	if opts.Cluster != "" {
		tables = "clusterAllReplicas(" + quote(opts.Cluster) + ", system.tables)"
	}
	var rows []struct {
		Name string `json:"name"`
	}
	q := store.Query{Name: name, SQL: strings.ReplaceAll(settingsTodoSQL, "{{.Tables}}", tables)}
	params := store.Params{}.String("database", opts.Database).Strings("tables", local).Strings("clauses", clauses)
	if err := db.Query(ctx, q, params, &rows); err != nil {
		return nil, err
	}
	todo := make(map[string]bool, len(rows))
	for _, r := range rows {
		todo[strings.TrimSuffix(r.Name, LocalSuffix)] = true
	}
	return todo, nil
}

// MergeTreeTables are the tables that store rows (every one but events_in
// and the migrations table), in the order they are created.
var MergeTreeTables = []string{
	"events", "audit_calls", "adapters",
	"calls_1h", "calls_1d",
	"repairs_1m", "repairs_1h", "repairs_1d",
	"usage_1h", "usage_1d", "rejected_1h", "adapted_1h",
	"violation_candidates", "propagation_events", "adapter_call_candidates",
	"recent_calls", "retries_1h", "tool_revisions",
}

//go:embed compact_inserts.sql
var compactInsertsSQL string

// applyCompactInserts has every MergeTree table write the parts of its
// inserts in the compact format (min_level_for_wide_part = 1): all columns
// in one file, where a wide part has a file per column and substream and
// one for its marks — 207 files for a part of events, in every partition an
// insert touches, and creating them was most of the system time an insert
// cost (docs/capacity.md, "Ingest CPU"). A merged part has a level
// above 0, so merges write wide parts above the engine's size bound as
// before, for the reports' reads. The setting is recent: on a server that
// does not know it the tables keep the engine's default. Only the tables
// not set yet, on some replica of a cluster, are altered, so that a
// start-up after the first runs no DDL (ON CLUSTER DDL is slow).
func applyCompactInserts(ctx context.Context, db Execer, opts Options) error {
	names := make([]string, len(MergeTreeTables))
	for i, t := range MergeTreeTables {
		names[i] = t
		if opts.Cluster != "" {
			names[i] += LocalSuffix
		}
	}
	var todo []struct {
		Name string `json:"name"`
	}
	tables := "system.tables"
	if opts.Cluster != "" {
		tables = "clusterAllReplicas(" + quote(opts.Cluster) + ", system.tables)"
	}
	q := store.Query{Name: "schema_compact_inserts", SQL: strings.ReplaceAll(compactInsertsSQL, "{{.Tables}}", tables)}
	if err := db.Query(ctx, q, store.Params{}.String("database", opts.Database).Strings("tables", names), &todo); err != nil {
		return fmt.Errorf("cannot read the tables' part format settings: %w", err)
	}
	for _, t := range todo {
		table := strings.TrimSuffix(t.Name, LocalSuffix)
		if opts.Cluster == "" {
			table = t.Name
		}
		sql := alterTable(opts, table) + " MODIFY SETTING min_level_for_wide_part = 1"
		if err := db.Exec(ctx, sql, nil); err != nil {
			return fmt.Errorf("cannot have %s write its inserts compact: %w", t.Name, err)
		}
	}
	return nil
}

// applyDeduplicationWindow sets non_replicated_deduplication_window on every
// MergeTree table of a single-node schema that lacks it when opts ask for
// it. Replicated
// tables keep their own replicated_deduplication_window.
func applyDeduplicationWindow(ctx context.Context, db Execer, opts Options) error {
	if opts.DeduplicationWindow <= 0 || opts.Cluster != "" {
		return nil
	}
	clause := fmt.Sprintf("non_replicated_deduplication_window = %d", opts.DeduplicationWindow)
	clauses := make([]string, len(MergeTreeTables))
	for i := range clauses {
		clauses[i] = clausePattern(clause)
	}
	todo, err := settingsTodo(ctx, db, opts, "schema_deduplication_window", MergeTreeTables, clauses)
	if err != nil {
		return fmt.Errorf("cannot read the tables' deduplication window: %w", err)
	}
	for _, t := range MergeTreeTables {
		if !todo[t] {
			continue
		}
		sql := fmt.Sprintf("%s MODIFY SETTING %s", alterTable(opts, t), clause)
		if err := db.Exec(ctx, sql, nil); err != nil {
			return fmt.Errorf("cannot set the deduplication window of %s to %d blocks: %w", t, opts.DeduplicationWindow, err)
		}
	}
	return nil
}
