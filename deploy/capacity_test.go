package deploy_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// TestMeasureBytesPerEvent measures the on-disk bytes per event that the
// bytes-per-event table of docs/capacity.md is derived from:
// MCPDRIFT_MEASURE=1000000 loads
// that many simulator events into a fresh embedded store in batches of
// 100k, runs OPTIMIZE FINAL on every table and prints system.parts per
// table. It is skipped unless MCPDRIFT_MEASURE is set (it takes a minute).
func TestMeasureBytesPerEvent(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("MCPDRIFT_MEASURE"))
	if n <= 0 {
		t.Skip("set MCPDRIFT_MEASURE=1000000 to measure bytes per event on the embedded store")
	}
	if _, err := embedded.LibraryPath(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	st, err := embedded.Open(ctx, embedded.DefaultConfig(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := simulate.DefaultConfig()
	cfg.Start = time.Now().Add(-24 * time.Hour).UTC().Truncate(time.Hour)
	cfg.Events = int64(n)
	gen, err := simulate.NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]otelschema.Event, 0, 100_000)
	flush := func() {
		if err := st.Write(ctx, store.Batch{Tenant: "default", Events: batch}); err != nil {
			t.Fatal(err)
		}
		batch = batch[:0]
	}
	for r := range gen.All() {
		batch = append(batch, r.Event)
		if len(batch) == cap(batch) {
			flush()
		}
	}
	if len(batch) > 0 {
		flush()
	}
	tables := []string{"events", "adapters", "recent_calls", "calls_1h", "calls_1d", "repairs_1m", "repairs_1h", "repairs_1d"}
	for _, tb := range tables {
		if err := st.Exec(ctx, "OPTIMIZE TABLE mcpdrift."+tb+" FINAL", nil); err != nil {
			t.Fatal(err)
		}
	}
	var rows []struct {
		Table        string `json:"table"`
		Rows         uint64 `json:"rows"`
		Compressed   uint64 `json:"compressed"`
		Uncompressed uint64 `json:"uncompressed"`
		OnDisk       uint64 `json:"on_disk"`
		Parts        uint64 `json:"parts"`
	}
	q := store.Query{Name: "parts", SQL: `SELECT table, sum(rows) AS rows, sum(data_compressed_bytes) AS compressed,
		sum(data_uncompressed_bytes) AS uncompressed, sum(bytes_on_disk) AS on_disk, count() AS parts
		FROM system.parts WHERE database = 'mcpdrift' AND active GROUP BY table ORDER BY on_disk DESC`}
	if err := st.Query(ctx, q, nil, &rows); err != nil {
		t.Fatal(err)
	}
	var total uint64
	fmt.Printf("%d simulator events, after OPTIMIZE FINAL\n| table | rows | parts | on disk | B/event | compression |\n|---|---:|---:|---:|---:|---:|\n", n)
	for _, r := range rows {
		total += r.OnDisk
		fmt.Printf("| %s | %d | %d | %d | %.2f | %.1f× |\n", r.Table, r.Rows, r.Parts, r.OnDisk, float64(r.OnDisk)/float64(n), float64(r.Uncompressed)/float64(max(r.Compressed, 1)))
	}
	fmt.Printf("| **total** | | | %d | **%.2f** | |\n", total, float64(total)/float64(n))
}
