package spool

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// TestGroupReadAheadAndCommit gathers records past the cursor with PeekAt,
// commits them at once, and checks that replay resumes after them and
// that a group stops at a segment's end.
func TestGroupReadAheadAndCommit(t *testing.T) {
	dir := t.TempDir()
	s := openSpool(t, smallConfig(dir))
	var ends []Position
	for i := range 12 {
		next, err := s.Append(testRecord(i, 3))
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, next)
	}
	rec, next, ok, err := s.Peek()
	if err != nil || !ok || rec.Token != "tok-0" {
		t.Fatalf("Peek: %v %v %q", ok, err, rec.Token)
	}
	var got []string
	n := 1
	buf := rec.Events
	for {
		r, nx, ok, err := s.PeekAt(next, buf)
		if errors.Is(err, ErrGroupBoundary) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Fatalf("PeekAt(%v) found nothing before a segment boundary", next)
		}
		got = append(got, r.Token)
		if want := testRecord(n, 3).Events; !reflect.DeepEqual(r.Events[len(buf):], want) || !reflect.DeepEqual(r.Events[:len(buf)], buf) {
			t.Fatalf("PeekAt(%v) appended %d events to %d, want the record's 3 after the group's", next, len(r.Events)-len(buf), len(buf))
		}
		buf = r.Events
		next = nx
		n++
	}
	// 4 KiB segments hold a few records each: the group ends at the first
	// segment's end, before the records that follow in the next one.
	if n < 2 || n >= 12 || next.Seg != ends[0].Seg {
		t.Fatalf("group of %d records ending at %v (first segment %d): %v", n, next, ends[0].Seg, got)
	}
	if err := s.CommitGroup(next, n); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Records != int64(12-n) || st.Replayed != uint64(n) {
		t.Fatalf("after committing %d: %+v", n, st)
	}
	// At the end of the newest segment, PeekAt finds nothing yet.
	if _, _, ok, err := s.PeekAt(ends[11], nil); ok || err != nil {
		t.Fatalf("PeekAt past the last record: ok %v, err %v", ok, err)
	}
	rest := tokens(drain(t, s))
	if len(rest) != 12-n || rest[0] != "tok-"+itoa(n) {
		t.Fatalf("replay after the group: %v", rest)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestSegmentEventsEndSegments: with SegmentEvents, a segment holds whole
// records up to that many events however much room its bytes leave, so
// that groups read with PeekAt end where a reader grouping that many
// events would end them; a record of more events has a segment of its own.
func TestSegmentEventsEndSegments(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, MaxBytes: 1 << 20, SegmentBytes: 512 << 10, SegmentEvents: 10, Fsync: true}
	s := openSpool(t, cfg)
	var segOf []uint64
	for i, n := range []int{4, 4, 2, 3, 12, 5, 5, 1} {
		next, err := s.Append(testRecord(i, n))
		if err != nil {
			t.Fatal(err)
		}
		segOf = append(segOf, next.Seg)
	}
	// 4+4+2 fill the first segment; 3 starts the second, which 12 does not
	// fit: 12 alone; then 5+5, and 1 starts another.
	base := segOf[0]
	want := []uint64{base, base, base, base + 1, base + 2, base + 3, base + 3, base + 4}
	if !reflect.DeepEqual(segOf, want) {
		t.Fatalf("records in segments %v, want %v", segOf, want)
	}
	// A group from the cursor ends at the first segment's end: 10 events.
	rec, next, ok, err := s.Peek()
	if err != nil || !ok {
		t.Fatalf("Peek: %v, %v", ok, err)
	}
	events := len(rec.Events)
	buf := rec.Events
	for {
		r, nx, ok, err := s.PeekAt(next, buf)
		if errors.Is(err, ErrGroupBoundary) {
			break
		}
		if err != nil || !ok {
			t.Fatalf("PeekAt(%v): %v, %v", next, ok, err)
		}
		events, buf, next = len(r.Events), r.Events, nx
	}
	if events != 10 {
		t.Fatalf("group of %d events, want the first segment's 10", events)
	}
}

// TestInflightSurvivesRestart: the group recorded before an insert is what
// the next process finds; a damaged file, or one the cursor has passed, is
// ignored.
func TestInflightSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, MaxBytes: 1 << 20, SegmentBytes: 64 << 10, Fsync: true}
	s, err := Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ends []Position
	for i := range 4 {
		next, err := s.Append(testRecord(i, 2))
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, next)
	}
	want := Inflight{End: ends[2], Token: "group:abc-6"}
	if err := s.SetInflight(want); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openSpool(t, cfg)
	got, ok := s.Inflight()
	if !ok || got != want {
		t.Fatalf("Inflight after reopening = %+v, %v; want %+v", got, ok, want)
	}
	// Committed: gone, and ignored if its removal were lost.
	if err := s.CommitGroup(ends[2], 3); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Inflight(); ok {
		t.Fatal("Inflight still set after CommitGroup")
	}
	if err := s.SetInflight(Inflight{End: ends[1], Token: "stale"}); err != nil {
		t.Fatal(err)
	}
	if g, ok := s.Inflight(); ok {
		t.Fatalf("a group behind the cursor is reported: %+v", g)
	}
	// Damaged: every byte flipped in turn is detected.
	if err := s.SetInflight(want); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, inflightFile)
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range good {
		bad := slices.Clone(good)
		bad[i] ^= 0x5a
		if err := os.WriteFile(p, bad, 0o640); err != nil {
			t.Fatal(err)
		}
		if g, ok := s.Inflight(); ok {
			t.Fatalf("byte %d flipped: Inflight = %+v, want ignored", i, g)
		}
	}
	if err := os.WriteFile(p, good[:len(good)-1], 0o640); err != nil {
		t.Fatal(err)
	}
	if g, ok := s.Inflight(); ok {
		t.Fatalf("truncated: Inflight = %+v, want ignored", g)
	}
}
