package spool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// A replayer may write several consecutive records to the store in one
// insert (a group): the store's cost per insert is mostly fixed, so a few
// large inserts cost far less than many small ones. Replaying a group must
// be idempotent like replaying a record: after a crash in the middle of the
// insert the same records must be written again under the same token. The
// group is therefore made durable before its insert (SetInflight): the
// inflight file names the position past the group's last record and the
// group's token, and a replayer that finds it after a restart rebuilds
// exactly that group (Inflight). Committing past it forgets it.

const inflightFile = "inflight"

// Inflight is a group of records being written to the store: every record
// from the cursor up to End, under Token.
type Inflight struct {
	End   Position
	Token string
}

// ErrGroupBoundary is returned by PeekAt at a position a group cannot
// extend past: the end of a segment that later ones follow (a group does
// not span segments), or a record that does not check out.
var ErrGroupBoundary = errors.New("spool: no record to group at this position")

// PeekAt returns the record at pos, which must lie at or after the cursor,
// and the position past it, for a replayer gathering a group; ok is false
// when no record was appended there yet. The record's events are appended
// to dst: rec.Events is dst extended by them, so that a group is decoded
// into one buffer, not copied there record by record. It never moves the
// cursor nor quarantines: Peek does that when the cursor reaches a corrupt
// record.
func (s *Spool) PeekAt(pos Position, dst []otelschema.Event) (rec Record, next Position, ok bool, err error) {
	p, next, ok, err := s.PeekPayloadAt(pos, nil)
	if err != nil || !ok {
		return Record{}, Position{}, ok, err
	}
	rec, err = decodePayload(p.Bytes, dst)
	if err != nil {
		return Record{}, Position{}, false, ErrGroupBoundary
	}
	return rec, next, true, nil
}

// PeekPayloadAt is PeekAt without decoding the events: the record's
// payload, copied to dst from its start, checked as PeekPayload checks
// it. A record that does not check out is ErrGroupBoundary.
func (s *Spool) PeekPayloadAt(pos Position, dst []byte) (p Payload, next Position, ok bool, err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return Payload{}, Position{}, false, ErrClosed
	}
	i := slices.IndexFunc(s.segs, func(sg segment) bool { return sg.seq == pos.Seg })
	if i < 0 {
		s.mu.Unlock()
		return Payload{}, Position{}, false, ErrGroupBoundary
	}
	limit := s.segs[i].size
	last := i == len(s.segs)-1
	s.mu.Unlock()
	if pos.Off >= limit {
		if last {
			return Payload{}, Position{}, false, nil
		}
		return Payload{}, Position{}, false, ErrGroupBoundary
	}
	if p, next, ok := s.fromCache(pos, dst); ok {
		return p, next, true, nil
	}
	f, err := s.reader(pos.Seg)
	if err != nil {
		return Payload{}, Position{}, false, err
	}
	p, n, rerr := s.readPayload(f, pos.Off, limit, dst)
	if rerr != nil {
		if errors.Is(rerr, errIO) {
			return Payload{}, Position{}, false, rerr
		}
		return Payload{}, Position{}, false, ErrGroupBoundary
	}
	return p, Position{Seg: pos.Seg, Off: pos.Off + n}, true, nil
}

// CommitGroup records that the n records before next are stored, as n
// calls of Commit would, and forgets the inflight group.
func (s *Spool) CommitGroup(next Position, n int) error {
	s.replayed.Add(uint64(n))
	s.mu.Lock()
	s.records = max(s.records-int64(n), 0)
	s.mu.Unlock()
	err := s.commitFile(next)
	if rerr := s.ClearInflight(); err == nil {
		err = rerr
	}
	return err
}

// SetInflight makes g durable before its insert.
func (s *Spool) SetInflight(g Inflight) error {
	b := make([]byte, 0, 24+len(g.Token))
	b = binary.LittleEndian.AppendUint64(b, g.End.Seg)
	b = binary.LittleEndian.AppendUint64(b, uint64(g.End.Off))
	b = binary.AppendUvarint(b, uint64(len(g.Token)))
	b = append(b, g.Token...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	err := s.replaceFile(inflightFile, b)
	if err == nil {
		err = s.syncDir()
	}
	if err != nil {
		return fmt.Errorf("cannot write the spool's inflight group: %w", err)
	}
	return nil
}

// ClearInflight forgets the inflight group. A removal lost in a crash is
// harmless: Inflight ignores a group that ends at or before the cursor.
func (s *Spool) ClearInflight() error {
	err := os.Remove(filepath.Join(s.cfg.Dir, inflightFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot clear the spool's inflight group: %w", err)
	}
	return nil
}

// Inflight returns the group whose insert was under way when the last
// process stopped, if it is still ahead of the cursor. A damaged file is
// ignored with a warning: its group was never acknowledged as stored, so
// the records are replayed all the same, possibly grouped otherwise.
func (s *Spool) Inflight() (Inflight, bool) {
	b, err := os.ReadFile(filepath.Join(s.cfg.Dir, inflightFile))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("cannot read the spool's inflight group", "error", err)
		}
		return Inflight{}, false
	}
	bad := func() (Inflight, bool) {
		s.log.Warn("the spool's inflight group is damaged; ignoring it", "bytes", len(b))
		return Inflight{}, false
	}
	if len(b) < 21 || crc32.Checksum(b[:len(b)-4], castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return bad()
	}
	g := Inflight{End: Position{Seg: binary.LittleEndian.Uint64(b), Off: int64(binary.LittleEndian.Uint64(b[8:]))}}
	n, k := binary.Uvarint(b[16 : len(b)-4])
	if k <= 0 || uint64(len(b)-4-16-k) != n {
		return bad()
	}
	g.Token = string(b[16+k : len(b)-4])
	s.mu.Lock()
	cur := s.cursor
	s.mu.Unlock()
	if g.End.Seg < cur.Seg || (g.End.Seg == cur.Seg && g.End.Off <= cur.Off) {
		return Inflight{}, false
	}
	return g, true
}
