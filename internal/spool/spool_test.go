package spool

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testRecord returns record i: n events with distinct ids and every kind of
// field set.
func testRecord(i, n int) Record {
	r := Record{Tenant: "acme", Token: fmt.Sprintf("tok-%d", i)}
	for j := range n {
		r.Events = append(r.Events, otelschema.Event{
			ID: uint64(i)<<32 | uint64(j) + 1, Name: otelschema.EventCall, Time: int64(1e18 + i*1000 + j),
			TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5},
			Service: "svc", Tool: "search", SessionID: fmt.Sprint("s", j), RevisionClient: "r1",
			Outcome: otelschema.OutcomeNormalized, ChangeClass: otelschema.ChangeClassSemantic,
			SideEffectStarted: j%2 == 0, RepairAutomatic: true, ExternalRequests: -3, RetryAttempt: int64(j),
			AdapterWindowEnd: 1 << 40, ArgsRaw: `{"q":"x"}`,
			Attributes: map[string]string{"b": "2", "a": "1"},
		})
	}
	return r
}

func openSpool(t *testing.T, cfg Config) *Spool {
	t.Helper()
	s, err := Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func smallConfig(dir string) Config {
	return Config{Dir: dir, MaxBytes: 1 << 20, SegmentBytes: 4 << 10, Fsync: true}
}

// drain replays every record, committing each, and returns their tokens.
func drain(t *testing.T, s *Spool) []Record {
	t.Helper()
	var out []Record
	for {
		rec, next, ok, err := s.Peek()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, rec)
		if err := s.Commit(next); err != nil {
			t.Fatal(err)
		}
	}
}

func tokens(rs []Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Token)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	want := testRecord(7, 3)
	b := appendRecord(nil, &want)
	got, n, err := decodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(b) || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %d of %d bytes:\n got %+v\nwant %+v", n, len(b), got, want)
	}
}

func TestAppendReplayInOrderAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	s := openSpool(t, smallConfig(dir))
	var want []string
	for i := range 40 {
		r := testRecord(i, 5)
		if _, err := s.Append(r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r.Token)
	}
	st := s.Stats()
	if st.Records != 40 || st.Appended != 40 {
		t.Fatalf("stats after appends: %+v", st)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(segs) < 3 {
		t.Fatalf("%d segments, want several with 4 KiB segments", len(segs))
	}
	got := drain(t, s)
	if !reflect.DeepEqual(tokens(got), want) {
		t.Fatalf("replayed %v, want %v", tokens(got), want)
	}
	if !reflect.DeepEqual(got[3], testRecord(3, 5)) {
		t.Fatalf("record 3 differs after replay")
	}
	st = s.Stats()
	if st.Records != 0 || st.Replayed != 40 || st.Bytes != 0 {
		t.Fatalf("stats after replay: %+v", st)
	}
	segs, _ = filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(segs) != 0 {
		t.Fatalf("segments left after a full replay: %v", segs)
	}
}

func TestReopenResumesAtCursor(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(smallConfig(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := s.Append(testRecord(i, 5)); err != nil {
			t.Fatal(err)
		}
	}
	for range 8 {
		_, next, ok, err := s.Peek()
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		if err := s.Commit(next); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	s = openSpool(t, smallConfig(dir))
	if st := s.Stats(); st.Records != 12 {
		t.Fatalf("reopened with %d records, want 12", st.Records)
	}
	// Appends after a restart go to a new segment, after the old ones.
	if _, err := s.Append(testRecord(100, 1)); err != nil {
		t.Fatal(err)
	}
	got := tokens(drain(t, s))
	want := []string{}
	for i := 8; i < 20; i++ {
		want = append(want, fmt.Sprint("tok-", i))
	}
	want = append(want, "tok-100")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("replayed %v, want %v", got, want)
	}
}

// An append after a restart on a wholly replayed spool must survive a
// crash before its first commit: the cursor file still names the last
// segment replayed, and the new segment must not be numbered below it and
// deleted as replayed by the next Open.
func TestIdleRestartThenCrashKeepsAppends(t *testing.T) {
	for _, restarts := range []int{1, 3} {
		t.Run(fmt.Sprint(restarts, " idle restarts"), func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(smallConfig(dir), nil)
			if err != nil {
				t.Fatal(err)
			}
			// Enough records for several segments, all replayed: the cursor
			// file ends past segment 1.
			for i := range 20 {
				if _, err := s.Append(testRecord(i, 5)); err != nil {
					t.Fatal(err)
				}
			}
			if got := len(drain(t, s)); got != 20 {
				t.Fatalf("replayed %d records, want 20", got)
			}
			s.Close()
			for range restarts - 1 {
				s, err = Open(smallConfig(dir), nil)
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
			}

			s, err = Open(smallConfig(dir), nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := 100; i < 103; i++ {
				if _, err := s.Append(testRecord(i, 5)); err != nil {
					t.Fatal(err)
				}
			}
			// A crash: the files are left as they are, nothing committed.
			s.Close()

			s = openSpool(t, smallConfig(dir))
			if st := s.Stats(); st.Records != 3 {
				t.Fatalf("reopened after the crash with %d records, want 3", st.Records)
			}
			got := tokens(drain(t, s))
			if want := []string{"tok-100", "tok-101", "tok-102"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("replayed %v, want %v", got, want)
			}
		})
	}
}

// corrupt rewrites the spool's first segment with f.
func corrupt(t *testing.T, dir string, f func([]byte) []byte) {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(segs) == 0 {
		t.Fatal("no segment")
	}
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(segs[0], f(b), 0o640); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptionIsQuarantined(t *testing.T) {
	rec := appendRecord(nil, ptr(testRecord(0, 2)))
	size := len(rec)
	tests := []struct {
		name string
		f    func([]byte) []byte
		want []string // tokens replayed
	}{
		{"bit flip in a payload", func(b []byte) []byte { b[size+headerSize+20] ^= 0x10; return b },
			[]string{"tok-0", "tok-2", "tok-3", "tok-4"}},
		{"bit flip in a length", func(b []byte) []byte { b[size+5] ^= 0x01; return b },
			[]string{"tok-0", "tok-2", "tok-3", "tok-4"}},
		{"bit flip in a magic", func(b []byte) []byte { b[2*size] ^= 0x80; return b },
			[]string{"tok-0", "tok-1", "tok-3", "tok-4"}},
		{"torn tail, half a header", func(b []byte) []byte { return b[:4*size+5] },
			[]string{"tok-0", "tok-1", "tok-2", "tok-3"}},
		{"torn tail, half a payload", func(b []byte) []byte { return b[:4*size+headerSize+10] },
			[]string{"tok-0", "tok-1", "tok-2", "tok-3"}},
		{"zeroed middle", func(b []byte) []byte { clear(b[size : 3*size]); return b },
			[]string{"tok-0", "tok-3", "tok-4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := smallConfig(dir)
			cfg.SegmentBytes = 1 << 20
			s, err := Open(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				if _, err := s.Append(testRecord(i, 2)); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			corrupt(t, dir, tc.f)
			s = openSpool(t, cfg)
			got := tokens(drain(t, s))
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("replayed %v, want %v", got, tc.want)
			}
			st := s.Stats()
			if st.Quarantined != 1 || st.QuarantinedBytes == 0 {
				t.Fatalf("quarantined %d stretches of %d bytes, want 1", st.Quarantined, st.QuarantinedBytes)
			}
			bad, _ := filepath.Glob(filepath.Join(dir, quarantineDir, "*.bad"))
			if len(bad) != 1 {
				t.Fatalf("quarantine files %v, want 1", bad)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestFull(t *testing.T) {
	cfg := smallConfig(t.TempDir())
	cfg.MaxBytes, cfg.SegmentBytes = 8<<10, 4<<10
	s := openSpool(t, cfg)
	n := 0
	var err error
	for ; n < 100; n++ {
		if _, err = s.Append(testRecord(n, 5)); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrFull) || !s.Full() {
		t.Fatalf("append %d: %v, full %v; want ErrFull", n, err, s.Full())
	}
	if st := s.Stats(); st.Bytes > cfg.MaxBytes || st.Records != int64(n) {
		t.Fatalf("stats %+v over MaxBytes %d or not %d records", st, cfg.MaxBytes, n)
	}
	got := drain(t, s)
	if len(got) != n {
		t.Fatalf("replayed %d records, want the %d appended", len(got), n)
	}
	if s.Full() {
		t.Fatal("still full after a replay")
	}
	if _, err := s.Append(testRecord(1000, 5)); err != nil {
		t.Fatalf("append after replay: %v", err)
	}
}

func TestNoSpaceLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	s := openSpool(t, smallConfig(dir))
	if _, err := s.Append(testRecord(0, 3)); err != nil {
		t.Fatal(err)
	}
	s.failWrite = func() error { return &os.PathError{Op: "write", Path: "seg", Err: syscall.ENOSPC} }
	_, err := s.Append(testRecord(1, 3))
	if !errors.Is(err, ErrNoSpace) || !s.Full() {
		t.Fatalf("append on a full disk: %v, want ErrNoSpace", err)
	}
	s.failWrite = nil
	// Room made on the disk: Full lets an append be tried again after
	// FullRetry, without any record replayed.
	now := time.Now()
	s.now = func() time.Time { return now.Add(FullRetry) }
	if s.Full() {
		t.Fatal("still full FullRetry after the failed append")
	}
	if _, err := s.Append(testRecord(2, 3)); err != nil {
		t.Fatal(err)
	}
	if got := tokens(drain(t, s)); !reflect.DeepEqual(got, []string{"tok-0", "tok-2"}) {
		t.Fatalf("replayed %v, want tok-0 and tok-2 only", got)
	}
}

func TestQuarantineRefusedRecord(t *testing.T) {
	s := openSpool(t, smallConfig(t.TempDir()))
	for i := range 3 {
		if _, err := s.Append(testRecord(i, 1)); err != nil {
			t.Fatal(err)
		}
	}
	_, next, _, _ := s.Peek()
	if err := s.Quarantine(next, "refused by the store"); err != nil {
		t.Fatal(err)
	}
	if got := tokens(drain(t, s)); !reflect.DeepEqual(got, []string{"tok-1", "tok-2"}) {
		t.Fatalf("replayed %v", got)
	}
	if st := s.Stats(); st.Quarantined != 1 || st.Records != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestDamagedCursorReplaysFromStart(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(smallConfig(dir), nil)
	for i := range 3 {
		_, _ = s.Append(testRecord(i, 1))
	}
	_, next, _, _ := s.Peek()
	_ = s.Commit(next)
	s.Close()
	if err := os.WriteFile(filepath.Join(dir, cursorFile), []byte("garbage"), 0o640); err != nil {
		t.Fatal(err)
	}
	s = openSpool(t, smallConfig(dir))
	// At least once: the store deduplicates the replayed record.
	if got := tokens(drain(t, s)); !reflect.DeepEqual(got, []string{"tok-0", "tok-1", "tok-2"}) {
		t.Fatalf("replayed %v", got)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Config{
		{MaxBytes: 1 << 20, SegmentBytes: 1 << 10},
		{Dir: "x", MaxBytes: 1 << 20, SegmentBytes: 4},
		{Dir: "x", MaxBytes: 1 << 10, SegmentBytes: 1 << 20},
		{Dir: "x", MaxBytes: 1 << 20, SegmentBytes: 1 << 10, SegmentEvents: -1},
	} {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v, want ErrInvalidConfig", c, err)
		}
	}
	if err := DefaultConfig("x").Validate(); err != nil {
		t.Fatal(err)
	}
}

func FuzzSpoolRecord(f *testing.F) {
	f.Add(appendRecord(nil, ptr(testRecord(1, 2))))
	f.Add(appendRecord(nil, &Record{}))
	f.Add([]byte("MDS1\x00\x00\x00\x00"))
	f.Add(appendRecord(nil, ptr(testRecord(3, 1)))[headerSize:]) // a bare payload
	f.Fuzz(func(t *testing.T, b []byte) {
		// The payload decoder on its own, since a checksum guards it in
		// decodeRecord and random bytes rarely pass it.
		if rec, err := decodePayload(bytes.Clone(b), nil); err == nil {
			if _, _, err := decodeRecord(appendRecord(nil, &rec)); err != nil {
				t.Fatalf("payload re-encoded as a record does not decode: %v", err)
			}
		}
		rec, n, err := decodeRecord(b)
		if err != nil {
			return
		}
		if n > len(b) {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
		// What decodes re-encodes to a record that decodes the same.
		again, _, err := decodeRecord(appendRecord(nil, &rec))
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if !reflect.DeepEqual(normalize(again), normalize(rec)) {
			t.Fatalf("round trip differs")
		}
	})
}

// normalize makes empty attribute maps nil, as decoding does.
func normalize(r Record) Record {
	for i := range r.Events {
		if len(r.Events[i].Attributes) == 0 {
			r.Events[i].Attributes = nil
		}
	}
	return r
}

// TestDecodeIntoUsedBuffer decodes a record into a buffer whose spare room
// holds events of an earlier group, as the replayer's buffer does: the
// events decoded must be the record's, with nothing left over from the
// events they replace (attributes included), after the events dst holds.
func TestDecodeIntoUsedBuffer(t *testing.T) {
	bare := Record{Tenant: "acme", Token: "tok", Events: []otelschema.Event{{ID: 1, Name: otelschema.EventRefresh, Time: 5}, {ID: 2, Tool: "t"}}}
	used := testRecord(7, 4).Events
	kept := used[:1]
	payload := appendRecord(nil, &bare)[headerSize:]
	rec, err := decodePayload(payload, kept)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]otelschema.Event{testRecord(7, 4).Events[0]}, bare.Events...)
	if !reflect.DeepEqual(rec.Events, want) {
		t.Fatalf("decoded into a used buffer:\n got %+v\nwant %+v", rec.Events, want)
	}
	if &rec.Events[0] != &used[0] {
		t.Fatal("the events were not decoded into dst's spare room")
	}
}

// TestOneProcessPerSpool: a spool directory open in one place cannot be
// opened again until it is closed.
func TestOneProcessPerSpool(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(smallConfig(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(smallConfig(dir), nil); !errors.Is(err, ErrInUse) {
		t.Fatalf("second Open: %v, want ErrInUse", err)
	}
	s.Close()
	openSpool(t, smallConfig(dir))
}

// TestPayloadEdgeValues round-trips every column at the edges of its
// encoding — strings of 0 to 300 bytes (one- and two-byte lengths),
// integers around each zig-zag varint width and at their limits, enum
// bytes across their range, both bools, fixed bytes, maps — and checks
// that every proper prefix of the payload is refused, never read as a
// shorter record, with an error naming the kind of value cut short.
func TestPayloadEdgeValues(t *testing.T) {
	strs := []string{"", "x", strings.Repeat("a", 127), strings.Repeat("b", 128), strings.Repeat("é", 150)}
	ints := []int64{0, -1, 1, 63, -64, 64, -65, 8191, -8192, 8192, math.MaxInt64, math.MinInt64}
	rec := Record{Tenant: "acme", Token: "tok"}
	for i := range 12 {
		var e otelschema.Event
		for c := range store.EventColumns {
			col := &store.EventColumns[c]
			k := i + c // each event pairs the columns with other values
			switch col.Kind {
			case store.KindString:
				*col.StringAt(&e) = strs[k%len(strs)]
			case store.KindUInt64:
				*col.UintAt(&e) = []uint64{0, 1, math.MaxUint64, 1 << 63}[k%4]
			case store.KindNanos, store.KindInt64, store.KindSeconds:
				*col.IntAt(&e) = ints[k%len(ints)]
			case store.KindEnum:
				*col.EnumAt(&e) = uint8(k * 37)
			case store.KindBool:
				*col.BoolAt(&e) = k%2 == 0
			case store.KindFixed:
				for j := range col.FixedAt(&e) {
					col.FixedAt(&e)[j] = byte(k + j)
				}
			case store.KindMap:
				if k%3 != 0 {
					*col.MapAt(&e) = map[string]string{strs[k%len(strs)]: strs[(k+1)%len(strs)], "k": ""}
				}
			}
		}
		rec.Events = append(rec.Events, e)
	}
	payload := appendRecord(nil, &rec)[headerSize:]
	got, err := decodePayload(bytes.Clone(payload), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(got), normalize(rec)) {
		for i := range rec.Events {
			if !reflect.DeepEqual(normalize(Record{Events: got.Events[i : i+1]}), normalize(Record{Events: rec.Events[i : i+1]})) {
				t.Fatalf("event %d read back as\n%+v\nwant\n%+v", i, got.Events[i], rec.Events[i])
			}
		}
		t.Fatal("read back another record")
	}
	kinds := []string{"string column", "uint64 column", "time column", "integer column", "enum column", "bool column", "fixed column"}
	named := map[string]bool{}
	for cut := range len(payload) {
		_, err := decodePayload(bytes.Clone(payload[:cut]), nil)
		if !errors.Is(err, errPayload) {
			t.Fatalf("the payload's first %d of %d bytes: %v, want errPayload", cut, len(payload), err)
		}
		for _, what := range kinds {
			if strings.Contains(err.Error(), "cannot read "+what+" ") {
				named[what] = true
			}
		}
	}
	for _, what := range kinds {
		if !named[what] {
			t.Errorf("no cut of the payload is reported as a %s cut short", what)
		}
	}
}
