package ingest

import (
	"math/bits"
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
