package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// TestWriteNativeFilesSubBlocks checks that the floors' files hold the
// same rows whether each insert is one Native block or is cut into blocks
// (-floor.block-events): the engine reads every block of a file, and the
// rows, their order and their values do not change.
func TestWriteNativeFilesSubBlocks(t *testing.T) {
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB is set: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	tmp := t.TempDir()
	rs, err := buildRequests(filepath.Join(tmp, "requests"), 5000, 500, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.close()
	ctx := context.Background()
	st, _, err := openStore(ctx, filepath.Join(tmp, "store"), &Report{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	type fileSum struct {
		Rows   uint64 `json:"rows"`
		Blocks uint64 `json:"blocks"`
		Hash   uint64 `json:"hash"`
	}
	// The files of one layout: per file, its rows, the blocks the engine
	// read and a hash of the rows with their positions.
	sums := func(sub int) []fileSum {
		t.Helper()
		files, err := writeNativeFiles(filepath.Join(tmp, fmt.Sprintf("sub%d", sub)), rs, 2000, sub, otelschema.Decoder{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []fileSum
		for _, f := range files {
			var got []fileSum
			q := store.Query{Name: "bench_floor_file", SQL: "SELECT count() AS rows, " +
				"uniqExact(blockNumber()) AS blocks, " +
				"groupBitXor(cityHash64(rowNumberInAllBlocks(), event_id, request_id, args_raw, time)) AS hash " +
				"FROM file({file:String}, 'Native')"}
			if err := st.Query(ctx, q, store.Params{}.String("file", f), &got); err != nil || len(got) != 1 {
				t.Fatalf("%s: %v, %d rows", filepath.Base(f), err, len(got))
			}
			out = append(out, got[0])
		}
		return out
	}
	whole, cut := sums(0), sums(700)
	if len(whole) != 3 || len(cut) != len(whole) {
		t.Fatalf("files: %d whole, %d cut, want 3 of each (5,000 events in inserts of at most 2,000)", len(whole), len(cut))
	}
	total := uint64(0)
	for i := range whole {
		w, c := whole[i], cut[i]
		total += w.Rows
		if w.Rows != c.Rows || w.Hash != c.Hash {
			t.Errorf("file %d: %d rows (hash %x) as one block, %d rows (hash %x) cut into blocks of 700", i, w.Rows, w.Hash, c.Rows, c.Hash)
		}
		if w.Blocks != 1 {
			t.Errorf("file %d: the engine read %d blocks of %d rows written as one", i, w.Blocks, w.Rows)
		}
		if want := (c.Rows + 699) / 700; c.Blocks != want {
			t.Errorf("file %d: the engine read %d blocks of %d rows, want %d", i, c.Blocks, c.Rows, want)
		}
	}
	if total != 5000 {
		t.Errorf("the files hold %d rows, want 5000", total)
	}
}
