package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/mcpdrift/mcpdrift/store"
)

// The single-node schema as store/schema/current.sql holds it, and the map
// beside it (current.md): see CurrentSchema and SchemaMap.

// schemaTable is a table or view of the store, as system.tables lists it.
type schemaTable struct {
	Name   string   `json:"name"`
	Engine string   `json:"engine"`
	Create string   `json:"create"`
	Deps   []string `json:"deps"`
}

var (
	localRE      = regexp.MustCompile(`\b([a-z0-9_]+)_local\b`)
	replicatedRE = regexp.MustCompile(`Replicated([A-Za-z]*MergeTree)\('[^']*', '[^']*'(, )?`)
	emptyArgsRE  = regexp.MustCompile(`MergeTree\(\)`)
	settingsRE   = regexp.MustCompile(`(?s)\nSETTINGS .*$`)
)

// readSchema lists database's tables and views, in the single-node form:
// in cluster mode the Distributed tables are left out, and the local
// tables' names, engines and the views' queries are written as on a single
// node; the tables' SETTINGS (the deployment's, such as the deduplication
// window) are left out everywhere. The database is named mcpdrift.
func readSchema(ctx context.Context, q store.Querier, database string, cluster bool) ([]schemaTable, error) {
	var rows []schemaTable
	sql := "SELECT name, engine, formatQuery(create_table_query) AS create, dependencies_table AS deps" +
		" FROM system.tables WHERE database = {database:String} AND engine != 'Distributed' ORDER BY engine = 'MaterializedView', name"
	if err := q.Query(ctx, store.Query{Name: "current_schema", SQL: sql}, store.Params{}.String("database", database), &rows); err != nil {
		return nil, fmt.Errorf("cannot list the tables of %s: %w", database, err)
	}
	for i := range rows {
		r := &rows[i]
		c := strings.ReplaceAll(r.Create, database+".", "mcpdrift.")
		if cluster {
			r.Name = strings.TrimSuffix(r.Name, "_local")
			c = localRE.ReplaceAllString(c, "$1")
			c = replicatedRE.ReplaceAllString(c, "$1(")
			c = emptyArgsRE.ReplaceAllString(c, "MergeTree")
			for j, d := range r.Deps {
				r.Deps[j] = strings.TrimSuffix(d, "_local")
			}
		}
		r.Create = settingsRE.ReplaceAllString(c, "")
	}
	sort.SliceStable(rows, func(i, j int) bool {
		vi, vj := rows[i].Engine == "MaterializedView", rows[j].Engine == "MaterializedView"
		if vi != vj {
			return vj
		}
		return rows[i].Name < rows[j].Name
	})
	return rows, nil
}

// CurrentSchema returns the DDL of database's tables, then of its views,
// each in name order, in the single-node form (readSchema), as
// store/schema/current.sql holds it.
func CurrentSchema(ctx context.Context, q store.Querier, database string, cluster bool) (string, error) {
	rows, err := readSchema(ctx, q, database, cluster)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("-- The schema a fresh store ends with, every migration applied, default\n" +
		"-- options, in its single-node form (tables' SETTINGS left out). Generated:\n" +
		"-- go test ./store/embedded -run TestCurrentSchema -update. Checked against a\n" +
		"-- fresh store on the embedded store, the ClickHouse server and the cluster.\n" +
		"-- Which view feeds which table, and the reports that read it: current.md.\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "\n%s;\n", r.Create)
	}
	return b.String(), nil
}

var targetRE = regexp.MustCompile(`\bTO mcpdrift\.([a-z0-9_]+)`)

// SchemaMap returns current.md: each table, the views that feed it and
// what they read, and the files under queriesDir (reports, their raw twins
// and series) that name it.
func SchemaMap(ctx context.Context, q store.Querier, database, queriesDir string) (string, error) {
	rows, err := readSchema(ctx, q, database, false)
	if err != nil {
		return "", err
	}
	sources := map[string][]string{} // view → the tables it reads
	feeds := map[string][]string{}   // table → the views that write it
	for _, r := range rows {
		for _, d := range r.Deps {
			sources[d] = append(sources[d], r.Name)
		}
	}
	for _, r := range rows {
		if m := targetRE.FindStringSubmatch(r.Create); r.Engine == "MaterializedView" && m != nil {
			feeds[m[1]] = append(feeds[m[1]], r.Name)
		}
	}
	files, err := os.ReadDir(queriesDir)
	if err != nil {
		return "", fmt.Errorf("cannot list %s: %w", queriesDir, err)
	}
	texts := map[string]string{}
	for _, f := range files {
		n := f.Name()
		if strings.HasSuffix(n, "_test.go") || !(strings.HasSuffix(n, ".sql") || strings.HasSuffix(n, ".tmpl") || strings.HasSuffix(n, ".go")) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(queriesDir, n))
		if err != nil {
			return "", err
		}
		texts[n] = string(raw)
	}
	var b strings.Builder
	b.WriteString("# The store's tables, what feeds them, what reads them\n\n" +
		"Generated with [current.sql](current.sql) from a fresh store: `go test\n" +
		"./store/embedded -run TestCurrentSchema -update`. A table is fed by the\n" +
		"materialised views that write it, each reading the table named after\n" +
		"`←`; it is read by the files of [queries/](../../queries) that name it.\n\n")
	tables, views := 0, 0
	for _, r := range rows {
		if r.Engine == "MaterializedView" {
			views++
		} else {
			tables++
		}
	}
	fmt.Fprintf(&b, "%d tables and %d materialised views.\n\n", tables, views)
	b.WriteString("| table | engine | fed by | read by |\n| --- | --- | --- | --- |\n")
	for _, r := range rows {
		if r.Engine == "MaterializedView" {
			continue
		}
		var fed []string
		for _, v := range feeds[r.Name] {
			fed = append(fed, fmt.Sprintf("`%s` ← `%s`", v, strings.Join(sources[v], "`, `")))
		}
		var readers []string
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(r.Name) + `\b`)
		for n, text := range texts {
			if re.MatchString(text) {
				readers = append(readers, n)
			}
		}
		sort.Strings(readers)
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.Name, r.Engine, orDash(strings.Join(fed, "<br>")), orDash(strings.Join(readers, ", ")))
	}
	return b.String(), nil
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
