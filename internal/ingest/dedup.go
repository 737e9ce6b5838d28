package ingest

import (
	"math/bits"
	"slices"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// idSet remembers about the last limit event ids added to it, in two
// generations of open-addressing tables: when the current one holds
// limit/2 ids it becomes the previous one, and the previous one is cleared
// for reuse. Memory is fixed: 16 bytes per id of the limit, whatever comes
// in. Id 0 is never remembered. Not safe for concurrent use.
type idSet struct {
	cur, prev []uint64
	n, perGen int
	mask      uint64
}

func newIDSet(limit int) *idSet {
	if limit <= 0 {
		return nil
	}
	perGen := max(limit/2, 1)
	slots := 1 << bits.Len(uint(2*perGen-1)) // at most half full
	return &idSet{cur: make([]uint64, slots), prev: make([]uint64, slots), perGen: perGen, mask: uint64(slots - 1)}
}

// slot spreads an id over the table (ids are hashes already, but tests
// and clients may use small ones).
func (s *idSet) slot(id uint64) uint64 { return (id * 0x9E3779B97F4A7C15) >> 7 & s.mask }

func (s *idSet) has(id uint64) bool {
	if s == nil || id == 0 {
		return false
	}
	return s.in(s.cur, id) || s.in(s.prev, id)
}

func (s *idSet) in(t []uint64, id uint64) bool {
	for i := s.slot(id); ; i = (i + 1) & s.mask {
		switch t[i] {
		case id:
			return true
		case 0:
			return false
		}
	}
}

// add remembers id. It looks for id in the current generation only: one
// probe of a table far larger than the CPU's caches, where has costs two.
// An id still held by the previous generation is added again, which only
// brings the next generation forward a little.
func (s *idSet) add(id uint64) {
	if s == nil || id == 0 {
		return
	}
	if s.n >= s.perGen {
		s.cur, s.prev = s.prev, s.cur
		clear(s.cur)
		s.n = 0
	}
	i := s.slot(id)
	for ; s.cur[i] != 0; i = (i + 1) & s.mask {
		if s.cur[i] == id {
			return
		}
	}
	s.cur[i] = id
	s.n++
}

// remember adds the ids of events made durable to the recent set and its
// journal.
func (b *batcher) remember(events []otelschema.Event) {
	if b.recent == nil {
		return
	}
	b.mu.Lock()
	for i := range events {
		b.recent.add(events[i].ID)
	}
	b.mu.Unlock()
	// Outside the batcher's lock: admission does not wait on the disk.
	b.journal.add(events)
}

// seed adds ids durable elsewhere (in the spool, in the store) to the
// recent set, not to its journal.
func (b *batcher) seed(ids []uint64) {
	if b.recent == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range ids {
		b.recent.add(id)
	}
}

// dropRecent returns events without those whose id is in the recent set,
// counting them; events itself when none is. The caller holds mu.
func (b *batcher) dropRecentLocked(events []otelschema.Event) []otelschema.Event {
	if b.recent == nil {
		return events
	}
	var kept []otelschema.Event
	for i := range events {
		if b.recent.has(events[i].ID) {
			if kept == nil {
				kept = make([]otelschema.Event, i, len(events))
				copy(kept, events[:i])
			}
			b.stats.dedupHits.Add(1)
			continue
		}
		if kept != nil {
			kept = append(kept, events[i])
		}
	}
	if kept == nil {
		return events
	}
	return kept
}

// dropInflightLocked returns events without those whose id is in a part
// not yet settled, counting them, with the parts to wait for instead, each
// once; events itself when none is. The caller holds mu.
func (b *batcher) dropInflightLocked(events []otelschema.Event) ([]otelschema.Event, []partRef) {
	if len(b.inflight) == 0 {
		return events, nil
	}
	var (
		kept  []otelschema.Event
		waits []partRef
	)
	for i := range events {
		p, busy := b.inflight[events[i].ID]
		if !busy || events[i].ID == 0 {
			if kept != nil {
				kept = append(kept, events[i])
			}
			continue
		}
		if kept == nil {
			kept = make([]otelschema.Event, i, len(events))
			copy(kept, events[:i])
		}
		b.stats.dedupHits.Add(1)
		if !slices.Contains(waits, p) {
			waits = append(waits, p)
		}
	}
	if kept == nil {
		return events, waits
	}
	return kept, waits
}

// settleLocked forgets the in-flight ids of bt, written (or refused):
// from now on the recent set, or a new admission, answers for them. The
// caller holds mu.
func (b *batcher) settleLocked(bt *batch) {
	if b.inflight == nil {
		return
	}
	for i := range *bt.events {
		id := (*bt.events)[i].ID
		if p, ok := b.inflight[id]; ok && p.b == bt {
			delete(b.inflight, id)
		}
	}
}
