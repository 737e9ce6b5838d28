package schema

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/mcpdrift/mcpdrift/store"
)

// # Baselines
//
// A baseline is one file, baseline/NNNN.sql, that creates the schema as
// migrations 1 to NNNN leave a fresh store, in the migrations' template
// language (so it renders for the embedded store, a server and a cluster
// alike). A store that has no migration recorded and no table of its own
// runs the newest baseline at or below the version it is brought to, then
// records migrations 1 to NNNN as applied with their own names and
// checksums, in one INSERT, then applies the migrations after it as
// usual. A store that recorded a migration replays migrations as before.
//
// The baseline is cut from the migrations, never written by hand:
// go test ./store/embedded -run TestBaselineCut -update renders every
// baseline file from a store built by replaying migrations 1 to NNNN
// (CutBaseline), and the tests of store/embedded and store/clickhouse
// compare a store built by the baseline with one built by the replay,
// table by table and column by column, on every backend.
//
// Before its first statement the baseline records a row of version 0 named
// baseline_NNNN in schema_migrations, so that a baseline cut short (its
// tables partly created, no migration recorded) is completed by the
// baseline again, and not by replaying migrations over tables that already
// have their last shape. Version 0 is no migration's: a binary of any
// version reads past it.

//go:embed baseline/*.sql
var baselineFiles embed.FS

// Baseline is a baseline file, rendered.
type Baseline struct {
	// Version is the last migration the baseline stands for.
	Version int
	// Statements are the rendered SQL statements, in order.
	Statements []string
	// Checksum is the checksum of the file as migrations' are computed.
	Checksum string
}

var baselineFileRE = regexp.MustCompile(`^(\d{4})\.sql$`)

// Baselines renders every embedded baseline for opts, in version order.
func Baselines(opts Options) ([]Baseline, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(baselineFiles, "baseline")
	if err != nil {
		return nil, fmt.Errorf("cannot list baselines: %w", err)
	}
	data := templateData(opts)
	var out []Baseline
	for _, e := range entries {
		m := baselineFileRE.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("baseline file %q does not match NNNN.sql", e.Name())
		}
		version, _ := strconv.Atoi(m[1])
		raw, err := baselineFiles.ReadFile("baseline/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("cannot read baseline %s: %w", e.Name(), err)
		}
		tmpl, err := template.New(e.Name()).Option("missingkey=error").Funcs(funcs(opts)).Parse(string(raw))
		if err != nil {
			return nil, fmt.Errorf("cannot parse baseline %s: %w", e.Name(), err)
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, data); err != nil {
			return nil, fmt.Errorf("cannot render baseline %s: %w", e.Name(), err)
		}
		stmts := splitStatements(buf.String())
		if len(stmts) == 0 {
			// A file created to be cut and not cut yet: a store must not
			// record the migrations as applied with nothing run.
			return nil, fmt.Errorf("baseline %s has no statement: cut it with go test ./store/embedded -run TestBaselineCut -update", e.Name())
		}
		out = append(out, Baseline{Version: version, Statements: stmts, Checksum: checksum(raw)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// baselineFor returns the newest baseline whose version is at most last
// and is one of migrations' (the last embedded migration's when last is 0),
// nil when there is none.
func baselineFor(opts Options, migrations []Migration) (*Baseline, error) {
	if len(migrations) == 0 {
		return nil, nil
	}
	last := migrations[len(migrations)-1].Version
	bs, err := Baselines(opts)
	if err != nil {
		return nil, err
	}
	for i := len(bs) - 1; i >= 0; i-- {
		if bs[i].Version > last {
			continue
		}
		v := bs[i].Version
		if j := sort.Search(len(migrations), func(j int) bool { return migrations[j].Version >= v }); j == len(migrations) || migrations[j].Version != v {
			return nil, fmt.Errorf("baseline %04d stands for no embedded migration", v)
		}
		return &bs[i], nil
	}
	return nil, nil
}

//go:embed fresh.sql
var freshSQL string

// useBaseline reports whether the store takes a baseline: no migration
// recorded, and either no table but the migrations' own or a baseline's
// mark recorded (a run cut short).
func useBaseline(ctx context.Context, db Execer, opts Options, done map[int]string) (bool, error) {
	for v := range done {
		if v > 0 {
			return false, nil
		}
	}
	if _, ok := done[0]; ok {
		return true, nil
	}
	tables := "system.tables"
	if opts.Cluster != "" {
		tables = "clusterAllReplicas(" + quote(opts.Cluster) + ", system.tables)"
	}
	var rows []struct {
		N uint64 `json:"n"`
	}
	q := store.Query{Name: "schema_fresh", SQL: strings.ReplaceAll(freshSQL, "{{.Tables}}", tables)}
	if err := db.Query(ctx, q, store.Params{}.String("database", opts.Database).Strings("own", []string{"schema_migrations", lockTable}), &rows); err != nil {
		return false, fmt.Errorf("cannot list the tables of %s: %w", opts.Database, err)
	}
	return len(rows) == 1 && rows[0].N == 0, nil
}

// applyBaseline runs b on a fresh store and records the migrations it
// stands for, returning their versions.
func applyBaseline(ctx context.Context, db Execer, opts Options, b *Baseline, migrations []Migration) ([]int, error) {
	rec := "INSERT INTO " + opts.Database + ".schema_migrations (version, name, checksum) VALUES ({version:UInt32}, {name:String}, {checksum:String})"
	name := fmt.Sprintf("baseline_%04d", b.Version)
	if err := db.Exec(ctx, rec, store.Params{}.Int("version", 0).String("name", name).String("checksum", b.Checksum)); err != nil {
		return nil, fmt.Errorf("cannot record the start of %s: %w", name, err)
	}
	for i, s := range b.Statements {
		if err := db.Exec(ctx, s, nil); err != nil {
			return nil, fmt.Errorf("%s, statement %d of %d: %w", name, i+1, len(b.Statements), err)
		}
	}
	// One INSERT, one block: the records of the migrations are stored all
	// or none, so that a run cut short never leaves a store that replays
	// the migrations after a part of them over the baseline's tables.
	var versions []int
	var vs, names, sums []string
	for _, m := range migrations {
		if m.Version > b.Version {
			break
		}
		versions = append(versions, m.Version)
		vs = append(vs, strconv.Itoa(m.Version))
		names = append(names, m.Name)
		sums = append(sums, m.Checksum)
	}
	params := store.Params{}.Strings("versions", vs).Strings("names", names).Strings("checksums", sums)
	if err := db.Exec(ctx, strings.ReplaceAll(recordBaselineSQL, "{{.Database}}", opts.Database), params); err != nil {
		return nil, fmt.Errorf("cannot record migrations %d to %d of %s: %w", versions[0], versions[len(versions)-1], name, err)
	}
	return versions, nil
}

// recordBaselineSQL records the migrations a baseline stands for in one
// block: {versions}, {names} and {checksums} are parallel arrays. The file
// starts with its INSERT, no comment before it: the test cluster sends an
// insert into schema_migrations to every node by its first words.
//
//go:embed record_baseline.sql
var recordBaselineSQL string

// BaselineObject is a table or view of a store built by replaying the
// migrations, as system.tables lists it: CutBaseline's input.
type BaselineObject struct {
	Name   string `json:"name"`
	Engine string `json:"engine"`
	// Create is formatQuery(create_table_query).
	Create string `json:"create"`
}

// Options of the store a baseline is cut from: retention periods that
// appear nowhere else in the schema, so that their values in the DDL are
// told apart and written as the template's.
const (
	cutRetentionDays      = 37
	cutAuditRetentionDays = 23
	cutDatabase           = "mcpdrift_cut"
)

// CutOptions are the options of the single-node store a baseline is cut
// from.
func CutOptions() Options {
	return Options{Database: cutDatabase, RetentionDays: cutRetentionDays, AuditRetentionDays: cutAuditRetentionDays}
}

var (
	cutTableRE        = regexp.MustCompile(`^CREATE TABLE ` + cutDatabase + `\.([a-z0-9_]+)\n`)
	cutViewRE         = regexp.MustCompile(`^CREATE MATERIALIZED VIEW ` + cutDatabase + `\.([a-z0-9_]+) TO ` + cutDatabase + `\.([a-z0-9_]+)\n`)
	cutEngineRE       = regexp.MustCompile(`(?m)^ENGINE = ([A-Za-z]*MergeTree)(?:\((.*)\))?$`)
	cutQuotedEngineRE = regexp.MustCompile("(?m)^ENGINE = `([A-Za-z]+)`$")
	cutSettingsRE     = regexp.MustCompile(`(?m)^SETTINGS (.*)$`)
	cutNameRE         = regexp.MustCompile(`\b` + cutDatabase + `\.([a-z0-9_]+)\b`)
)

// cutSettings are the settings Apply sets itself after the migrations
// (finish) or that the engine shows at their default: left out of a
// baseline, as the migrations leave them out.
var cutSettings = map[string]bool{"index_granularity = 8192": true, "min_level_for_wide_part = 1": true}

// CutBaseline writes the baseline file of version from objects, the tables
// and views of a single-node store that migrations 1 to version built with
// CutOptions: every table, then every view, each in name order, in the
// migrations' template language.
func CutBaseline(version int, objects []BaselineObject) ([]byte, error) {
	data := templateData(CutOptions())
	// The enums, longest first, as the engine renders them.
	type enum struct{ rendered, action string }
	var enums []enum
	for k, v := range data {
		if s, ok := v.(string); ok && strings.HasSuffix(k, "Enum") {
			enums = append(enums, enum{s, "{{." + k + "}}"})
		}
	}
	sort.Slice(enums, func(i, j int) bool { return len(enums[i].rendered) > len(enums[j].rendered) })
	for i := 1; i < len(enums); i++ {
		if enums[i].rendered == enums[i-1].rendered {
			return nil, fmt.Errorf("enums %s and %s render alike: a baseline cannot tell them apart", enums[i].action, enums[i-1].action)
		}
	}
	tables := map[string]bool{}
	for _, o := range objects {
		if o.Engine != "MaterializedView" {
			tables[o.Name] = true
		}
	}
	sorted := append([]BaselineObject(nil), objects...)
	sort.SliceStable(sorted, func(i, j int) bool {
		vi, vj := sorted[i].Engine == "MaterializedView", sorted[j].Engine == "MaterializedView"
		if vi != vj {
			return vj
		}
		return sorted[i].Name < sorted[j].Name
	})
	var b strings.Builder
	fmt.Fprintf(&b, "-- The schema as migrations 1 to %d leave a fresh store, for a store with\n"+
		"-- none of them applied (baseline.go). Cut from the migrations, not edited:\n"+
		"-- go test ./store/embedded -run TestBaselineCut -update\n", version)
	for _, o := range sorted {
		if strings.Contains(o.Create, "{{") {
			return nil, fmt.Errorf("%s: its DDL holds {{, which the template language reads", o.Name)
		}
		if strings.Contains(o.Create, ";\n") {
			return nil, fmt.Errorf("%s: its DDL holds a semicolon that ends a line, which splits statements", o.Name)
		}
		s := o.Create
		for _, e := range enums {
			s = strings.ReplaceAll(s, e.rendered, e.action)
		}
		s = strings.ReplaceAll(s, fmt.Sprintf("toIntervalDay(%d)", cutRetentionDays), "toIntervalDay({{.RetentionDays}})")
		s = strings.ReplaceAll(s, fmt.Sprintf("toIntervalDay(%d)", cutAuditRetentionDays), "toIntervalDay({{.AuditRetentionDays}})")
		switch o.Engine {
		case "MaterializedView":
			m := cutViewRE.FindStringSubmatch(s)
			if m == nil || m[1] != o.Name {
				return nil, fmt.Errorf("view %s: unexpected DDL: %.80q", o.Name, s)
			}
			head := fmt.Sprintf("CREATE MATERIALIZED VIEW IF NOT EXISTS {{.Database}}.%s{{.OnCluster}} TO {{table %q}}\n", m[1], m[2])
			s = head + cutNames(s[len(m[0]):], tables)
			fmt.Fprintf(&b, "\n%s;\n", s)
		default:
			m := cutTableRE.FindStringSubmatch(s)
			if m == nil || m[1] != o.Name {
				return nil, fmt.Errorf("table %s: unexpected DDL: %.80q", o.Name, s)
			}
			body := cutEngineRE.ReplaceAllStringFunc(s[len(m[0]):], func(line string) string {
				e := cutEngineRE.FindStringSubmatch(line)
				if e[2] == "" {
					return fmt.Sprintf("ENGINE = {{engine %q}}", e[1])
				}
				return fmt.Sprintf("ENGINE = {{engine %q %q}}", e[1], e[2])
			})
			// The engine quotes a name such as Null; the migrations do not.
			body = cutQuotedEngineRE.ReplaceAllString(body, "ENGINE = $1")
			body = cutSettingsRE.ReplaceAllStringFunc(body, func(line string) string {
				var keep []string
				for _, kv := range strings.Split(strings.TrimPrefix(line, "SETTINGS "), ", ") {
					if !cutSettings[kv] {
						keep = append(keep, kv)
					}
				}
				if len(keep) == 0 {
					return ""
				}
				return "SETTINGS " + strings.Join(keep, ", ")
			})
			body = strings.TrimRight(body, "\n")
			if cutNameRE.MatchString(body) {
				return nil, fmt.Errorf("table %s names another table: %s", o.Name, cutNameRE.FindString(body))
			}
			fmt.Fprintf(&b, "\nCREATE TABLE IF NOT EXISTS {{table %q}}{{.OnCluster}}\n%s;\n{{distributed %q}}\n", o.Name, body, o.Name)
		}
	}
	out := b.String()
	if strings.Contains(out, cutDatabase) {
		return nil, fmt.Errorf("the baseline still names the database %s", cutDatabase)
	}
	return []byte(out), nil
}

// cutNames writes the tables a view's query names as the template's: a
// table that holds rows as {{table "x"}} (the local table in cluster
// mode), anything else under {{.Database}}.
func cutNames(s string, tables map[string]bool) string {
	return cutNameRE.ReplaceAllStringFunc(s, func(n string) string {
		name := strings.TrimPrefix(n, cutDatabase+".")
		if tables[name] {
			return fmt.Sprintf("{{table %q}}", name)
		}
		return "{{.Database}}." + name
	})
}
