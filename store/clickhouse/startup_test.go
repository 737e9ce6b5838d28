package clickhouse_test

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/store/storetest"
)

// TestStartupRunsNoDDL counts, through a statement hook, what a start-up
// after the first runs on the ClickHouse server and on the cluster: no
// statement while the schema and the retention are as configured.
func TestStartupRunsNoDDL(t *testing.T) {
	for _, b := range clickhousetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			ex, closeEx, err := b.Execer(st.Schema.Database)
			if err != nil {
				t.Fatal(err)
			}
			defer closeEx()
			storetest.CheckStartupRunsNoDDL(t, ex, st.Schema)
		})
	}
}
