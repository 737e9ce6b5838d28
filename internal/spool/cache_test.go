package spool

import (
	"bytes"
	"errors"
	"math/bits"
	"reflect"
	"slices"
	"testing"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// readAll reads every record the way the replayer does — Peek at the
// cursor, then PeekAt onto the group's buffer up to a segment boundary or
// the newest record, then CommitGroup — and returns the records one by
// one, their events cut from the group's buffer.
func readAll(t *testing.T, s *Spool) []Record {
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
		out = append(out, Record{Tenant: rec.Tenant, Token: rec.Token, Events: rec.Events})
		buf, n := rec.Events, 1
		for {
			r, nx, ok, err := s.PeekAt(next, buf)
			if errors.Is(err, ErrGroupBoundary) || (err == nil && !ok) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Events[:len(buf)], buf) {
				t.Fatalf("PeekAt(%v) changed the %d events of the group before it", next, len(buf))
			}
			out = append(out, Record{Tenant: r.Tenant, Token: r.Token, Events: r.Events[len(buf):]})
			buf, next = r.Events, nx
			n++
		}
		if err := s.CommitGroup(next, n); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCacheReadsWhatWasAppended reads the same appends through caches of
// every size — none, one that holds some records and not others, one that
// holds them all — and after a restart, which empties it: the records read
// are the ones appended, in order, whichever way they are read, and the
// cache never holds more events than its bound.
func TestCacheReadsWhatWasAppended(t *testing.T) {
	const records, perRecord = 30, 5
	for _, tc := range []struct {
		name     string
		events   int
		restart  bool
		minReads uint64
		maxReads uint64
	}{
		{name: "no cache", events: 0, maxReads: 0},
		{name: "room for 2 records", events: 2*perRecord + 1, minReads: 2, maxReads: 2},
		{name: "room for all", events: records * perRecord, minReads: records, maxReads: records},
		{name: "room for all, restarted", events: records * perRecord, restart: true, maxReads: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := smallConfig(dir)
			cfg.CacheEvents = tc.events
			s, err := Open(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { s.Close() }()
			var want []Record
			for i := range records {
				r := testRecord(i, perRecord)
				want = append(want, normalize(testRecord(i, perRecord)))
				if _, err := s.Append(r); err != nil {
					t.Fatal(err)
				}
				// The caller reuses its slice once Append returns, as
				// the batcher does: the cache must not see it.
				for j := range r.Events {
					r.Events[j] = otelschema.Event{Tool: "reused"}
				}
				if st := s.Stats(); st.CachedEvents > tc.events {
					t.Fatalf("after %d appends the cache holds %d events, more than its %d", i+1, st.CachedEvents, tc.events)
				}
			}
			if tc.restart {
				s.Close()
				if s, err = Open(cfg, nil); err != nil {
					t.Fatal(err)
				}
			}
			got := readAll(t, s)
			for i := range got {
				got[i] = normalize(got[i])
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("read %d records, want the %d appended: %v", len(got), len(want), tokens(got))
			}
			st := s.Stats()
			if st.CacheReads < tc.minReads || st.CacheReads > tc.maxReads {
				t.Errorf("%d records read from the cache, want %d to %d", st.CacheReads, tc.minReads, tc.maxReads)
			}
			if st.CachedEvents != 0 || st.Records != 0 {
				t.Errorf("after reading everything: %d events cached, %d records left", st.CachedEvents, st.Records)
			}
		})
	}
}

// TestCacheReusesReadRecords appends records of varying sizes and reads
// each one as soon as it is appended, onto a growing group, as a replayer
// keeping up does: the slices of the records read take later appends, and
// every record read is still the one appended.
func TestCacheReusesReadRecords(t *testing.T) {
	cfg := smallConfig(t.TempDir())
	cfg.MaxBytes = 16 << 20
	cfg.SegmentBytes = cfg.MaxBytes // one segment: one group
	cfg.CacheEvents = 1000
	s := openSpool(t, cfg)
	const records = 40
	size := func(i int) int { return 200 + (i*7)%9*25 }
	next, err := s.Append(testRecord(0, size(0)))
	if err != nil {
		t.Fatal(err)
	}
	first, pos, ok, err := s.Peek()
	if err != nil || !ok {
		t.Fatalf("Peek: %v %v", ok, err)
	}
	if pos != next {
		t.Fatalf("Peek ends at %v, the append at %v", pos, next)
	}
	buf := first.Events
	moves := 0 // how often the group's buffer moved as it grew
	for i := 1; i < records; i++ {
		if next, err = s.Append(testRecord(i, size(i))); err != nil {
			t.Fatal(err)
		}
		r, nx, ok, err := s.PeekAt(pos, buf)
		if err != nil || !ok || nx != next {
			t.Fatalf("PeekAt record %d: ok %v, err %v, ends at %v, the append at %v", i, ok, err, nx, next)
		}
		if got, want := normalize(Record{Tenant: r.Tenant, Token: r.Token, Events: r.Events[len(buf):]}), normalize(testRecord(i, size(i))); !reflect.DeepEqual(got, want) {
			t.Fatalf("record %d read back as %+v, want %+v", i, got, want)
		}
		if &r.Events[0] != &buf[0] {
			moves++
		}
		buf, pos = r.Events, nx
	}
	// Growing by doubling, not by a quarter as append grows large slices:
	// each move at least doubles the room, which never exceeds twice what
	// the group needs.
	if limit := bits.Len(uint(2 * len(buf) / size(0))); moves > limit {
		t.Errorf("the group's buffer moved %d times growing to %d events, want at most %d", moves, len(buf), limit)
	}
	if got := s.Stats().CacheReads; got != records {
		t.Fatalf("%d of %d records read from the cache", got, records)
	}
	for i := range records {
		want := normalize(testRecord(i, size(i))).Events
		if got := normalize(Record{Events: buf[:len(want)]}).Events; !reflect.DeepEqual(got, want) {
			t.Fatalf("record %d changed in the group after later appends", i)
		}
		buf = buf[len(want):]
	}
}

// TestCacheForgetsCommitted commits records that were never read, as the
// writer does when it stores a batch itself: the cache lets them go, and
// a later read of what follows still finds its record.
func TestCacheForgetsCommitted(t *testing.T) {
	cfg := smallConfig(t.TempDir())
	cfg.CacheEvents = 100
	s := openSpool(t, cfg)
	for i := range 3 {
		next, err := s.Append(testRecord(i, 4))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(next); err != nil {
			t.Fatal(err)
		}
		if st := s.Stats(); st.CachedEvents != 0 {
			t.Fatalf("after committing record %d unread: %d events cached", i, st.CachedEvents)
		}
	}
	if _, err := s.Append(testRecord(3, 4)); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, s)
	if len(got) != 1 || got[0].Token != "tok-3" || s.Stats().CacheReads != 1 {
		t.Fatalf("read %v, %d from the cache; want tok-3 from it", tokens(got), s.Stats().CacheReads)
	}
}

// TestCacheAfterQuarantine quarantines a record the store refused, as the
// replayer does: the records after it are still read from the cache.
func TestCacheAfterQuarantine(t *testing.T) {
	cfg := smallConfig(t.TempDir())
	cfg.CacheEvents = 100
	s := openSpool(t, cfg)
	for i := range 3 {
		if _, err := s.Append(testRecord(i, 2)); err != nil {
			t.Fatal(err)
		}
	}
	rec, next, ok, err := s.Peek()
	if err != nil || !ok || rec.Token != "tok-0" {
		t.Fatalf("Peek: %v %v %q", ok, err, rec.Token)
	}
	if err := s.Quarantine(next, "refused"); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, s)
	if !reflect.DeepEqual(tokens(got), []string{"tok-1", "tok-2"}) || s.Stats().CacheReads != 3 {
		t.Fatalf("after the quarantine read %v, %d from the cache", tokens(got), s.Stats().CacheReads)
	}
}

func TestValidateCacheEvents(t *testing.T) {
	cfg := smallConfig(t.TempDir())
	cfg.CacheEvents = -1
	if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("CacheEvents -1: %v", err)
	}
}

// TestCacheReusesSlicesOfVaryingSizes adds records whose sizes vary from
// one to the next, as batches sealed by group commit do, then takes half
// of them and passes the others: the cache recycles the slices of both,
// each for a later record it fits, so that a round allocates nothing, its
// queue included.
func TestCacheReusesSlicesOfVaryingSizes(t *testing.T) {
	sizes := []int{300, 120, 500, 80, 450, 200, 499, 10}
	payloads := make([][]byte, len(sizes))
	for i, n := range sizes {
		r := testRecord(i, n)
		payloads[i] = appendPayload(nil, &r)
	}
	c := cache{max: 4000}
	dst := make([]byte, 0, 1<<20) // the replayer's buffer
	pos := make([]Position, len(payloads))
	turn := 0
	round := func() {
		// Each round in another order, so that a slice recycled from a
		// small record meets a large one.
		turn++
		for i := range payloads {
			pos[i] = Position{Seg: 1, Off: int64(i) * 10}
			k := (i*3 + turn) % len(payloads)
			c.add(pos[i], Position{Seg: 1, Off: pos[i].Off + 10}, payloads[k], sizes[k])
		}
		// Every other record is passed, as a read from disk passes the
		// records the cache held meanwhile; the last is dropped by a
		// commit.
		for i := 0; i < len(pos)-1; i += 2 {
			if _, _, _, ok := c.take(pos[i], dst); !ok {
				t.Fatalf("the cache lost the record at %v", pos[i])
			}
		}
		c.dropBefore(Position{Seg: 2})
	}
	round()
	if allocs := testing.AllocsPerRun(50, round); allocs != 0 {
		t.Errorf("a round of %d adds and takes allocated %.1f times: the cache does not recycle its slices, or they do not fit", len(payloads), allocs)
	}
	if _, events, _ := c.stats(); events != 0 || c.bytes != 0 || c.freeCap > c.max*c.perEvent {
		t.Errorf("after the rounds the cache holds %d events, %d bytes, %d free against a bound of %d", events, c.bytes, c.freeCap, c.max*c.perEvent)
	}
}

// TestCacheTakeCopiesOut: the payload take returns is the caller's, not
// the cache's: records added after it, into recycled slices, leave it as
// it was, and what the caller passed to add may change once add returns.
func TestCacheTakeCopiesOut(t *testing.T) {
	c := cache{max: 1000}
	a, b := testRecord(1, 300), testRecord(2, 300)
	pa, pb := appendPayload(nil, &a), appendPayload(nil, &b)
	want := slices.Clone(pa)
	at := func(i int) Position { return Position{Seg: 1, Off: int64(i) * 10} }
	c.add(at(0), at(1), pa, 300)
	clear(pa) // the appender reuses its buffer
	got, events, next, ok := c.take(at(0), nil)
	if !ok || events != 300 || next != at(1) || !bytes.Equal(got, want) {
		t.Fatalf("take: ok %v, %d events, next %v, payload equal %v", ok, events, next, bytes.Equal(got, want))
	}
	c.add(at(1), at(2), pb, 300) // into the slice take copied from
	if !bytes.Equal(got, want) {
		t.Fatal("a later add changed the payload take returned")
	}
}
