package spool

import (
	"slices"
	"sync"
)

// The spool keeps the records it appended lately in memory, up to
// Config.CacheEvents events, so that a replayer keeping up with the
// appender — with every batch acknowledged once spooled, the usual case —
// takes each record from there rather than reading its segment back. The
// segment stays the record's truth: the cache holds each record's payload
// exactly as the segment got it, and a record it does not hold (an
// earlier process's, one appended while the cache was full, one read
// already) is read from disk as before, checksum and all. Reading from
// the cache therefore changes the cost of a read, never its result.
//
// It holds payloads, not decoded events: 365 B of pointer-free bytes per
// event of the simulator's mix against 664 B of otelschema.Event holding
// pointers, which the garbage collector scanned and the cache and the
// replayer copied (issue 46). A reader transcodes them straight into
// the store's insert (Transcoder), or decodes them (Peek).
//
// A record leaves the cache when it is read (PeekPayload, PeekPayloadAt),
// when the cursor passes it (Commit, CommitGroup, Quarantine) or when a
// read skips past it.

// cached is a record held in memory.
type cached struct {
	// start is the record's position, next the one past it.
	start, next Position
	payload     []byte
	events      int
}

// cache is the spool's in-memory tail; safe for concurrent use.
type cache struct {
	mu     sync.Mutex
	max    int // events it may hold; 0 disables it
	events int // events it holds
	bytes  int // payload bytes it holds
	// perEvent is the most payload bytes per event of a record added:
	// max of them bound what the cache keeps, full or free.
	perEvent int
	q        []cached // in append order, so in position order
	hits     uint64   // records read from it
	// free holds the payload slices of records gone from the queue, to
	// copy the next appends into, as long as their capacity (freeCap)
	// and the bytes held stay within max events of perEvent bytes: a
	// cache that keeps up does not allocate, and what it holds, full or
	// free, stays about max events.
	free    [][]byte
	freeCap int
}

// add keeps a copy of payload, a record of events events appended at
// start and ending at next, unless that would take the cache past its
// bound: the caller may reuse payload once add returns.
func (c *cache) add(start, next Position, payload []byte, events int) {
	if c.max == 0 || events == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events+events > c.max {
		return
	}
	var p []byte
	// The latest freed slice that fits: the sizes of batches vary from
	// append to append, and one too small now fits a smaller record later.
	for k := len(c.free) - 1; k >= 0; k-- {
		if f := c.free[k]; cap(f) >= len(payload) {
			p = f[:0]
			c.freeCap -= cap(f)
			c.free = slices.Delete(c.free, k, k+1)
			break
		}
	}
	c.q = append(c.q, cached{start: start, next: next, payload: append(p, payload...), events: events})
	c.events += events
	c.bytes += len(payload)
	c.perEvent = max(c.perEvent, (len(payload)+events-1)/events)
}

// take returns the record at pos, its payload copied to dst (from its
// start, dst's array reused when it has room), the record's events and
// the position past it; ok is false when the cache does not hold it. The
// records before pos are dropped: the reader has passed them.
func (c *cache) take(pos Position, dst []byte) (payload []byte, events int, next Position, ok bool) {
	if c.max == 0 {
		return nil, 0, Position{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropBeforeLocked(pos)
	if len(c.q) == 0 || c.q[0].start != pos {
		return nil, 0, Position{}, false
	}
	e := c.q[0]
	c.hits++
	payload = append(dst[:0], e.payload...)
	c.popLocked()
	return payload, e.events, e.next, true
}

// dropBefore forgets the records that start before pos.
func (c *cache) dropBefore(pos Position) {
	if c.max == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropBeforeLocked(pos)
}

func (c *cache) dropBeforeLocked(pos Position) {
	for len(c.q) > 0 && c.q[0].start.before(pos) {
		c.popLocked()
	}
}

// popLocked drops the first record, its slice kept for the next adds
// while what the cache holds, full or free, stays within its bound: no
// reader holds it, since take copies out. The slice is not cleared: it
// holds bytes, no pointers that would keep anything from the collector.
//
// The rest of the queue moves down rather than the slice moving up, so
// that the queue keeps its array instead of regrowing one as records come
// and go.
func (c *cache) popLocked() {
	p := c.q[0].payload
	c.events -= c.q[0].events
	c.bytes -= len(p)
	n := copy(c.q, c.q[1:])
	c.q[n] = cached{}
	c.q = c.q[:n]
	if c.bytes+c.freeCap+cap(p) <= c.max*c.perEvent {
		c.free = append(c.free, p)
		c.freeCap += cap(p)
	}
}

// reset forgets every record.
func (c *cache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.q, c.events, c.bytes = nil, 0, 0
	c.free, c.freeCap = nil, 0
}

// stats returns the records and events held and the records read from the
// cache.
func (c *cache) stats() (records, events int, hits uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.q), c.events, c.hits
}

// before orders positions: segment, then offset.
func (p Position) before(q Position) bool {
	return p.Seg < q.Seg || (p.Seg == q.Seg && p.Off < q.Off)
}
