package ingest

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

func eventsWithIDs(ids ...uint64) []otelschema.Event {
	events := make([]otelschema.Event, len(ids))
	for i, id := range ids {
		events[i].ID = id
	}
	return events
}

func seq(from, to uint64) []uint64 {
	var ids []uint64
	for id := from; id <= to; id++ {
		ids = append(ids, id)
	}
	return ids
}

// TestIDJournal: the ids appended come back at the next open, the oldest
// first, across a rotation; past two generations the oldest are gone; a
// torn last id and a foreign file cost only what they hold.
func TestIDJournal(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	j, ids, err := openIDJournal(dir, 4, log)
	if err != nil || len(ids) != 0 {
		t.Fatalf("new journal: ids %v, %v", ids, err)
	}
	j.add(eventsWithIDs(1, 2, 0, 3)) // id 0 is never remembered
	j.add(eventsWithIDs(4, 5, 6))    // rotates after 4
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	j, ids, err = openIDJournal(dir, 4, log)
	if err != nil {
		t.Fatal(err)
	}
	if want := seq(1, 6); !slices.Equal(ids, want) {
		t.Fatalf("reopened: ids %v, want %v", ids, want)
	}
	j.add(eventsWithIDs(seq(7, 11)...)) // fills the file (5..6 held), rotates twice
	j.close()
	_, ids, _ = openIDJournal(dir, 4, log)
	if want := seq(5, 11); !slices.Equal(ids, want) {
		t.Fatalf("after rotations: ids %v, want %v", ids, want)
	}

	// A kill -9 mid-append leaves a torn id: it is cut off, and the next
	// appends stay aligned.
	path := filepath.Join(dir, idJournalFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0xAA, 0xBB, 0xCC})
	f.Close()
	j, ids, _ = openIDJournal(dir, 4, log)
	if want := seq(5, 11); !slices.Equal(ids, want) {
		t.Fatalf("torn id: ids %v, want %v", ids, want)
	}
	j.add(eventsWithIDs(12))
	j.close()
	if _, ids, _ = openIDJournal(dir, 4, log); !slices.Equal(ids, seq(5, 12)) {
		t.Fatalf("appended after a torn id: ids %v, want %v", ids, seq(5, 12))
	}

	// A foreign previous file is not read; the current one still is.
	if err := os.WriteFile(filepath.Join(dir, idJournalPrev), []byte("something else entirely"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, ids, _ = openIDJournal(dir, 4, log); !slices.Equal(ids, seq(9, 12)) {
		t.Fatalf("foreign previous file: ids %v, want %v", ids, seq(9, 12))
	}
}
