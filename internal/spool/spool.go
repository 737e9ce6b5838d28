// Package spool is mcpdrift's write-ahead log: an on-disk, bounded queue of
// batches that the ingester acknowledges once they are appended and fsynced,
// while the store is slow or down, and writes to the store later, in order.
//
// The spool is a directory of segment files, named after their sequence
// number (00000000000000000001.seg, …), holding length-prefixed records,
// each with a CRC-32C (see Record for the layout), and a cursor file that
// holds the position of the oldest record not yet written to the store.
// Appends go to the newest segment; a new process never appends to a
// segment an earlier one wrote, so a torn tail left by a crash stays where
// it is and is quarantined on replay. A segment is deleted once the cursor
// has passed it.
//
// A record that fails its checksum or does not decode — torn by a crash
// mid-write, or flipped on disk — is copied to quarantine/, logged and
// counted, and replay resumes at the next record that checks out.
//
// One goroutine appends (Append) and one replays (Peek, then Commit or
// Quarantine); both may run at once. The appender may also commit the
// record it just appended when it is the oldest one, provided the replayer
// is idle meanwhile.
package spool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/dirlock"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// Config configures a spool.
type Config struct {
	// Dir is the spool directory, created if missing. One process owns it.
	Dir string
	// MaxBytes bounds the spool's segment files together; an append that
	// would go past it fails with ErrFull.
	MaxBytes int64
	// SegmentBytes is the size past which appends go to a new segment file.
	// A segment is deleted only once every record in it is replayed, so
	// smaller segments free space sooner.
	SegmentBytes int64
	// SegmentEvents, when positive, also bounds the events of one segment:
	// an append that would take the active segment past it goes to a new
	// one (a record of more events has a segment to itself). A group does
	// not span segments (PeekAt), so a reader that groups up to N events
	// sets it to N: a spool behind its reader then yields whole groups of
	// N, not groups cut short where SegmentBytes ends a segment.
	SegmentEvents int
	// Fsync makes every append, and every cursor update, durable with
	// fsync before it returns. Without it a record survives the death of
	// the process but not of the machine.
	Fsync bool
	// CacheEvents bounds the events of the records lately appended whose
	// payloads the spool keeps in memory, so that reading them back does
	// not read and check them from disk (cache.go); 0 keeps none. An
	// append that would go past it is not kept, and is read from disk.
	CacheEvents int
}

// MinSegmentBytes is the smallest SegmentBytes: room for one record header
// and a byte.
const MinSegmentBytes = headerSize + 1

// DefaultConfig returns the configuration of a spool in dir: 1 GiB in 128
// MiB segments, fsynced. A segment that size holds an ingester's default
// insert (200,000 events) of events up to about 670 bytes each as spooled,
// so that its bytes, rather than the events the ingester ends it at, do
// not cut the groups read from it short.
func DefaultConfig(dir string) Config {
	return Config{Dir: dir, MaxBytes: 1 << 30, SegmentBytes: 128 << 20, Fsync: true}
}

// Validate reports the first invalid field by name.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return fmt.Errorf("%w: Dir must not be empty", ErrInvalidConfig)
	case c.SegmentBytes < MinSegmentBytes:
		return fmt.Errorf("%w: SegmentBytes must be at least %d, got %d", ErrInvalidConfig, MinSegmentBytes, c.SegmentBytes)
	case c.MaxBytes < c.SegmentBytes:
		return fmt.Errorf("%w: MaxBytes (%d) must be at least SegmentBytes (%d)", ErrInvalidConfig, c.MaxBytes, c.SegmentBytes)
	case c.SegmentEvents < 0:
		return fmt.Errorf("%w: SegmentEvents must not be negative, got %d", ErrInvalidConfig, c.SegmentEvents)
	case c.CacheEvents < 0:
		return fmt.Errorf("%w: CacheEvents must not be negative, got %d", ErrInvalidConfig, c.CacheEvents)
	}
	return nil
}

// Sentinel errors.
var (
	// ErrInvalidConfig is wrapped by the errors of Config.Validate.
	ErrInvalidConfig = errors.New("invalid spool configuration")
	// ErrFull refuses an append that would take the spool past MaxBytes.
	ErrFull = errors.New("spool is full")
	// ErrNoSpace refuses an append that the file system had no room for
	// (ENOSPC, EDQUOT); nothing of the record is left in the spool.
	ErrNoSpace = errors.New("no space left for the spool")
	// ErrClosed is returned by calls on a closed spool.
	ErrClosed = errors.New("spool is closed")
	// ErrInUse is returned by Open when another process has the spool
	// directory open.
	ErrInUse = errors.New("spool directory in use")
)

// Position locates a record: a segment's sequence number and an offset in
// it.
type Position struct {
	Seg uint64
	Off int64
}

// Stats are a spool's gauges and counters.
type Stats struct {
	// Bytes is the size of the segment files, replayed records not yet
	// deleted included.
	Bytes int64
	// Records is the records appended and not yet replayed (committed or
	// quarantined).
	Records int64
	// Appended is the records appended since Open.
	Appended uint64
	// Replayed is the records committed since Open.
	Replayed uint64
	// Quarantined is the corrupt or refused stretches moved to quarantine/
	// since Open.
	Quarantined uint64
	// QuarantinedBytes is the bytes of those stretches.
	QuarantinedBytes uint64
	// CachedEvents is the events of the records held in memory now
	// (Config.CacheEvents); CacheReads is the records read from there
	// rather than from disk since Open.
	CachedEvents int
	CacheReads   uint64
}

// segment is one segment file.
type segment struct {
	seq  uint64
	size int64 // bytes durable in the file
	// events appended to it by this process: only the active segment's
	// count is used, and a segment is active only in the process that
	// created it.
	events int
}

// Spool is an open spool directory. See the package documentation.
type Spool struct {
	cfg Config
	log *slog.Logger

	// amu serialises appends and guards active.
	amu    sync.Mutex
	active *os.File // the segment appends go to, nil until the first one
	buf    []byte

	mu      sync.Mutex // guards what follows
	segs    []segment  // in order; the last one is active when active != nil
	bytes   int64
	records int64
	cursor  Position
	full    bool      // the last append failed for lack of room
	fullAt  time.Time // when
	closed  bool

	rmu   sync.Mutex // guards rfile and rseq
	rfile *os.File   // the segment Peek reads
	rseq  uint64

	cache cache // the records lately appended, in memory

	// vmu guards checker and check, which readPayload checks a payload
	// read from disk with.
	vmu     sync.Mutex
	checker Transcoder
	check   chwire.NativeBlock

	notify chan struct{} // signalled after each append
	lock   *os.File      // holds the directory's lock until Close

	appended, replayed, quarantined, quarantinedBytes atomic.Uint64

	// failWrite, when set, is called before each write to a segment file;
	// an error it returns is the write's. Tests use it to inject ENOSPC.
	failWrite func() error
	// now is the clock of Full's retry interval; tests move it.
	now func() time.Time
}

const (
	segSuffix     = ".seg"
	cursorFile    = "cursor"
	lockFile      = "lock"
	quarantineDir = "quarantine"
)

func segName(seq uint64) string { return fmt.Sprintf("%020d%s", seq, segSuffix) }

// Open opens or creates the spool in cfg.Dir and counts the records waiting
// in it. A nil logger discards logs.
func Open(cfg Config, logger *slog.Logger) (*Spool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, quarantineDir), 0o750); err != nil {
		return nil, fmt.Errorf("cannot create spool directory: %w", err)
	}
	// Two processes on one spool would interleave segments and cursors.
	lock, err := dirlock.Lock(cfg.Dir, lockFile)
	if errors.Is(err, dirlock.ErrLocked) {
		return nil, fmt.Errorf("%w: %w; give each ingester a spool directory of its own", ErrInUse, err)
	}
	if err != nil {
		return nil, err
	}
	s := &Spool{cfg: cfg, log: logger, notify: make(chan struct{}, 1), lock: lock, now: time.Now, cache: cache{max: cfg.CacheEvents}}
	entries, err := os.ReadDir(cfg.Dir)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("cannot list spool directory: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, segSuffix) {
			continue
		}
		seq, err := strconv.ParseUint(strings.TrimSuffix(name, segSuffix), 10, 64)
		if err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			lock.Close()
			return nil, fmt.Errorf("cannot stat segment %s: %w", name, err)
		}
		s.segs = append(s.segs, segment{seq: seq, size: info.Size()})
	}
	slices.SortFunc(s.segs, func(a, b segment) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	s.cursor = s.readCursor()
	// Segments before the cursor were replayed, but not yet deleted.
	for len(s.segs) > 0 && s.segs[0].seq < s.cursor.Seg {
		logger.Info("deleting a spool segment the cursor has passed", "dir", cfg.Dir, "segment", s.segs[0].seq, "bytes", s.segs[0].size, "cursor", s.cursor.Seg)
		s.removeSegment(s.segs[0].seq)
		s.segs = s.segs[1:]
	}
	switch {
	case len(s.segs) == 0:
		// Everything was replayed. The next segment is numbered past the
		// cursor's, never below it: a segment numbered below the cursor
		// file's would be taken for a replayed one and deleted by the next
		// Open if the process died before its first commit.
		s.cursor = Position{Seg: s.cursor.Seg + 1}
	case s.segs[0].seq != s.cursor.Seg:
		// No cursor, or its segment is gone: start at the oldest segment.
		s.cursor = Position{Seg: s.segs[0].seq}
	}
	for _, sg := range s.segs {
		s.bytes += sg.size
	}
	s.records = s.countRecords()
	if s.records > 0 || s.bytes > 0 {
		logger.Info("spool opened with records to replay", "dir", cfg.Dir, "records", s.records, "bytes", s.bytes, "segments", len(s.segs))
	}
	return s, nil
}

// readCursor reads the cursor file; a missing or damaged one is the start.
func (s *Spool) readCursor() Position {
	b, err := os.ReadFile(filepath.Join(s.cfg.Dir, cursorFile))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("cannot read spool cursor; replaying from the oldest segment", "error", err)
		}
		return Position{}
	}
	if len(b) != 20 || crc32.Checksum(b[:16], castagnoli) != binary.LittleEndian.Uint32(b[16:]) {
		s.log.Warn("spool cursor is damaged; replaying from the oldest segment", "bytes", len(b))
		return Position{}
	}
	return Position{Seg: binary.LittleEndian.Uint64(b), Off: int64(binary.LittleEndian.Uint64(b[8:]))}
}

// countRecords counts the records that check out from the cursor on.
func (s *Spool) countRecords() int64 {
	var n int64
	_ = s.scan(func(Record) error { n++; return nil })
	return n
}

// Scan calls fn with every record waiting to be replayed that checks out,
// in order, skipping corrupt ones without quarantining them. It is meant
// for start-up, before replay begins.
func (s *Spool) Scan(fn func(Record) error) error { return s.scan(fn) }

func (s *Spool) scan(fn func(Record) error) error {
	s.mu.Lock()
	segs := slices.Clone(s.segs)
	cur := s.cursor
	s.mu.Unlock()
	for _, sg := range segs {
		off := int64(0)
		if sg.seq == cur.Seg {
			off = cur.Off
		}
		f, err := os.Open(filepath.Join(s.cfg.Dir, segName(sg.seq)))
		if err != nil {
			return fmt.Errorf("cannot open segment %d: %w", sg.seq, err)
		}
		for off < sg.size {
			rec, n, err := readRecord(f, off, sg.size, nil)
			if err != nil {
				next, ok := resync(f, off+1, sg.size)
				if !ok {
					break
				}
				off = next
				continue
			}
			if err := fn(rec); err != nil {
				f.Close()
				return err
			}
			off += n
		}
		f.Close()
	}
	return nil
}

// Append writes r to the spool and, with Fsync, makes it durable before it
// returns nil, with the position just past it (for Commit). On error
// nothing of r is left in the spool: ErrFull when the spool would go past
// MaxBytes, ErrNoSpace when the file system is full.
func (s *Spool) Append(r Record) (Position, error) {
	var next Position
	err := s.append(r, &next)
	return next, err
}

func (s *Spool) append(r Record, next *Position) error {
	s.amu.Lock()
	defer s.amu.Unlock()
	s.buf = appendRecord(s.buf[:0], &r)
	n := int64(len(s.buf))
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case s.bytes+n > s.cfg.MaxBytes:
		s.full, s.fullAt = true, s.now()
		bytes := s.bytes
		s.mu.Unlock()
		return fmt.Errorf("%w: cannot append a record of %d bytes to %d of %d", ErrFull, n, bytes, s.cfg.MaxBytes)
	}
	var (
		size   int64
		events int
	)
	if s.active != nil {
		size, events = s.segs[len(s.segs)-1].size, s.segs[len(s.segs)-1].events
	}
	s.mu.Unlock()

	if s.active == nil || (size > 0 && (size+n > s.cfg.SegmentBytes ||
		s.cfg.SegmentEvents > 0 && events+len(r.Events) > s.cfg.SegmentEvents)) {
		if err := s.rotate(); err != nil {
			return s.noSpace(err, n)
		}
		size = 0
	}
	if err := s.write(size); err != nil {
		// Leave no partial record behind, so that the next append starts
		// at a record boundary.
		_ = s.active.Truncate(size)
		return s.noSpace(fmt.Errorf("cannot append a record of %d bytes: %w", n, err), n)
	}
	s.mu.Lock()
	s.segs[len(s.segs)-1].size = size + n
	s.segs[len(s.segs)-1].events += len(r.Events)
	*next = Position{Seg: s.segs[len(s.segs)-1].seq, Off: size + n}
	s.bytes += n
	s.records++
	s.mu.Unlock()
	// Before the notification, so that a replayer woken by it finds the
	// record in memory.
	s.cache.add(Position{Seg: next.Seg, Off: size}, *next, s.buf[headerSize:], len(r.Events))
	s.appended.Add(1)
	select {
	case s.notify <- struct{}{}:
	default:
	}
	return nil
}

// write writes s.buf at off in the active segment and syncs it.
func (s *Spool) write(off int64) error {
	if s.failWrite != nil {
		if err := s.failWrite(); err != nil {
			return err
		}
	}
	if _, err := s.active.WriteAt(s.buf, off); err != nil {
		return err
	}
	if s.cfg.Fsync {
		if err := s.active.Sync(); err != nil {
			return fmt.Errorf("cannot fsync: %w", err)
		}
	}
	return nil
}

// noSpace marks the spool full and wraps ErrNoSpace when err is the file
// system's lack of room.
func (s *Spool) noSpace(err error, n int64) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		s.mu.Lock()
		s.full, s.fullAt = true, s.now()
		s.mu.Unlock()
		return fmt.Errorf("%w: record of %d bytes: %w", ErrNoSpace, n, err)
	}
	return err
}

// rotate starts a new active segment. The caller holds amu.
func (s *Spool) rotate() error {
	s.mu.Lock()
	seq := s.cursor.Seg
	if len(s.segs) > 0 {
		seq = s.segs[len(s.segs)-1].seq + 1
	}
	if seq == 0 {
		seq = 1
	}
	s.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(s.cfg.Dir, segName(seq)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return fmt.Errorf("cannot create segment %d: %w", seq, err)
	}
	if err := s.syncDir(); err != nil {
		f.Close()
		_ = os.Remove(f.Name())
		return err
	}
	if s.active != nil {
		s.active.Close()
	}
	s.active = f
	s.mu.Lock()
	if len(s.segs) == 0 {
		s.cursor = Position{Seg: seq}
	}
	s.segs = append(s.segs, segment{seq: seq})
	s.mu.Unlock()
	return nil
}

func (s *Spool) syncDir() error {
	if !s.cfg.Fsync {
		return nil
	}
	d, err := os.Open(s.cfg.Dir)
	if err != nil {
		return fmt.Errorf("cannot open spool directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("cannot fsync spool directory: %w", err)
	}
	return nil
}

// Notify returns a channel that receives after appends, for a replayer
// waiting on an empty spool.
func (s *Spool) Notify() <-chan struct{} { return s.notify }

// FullRetry is how long Full holds after an append failed for lack of
// room: then an append is tried again, since room may have been made
// without the spool knowing (files deleted on a full disk, a quota
// raised).
const FullRetry = time.Second

// Full reports whether an append failed for lack of room, in the spool or
// on the file system, less than FullRetry ago, and no record was replayed
// since.
func (s *Spool) Full() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.full && s.now().Sub(s.fullAt) < FullRetry
}

// Stats returns the spool's gauges and counters.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	st := Stats{Bytes: s.bytes, Records: s.records}
	s.mu.Unlock()
	st.Appended = s.appended.Load()
	st.Replayed = s.replayed.Load()
	st.Quarantined = s.quarantined.Load()
	st.QuarantinedBytes = s.quarantinedBytes.Load()
	_, st.CachedEvents, st.CacheReads = s.cache.stats()
	return st
}

// Peek returns the oldest record not yet replayed and the position just
// past it, to pass to Commit once the record is stored; ok is false when
// there is none. Corrupt stretches met on the way are quarantined.
func (s *Spool) Peek() (rec Record, next Position, ok bool, err error) {
	p, next, ok, err := s.PeekPayload(nil)
	if err != nil || !ok {
		return Record{}, Position{}, ok, err
	}
	rec, err = decodePayload(p.Bytes, nil)
	if err != nil {
		return Record{}, Position{}, false, fmt.Errorf("record at %d:%d: %w", next.Seg, next.Off, err)
	}
	return rec, next, true, nil
}

// Payload is a spooled record as its segment holds it: the payload
// bytes, which Transcoder.AppendPayload appends to a store insert, and
// the fields of their head.
type Payload struct {
	// Tenant and Token are the record's; they alias Bytes.
	Tenant, Token string
	// Events is the number of events the record holds.
	Events int
	// Bytes is the payload (the record without its header).
	Bytes []byte
}

// PeekPayload is Peek without decoding the events: the payload of the
// oldest record not yet replayed, copied to dst from its start (dst's
// array reused when it has room; Payload.Bytes is the slice). A payload
// read from disk has been checked whole — checksum, then every value
// (Transcoder) — so that a record that would not transcode is
// quarantined here, as Peek quarantines one that does not decode; one
// taken from the cache is what Append encoded.
func (s *Spool) PeekPayload(dst []byte) (p Payload, next Position, ok bool, err error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return Payload{}, Position{}, false, ErrClosed
		}
		cur := s.cursor
		i := slices.IndexFunc(s.segs, func(sg segment) bool { return sg.seq == cur.Seg })
		if i < 0 {
			s.mu.Unlock()
			return Payload{}, Position{}, false, nil
		}
		limit := s.segs[i].size
		last := i == len(s.segs)-1
		var nextSeq uint64
		if !last {
			nextSeq = s.segs[i+1].seq
		}
		s.mu.Unlock()

		if cur.Off >= limit {
			if last {
				return Payload{}, Position{}, false, nil
			}
			// The segment is done: move to the next one.
			s.commit(Position{Seg: nextSeq})
			continue
		}
		if p, next, ok := s.fromCache(cur, dst); ok {
			return p, next, true, nil
		}
		f, err := s.reader(cur.Seg)
		if err != nil {
			return Payload{}, Position{}, false, err
		}
		p, n, rerr := s.readPayload(f, cur.Off, limit, dst)
		if rerr == nil {
			return p, Position{Seg: cur.Seg, Off: cur.Off + n}, true, nil
		}
		if errors.Is(rerr, errIO) {
			return Payload{}, Position{}, false, rerr
		}
		end, found := resync(f, cur.Off+1, limit)
		if !found {
			end = limit
		}
		s.quarantine(f, cur, end, rerr.Error())
		if err := s.commitFile(Position{Seg: cur.Seg, Off: end}); err != nil {
			s.log.Warn("cannot move the spool cursor past a quarantined record", "error", err)
		}
	}
}

// fromCache takes the record at pos from the cache, its payload copied to
// dst.
func (s *Spool) fromCache(pos Position, dst []byte) (Payload, Position, bool) {
	b, events, next, ok := s.cache.take(pos, dst)
	if !ok {
		return Payload{}, Position{}, false
	}
	tenant, token, _, err := payloadHead(b)
	if err != nil {
		// Append encoded it: never. Read from disk, where the record is
		// checked and quarantined if need be.
		return Payload{}, Position{}, false
	}
	return Payload{Tenant: tenant, Token: token, Events: events, Bytes: b}, next, true
}

// readPayload reads and checks the record at off in f, whose first limit
// bytes are durable: its header and checksum, then every value, through
// the spool's own Transcoder keeping no event. It returns the payload,
// read into dst from its start, and the record's framed size.
func (s *Spool) readPayload(f io.ReaderAt, off, limit int64, dst []byte) (Payload, int64, error) {
	var h [headerSize]byte
	if limit-off < headerSize {
		return Payload{}, 0, fmt.Errorf("%w: %d bytes at the end of the segment (torn write)", errShortHeader, limit-off)
	}
	if _, err := f.ReadAt(h[:], off); err != nil {
		return Payload{}, 0, fmt.Errorf("%w: cannot read header at %d: %w", errIO, off, err)
	}
	n, crc, err := parseHeader(h[:], limit-off-headerSize)
	if err != nil {
		return Payload{}, 0, err
	}
	b := slices.Grow(dst[:0], int(n))[:n]
	if _, err := f.ReadAt(b, off+headerSize); err != nil {
		return Payload{}, 0, fmt.Errorf("%w: cannot read %d bytes at %d: %w", errIO, n, off+headerSize, err)
	}
	if err := checkPayload(h[:], b, crc); err != nil {
		return Payload{}, 0, err
	}
	s.vmu.Lock()
	s.check.Reset()
	_, _, _, err = s.checker.AppendPayload(&s.check, b, func(uint64) bool { return false })
	s.vmu.Unlock()
	if err != nil {
		return Payload{}, 0, err
	}
	tenant, token, events, err := payloadHead(b)
	if err != nil {
		return Payload{}, 0, err
	}
	return Payload{Tenant: tenant, Token: token, Events: events, Bytes: b}, headerSize + n, nil
}

// reader returns the open file of segment seq, for Peek.
func (s *Spool) reader(seq uint64) (*os.File, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.rfile != nil && s.rseq == seq {
		return s.rfile, nil
	}
	if s.rfile != nil {
		s.rfile.Close()
		s.rfile = nil
	}
	f, err := os.Open(filepath.Join(s.cfg.Dir, segName(seq)))
	if err != nil {
		return nil, fmt.Errorf("%w: cannot open segment %d: %w", errIO, seq, err)
	}
	s.rfile, s.rseq = f, seq
	return f, nil
}

var errIO = errors.New("spool read error")

// readRecord reads and checks the record at off in f, whose first limit
// bytes are durable. It returns the record, its events appended to dst
// (decodePayload), and its framed size.
func readRecord(f io.ReaderAt, off, limit int64, dst []otelschema.Event) (Record, int64, error) {
	var h [headerSize]byte
	if limit-off < headerSize {
		return Record{}, 0, fmt.Errorf("%w: %d bytes at the end of the segment (torn write)", errShortHeader, limit-off)
	}
	if _, err := f.ReadAt(h[:], off); err != nil {
		return Record{}, 0, fmt.Errorf("%w: cannot read header at %d: %w", errIO, off, err)
	}
	n, crc, err := parseHeader(h[:], limit-off-headerSize)
	if err != nil {
		return Record{}, 0, err
	}
	payload := make([]byte, n)
	if _, err := f.ReadAt(payload, off+headerSize); err != nil {
		return Record{}, 0, fmt.Errorf("%w: cannot read %d bytes at %d: %w", errIO, n, off+headerSize, err)
	}
	if err := checkPayload(h[:], payload, crc); err != nil {
		return Record{}, 0, err
	}
	rec, err := decodePayload(payload, dst)
	if err != nil {
		return Record{}, 0, err
	}
	return rec, headerSize + n, nil
}

// resync finds the first offset in [from, limit) where a record checks out.
func resync(f io.ReaderAt, from, limit int64) (int64, bool) {
	const window = 64 << 10
	buf := make([]byte, window+len(magic)-1)
	for off := from; off < limit; off += window {
		n, _ := f.ReadAt(buf[:min(int64(len(buf)), limit-off)], off)
		b := buf[:n]
		for i := 0; i+len(magic) <= len(b); {
			j := bytes.Index(b[i:], magic[:])
			if j < 0 || i+j >= window {
				break
			}
			cand := off + int64(i+j)
			if _, _, err := readRecord(f, cand, limit, nil); err == nil {
				return cand, true
			}
			i += j + 1
		}
	}
	return 0, false
}

// quarantine copies [at, end) of segment at.Seg to quarantine/, logs and
// counts it.
func (s *Spool) quarantine(f io.ReaderAt, at Position, end int64, reason string) {
	n := end - at.Off
	name := filepath.Join(s.cfg.Dir, quarantineDir, fmt.Sprintf("%020d-%d.bad", at.Seg, at.Off))
	if q, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640); err == nil {
		_, err = io.Copy(q, io.NewSectionReader(f, at.Off, n))
		if cerr := q.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			s.log.Warn("cannot copy a corrupt spool record to quarantine", "file", name, "error", err)
		}
	} else {
		s.log.Warn("cannot create a quarantine file", "file", name, "error", err)
	}
	s.quarantined.Add(1)
	s.quarantinedBytes.Add(uint64(n))
	s.log.Warn("spool record quarantined", "segment", at.Seg, "offset", at.Off, "bytes", n, "reason", reason, "file", name)
}

// Quarantine moves the record Peek returned, at the position before next,
// to quarantine/ — for a record the store refuses for good — and moves past
// it.
func (s *Spool) Quarantine(next Position, reason string) error {
	s.mu.Lock()
	cur := s.cursor
	s.mu.Unlock()
	if cur.Seg != next.Seg {
		return fmt.Errorf("cannot quarantine: position %d:%d is not in the cursor's segment %d", next.Seg, next.Off, cur.Seg)
	}
	f, err := s.reader(cur.Seg)
	if err != nil {
		return err
	}
	s.quarantine(f, cur, next.Off, reason)
	s.mu.Lock()
	s.records = max(s.records-1, 0)
	s.mu.Unlock()
	return s.commitFile(next)
}

// Commit records that every record before next is stored: replay resumes at
// next, and segments before it are deleted. An error means the cursor file
// could not be written; the position is kept in memory all the same, and a
// restart replays from the last cursor written (the store deduplicates).
func (s *Spool) Commit(next Position) error {
	s.replayed.Add(1)
	s.mu.Lock()
	s.records = max(s.records-1, 0)
	s.mu.Unlock()
	return s.commitFile(next)
}

func (s *Spool) commitFile(next Position) error {
	s.commit(next)
	return s.writeCursor(next)
}

// commit moves the cursor to next and deletes the segments before it, and
// the active segment too when it is wholly replayed and no append is under
// way, so that its space is freed.
func (s *Spool) commit(next Position) {
	s.cache.dropBefore(next)
	s.mu.Lock()
	s.cursor = next
	var drop []uint64
	for len(s.segs) > 1 && s.segs[0].seq < next.Seg {
		drop = append(drop, s.segs[0].seq)
		s.bytes -= s.segs[0].size
		s.segs = s.segs[1:]
	}
	s.mu.Unlock()
	if len(drop) > 0 {
		for _, seq := range drop {
			s.removeSegment(seq)
		}
		s.mu.Lock()
		s.full = false
		s.mu.Unlock()
	}
	if s.amu.TryLock() {
		s.mu.Lock()
		if s.active != nil && len(s.segs) == 1 && s.segs[0].seq == next.Seg && s.segs[0].size == next.Off && next.Off > 0 {
			seq := s.segs[0].seq
			s.active.Close()
			s.active = nil
			s.bytes -= s.segs[0].size
			s.segs = nil
			s.cursor = Position{Seg: seq + 1}
			s.full = false
			s.mu.Unlock()
			s.removeSegment(seq)
		} else {
			s.mu.Unlock()
		}
		s.amu.Unlock()
	}
}

func (s *Spool) removeSegment(seq uint64) {
	s.rmu.Lock()
	if s.rfile != nil && s.rseq == seq {
		s.rfile.Close()
		s.rfile = nil
	}
	s.rmu.Unlock()
	if err := os.Remove(filepath.Join(s.cfg.Dir, segName(seq))); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("cannot delete a replayed spool segment", "segment", seq, "error", err)
	}
}

// writeCursor replaces the cursor file with pos.
func (s *Spool) writeCursor(pos Position) error {
	s.mu.Lock()
	pos = s.cursor // commit may have moved it further
	s.mu.Unlock()
	var b [20]byte
	binary.LittleEndian.PutUint64(b[:], pos.Seg)
	binary.LittleEndian.PutUint64(b[8:], uint64(pos.Off))
	binary.LittleEndian.PutUint32(b[16:], crc32.Checksum(b[:16], castagnoli))
	if err := s.replaceFile(cursorFile, b[:]); err != nil {
		return fmt.Errorf("cannot write spool cursor: %w", err)
	}
	return nil
}

// replaceFile replaces the spool's file name with data through a temporary
// file and a rename, fsyncing the data first with Fsync, so that a reader
// finds the old content or the new, never a torn one.
func (s *Spool) replaceFile(name string, data []byte) error {
	tmp := filepath.Join(s.cfg.Dir, name+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && s.cfg.Fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.cfg.Dir, name))
}

// Close closes the spool's files; what it holds stays for the next Open.
func (s *Spool) Close() error {
	s.amu.Lock()
	defer s.amu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.cache.reset()
	var err error
	if s.active != nil {
		err = s.active.Close()
		s.active = nil
	}
	defer s.lock.Close()
	s.rmu.Lock()
	if s.rfile != nil {
		s.rfile.Close()
		s.rfile = nil
	}
	s.rmu.Unlock()
	return err
}
