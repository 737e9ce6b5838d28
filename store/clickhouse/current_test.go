package clickhouse_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/store/storetest"
)

// TestCurrentSchema checks store/schema/current.sql (written by
// store/embedded's TestCurrentSchema) against a fresh store on the
// ClickHouse server and on the cluster, in its single-node form.
func TestCurrentSchema(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "schema", "current.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range clickhousetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := b.Open(t)
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			got, err := storetest.CurrentSchema(ctx, st, st.Schema.Database, b.Cluster != "")
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
				i := 0
				for i < len(g) && i < len(w) && g[i] == w[i] {
					i++
				}
				line := func(l []string) string {
					if i < len(l) {
						return l[i]
					}
					return "(end)"
				}
				t.Errorf("a fresh store on the %s differs from store/schema/current.sql from line %d:\n got: %s\nwant: %s", b.Name, i+1, line(g), line(w))
			}
		})
	}
}
