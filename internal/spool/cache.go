package spool

import (
	"slices"
	"sync"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// The spool keeps the records it appended lately in memory, up to
// Config.CacheEvents events, so that a replayer keeping up with the
// appender — with every batch acknowledged once spooled, the usual case —
// takes each record from there rather than reading its segment back and
// decoding it. The segment stays the record's truth: the cache holds only
// what was appended, exactly, and a record it does not hold (an earlier
// process's, one appended while the cache was full, one read already) is
// read from disk as before, checksum and all. Reading from the cache
// therefore changes the cost of a read, never its result.
//
// A record leaves the cache when it is read (Peek, PeekAt), when the cursor
// passes it (Commit, CommitGroup, Quarantine) or when a read skips past it.

// cached is a record held in memory.
type cached struct {
	// start is the record's position, next the one past it.
	start, next   Position
	tenant, token string
	events        []otelschema.Event
}

// cache is the spool's in-memory tail; safe for concurrent use.
type cache struct {
	mu     sync.Mutex
	max    int      // events it may hold; 0 disables it
	events int      // events it holds
	q      []cached // in append order, so in position order
	hits   uint64   // records read from it
	// free holds the event slices of records gone from the queue, to
	// copy the next appends into, as long as their capacity (freeCap)
	// and the events held stay within max: a cache that keeps up does not
	// allocate, and what it holds, full or free, stays about max events.
	free    [][]otelschema.Event
	freeCap int
}

// add keeps a copy of r, appended at start and ending at next, unless that
// would take the cache past its bound: the caller may reuse r.Events once
// add returns.
func (c *cache) add(start, next Position, r *Record) {
	if c.max == 0 || len(r.Events) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events+len(r.Events) > c.max {
		return
	}
	var events []otelschema.Event
	// The latest freed slice that fits: the sizes of batches vary from
	// append to append, and one too small now fits a smaller record later.
	for k := len(c.free) - 1; k >= 0; k-- {
		if f := c.free[k]; cap(f) >= len(r.Events) {
			events = f[:0]
			c.freeCap -= cap(f)
			c.free = slices.Delete(c.free, k, k+1)
			break
		}
	}
	c.q = append(c.q, cached{start: start, next: next, tenant: r.Tenant, token: r.Token,
		events: append(events, r.Events...)})
	c.events += len(r.Events)
}

// take returns the record at pos, its events appended to dst, and the
// position past it; ok is false when the cache does not hold it. The
// records before pos are dropped: the reader has passed them.
func (c *cache) take(pos Position, dst []otelschema.Event) (rec Record, next Position, ok bool) {
	if c.max == 0 {
		return Record{}, Position{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropBeforeLocked(pos)
	if len(c.q) == 0 || c.q[0].start != pos {
		return Record{}, Position{}, false
	}
	e := c.q[0]
	c.hits++
	events := e.events
	if dst != nil {
		// The copy keeps dst's contract (PeekAt): rec.Events extends it;
		// the record's slice can take another append. Without dst the
		// caller gets the slice itself (Peek), to keep.
		events = append(growEvents(dst, len(e.events)), e.events...)
	}
	c.popLocked(dst != nil)
	return Record{Tenant: e.tenant, Token: e.token, Events: events}, e.next, true
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
		c.popLocked(true)
	}
}

// popLocked drops the first record, its slice kept for the next adds
// when recycle says that no reader holds it: a record passed by a read
// from disk or by a commit, like one copied out, leaves its room behind.
// A slice kept is cleared: its events' strings alias the batches they were
// decoded from, which a free slice would otherwise keep from the collector,
// up to CacheEvents events of them. Cleared as they leave, the slices on
// the free list are zero to their capacity, since an add fills one from
// its start.
//
// The rest of the queue moves down rather than the slice moving up, so
// that the queue keeps its array instead of regrowing one as records come
// and go.
func (c *cache) popLocked(recycle bool) {
	events := c.q[0].events
	c.events -= len(events)
	n := copy(c.q, c.q[1:])
	c.q[n] = cached{}
	c.q = c.q[:n]
	if recycle && c.events+c.freeCap+cap(events) <= c.max {
		clear(events)
		c.free = append(c.free, events)
		c.freeCap += cap(events)
	}
}

// reset forgets every record.
func (c *cache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.q, c.events = nil, 0
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
