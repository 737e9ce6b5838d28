package spool

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// The transcoder lives here, on chwire's row-by-row API, rather than in
// chwire on an iterator the spool would export: the record's layout (the
// column declaration, varints, the map's key order, version 1) is the
// spool's to know, the Native layout chwire's, and the call between them
// is one concrete method per value, with no interface in the loop and no
// otelschema.Event in between.

// Transcoder appends the events of spooled records' payloads to a
// chwire.NativeBlock. Its zero value is ready; it keeps scratch space
// from payload to payload and is not safe for concurrent use.
type Transcoder struct {
	spans []span
	v1    []otelschema.Event // version 1 records go through Events
}

// span is where one value of an event lies in the payload: [lo, hi),
// a string's bytes without their length; n is a map's entry count.
type span struct{ lo, hi, n int }

// AppendPayload appends the events of payload p, one record's (the bytes
// after its header), to blk as rows of the record's tenant, leaving out
// those whose id keep refuses (keep nil keeps every one; an event of a
// record without the event_id column has id 0). keep is called before any
// of an event's columns is appended. It returns the record's tenant and
// token, which alias p, and the rows appended. On error blk is left as it
// was. A column of the declaration the record lacks is appended zero, one
// the declaration lacks is skipped, as decodePayload does; a map whose
// keys are not in strictly increasing order, or a column declared twice,
// is refused (appendEvent writes neither).
func (t *Transcoder) AppendPayload(blk *chwire.NativeBlock, p []byte, keep func(id uint64) bool) (tenant, token string, rows int, err error) {
	blk.Mark()
	tenant, token, rows, err = t.appendPayload(blk, p, keep)
	if err != nil {
		blk.Rollback()
		return "", "", 0, err
	}
	return tenant, token, rows, nil
}

func (t *Transcoder) appendPayload(blk *chwire.NativeBlock, p []byte, keep func(id uint64) bool) (string, string, int, error) {
	r := &reader{b: p, whole: unsafe.String(unsafe.SliceData(p), len(p))}
	v := r.byte1("version")
	if r.err == nil && v == payloadVersionV1 {
		return t.appendV1(blk, p, keep)
	}
	if r.err == nil && v != payloadVersion {
		return "", "", 0, fmt.Errorf("%w: unknown version %d", errPayload, v)
	}
	tenant := r.str("tenant")
	tenantRaw := unsafe.Slice(unsafe.StringData(tenant), len(tenant)) // aliases p
	token := r.str("token")
	// A record of the running release's columns, nearly every one, takes
	// the layout made of them once.
	l := &currentLayout
	if bytes.HasPrefix(r.b, columnsHeader) {
		r.b = r.b[len(columnsHeader):]
	} else {
		var err error
		if l, err = newLayout(readColumns(r)); err != nil {
			return "", "", 0, err
		}
	}
	plan, idx, missing, idAt := l.plan, l.idx, l.missing, l.idAt
	n := r.uvarint("event count")
	if r.err != nil {
		return "", "", 0, r.err
	}
	if n > uint64(len(r.b)/l.minSize) {
		return "", "", 0, fmt.Errorf("%w: %d events cannot fit in %d bytes", errPayload, n, len(r.b))
	}
	if cap(t.spans) < len(plan) {
		t.spans = make([]span, len(plan))
	}
	spans := t.spans[:len(plan)]
	rows := 0
	for i := range int(n) {
		// The id's column and those before it (event_id is the first of
		// the declaration, so usually none) are scanned for keep; the
		// rest are read and appended in one pass, or only read when keep
		// refuses the event.
		at, err := walk(p, len(p)-len(r.b), plan[:idAt+1], spans, nil, nil)
		var id uint64
		if err == nil && idAt >= 0 {
			id = binary.LittleEndian.Uint64(p[spans[idAt].lo:])
		}
		if err == nil && (keep == nil || keep(id)) {
			rows++
			blk.StartRow(tenantRaw)
			for j := range idAt + 1 {
				if c := idx[j]; c >= 0 {
					appendSpan(blk, c, plan[j].kind, p, spans[j])
				}
			}
			at, err = walk(p, at, plan[idAt+1:], nil, idx[idAt+1:], blk)
			for _, c := range missing {
				blk.AppendZero(c)
			}
		} else if err == nil {
			at, err = walk(p, at, plan[idAt+1:], nil, nil, nil)
		}
		if err != nil {
			return "", "", 0, fmt.Errorf("event %d of %d: %w", i+1, n, err)
		}
		r.b = p[at:]
	}
	if len(r.b) != 0 {
		return "", "", 0, fmt.Errorf("%w: %d bytes after the last event", errPayload, len(r.b))
	}
	return tenant, token, rows, nil
}

// layout is how to transcode the events of a record's columns.
type layout struct {
	plan    []planned
	minSize int   // the fewest bytes an event takes (readColumns)
	idx     []int // each planned column's index in store.EventColumns, -1 when skipped
	missing []int // the declared columns the record lacks, appended zero
	idAt    int   // the index in plan of the id's column, -1 without one
}

// newLayout makes the layout of plan, refusing a column declared twice.
func newLayout(plan []planned, minSize int) (*layout, error) {
	l := &layout{plan: plan, minSize: minSize, idx: make([]int, len(plan)), idAt: -1}
	seen := make([]bool, len(store.EventColumns))
	for i, pl := range plan {
		l.idx[i] = -1
		if pl.col == nil {
			continue
		}
		c := columnIndex[pl.col.Name]
		if seen[c] {
			return nil, fmt.Errorf("%w: column %q declared twice", errPayload, pl.col.Name)
		}
		seen[c], l.idx[i] = true, c
		if pl.col.Name == idColumn {
			l.idAt = i
		}
	}
	for c, ok := range seen {
		if !ok {
			l.missing = append(l.missing, c)
		}
	}
	return l, nil
}

// currentLayout is the layout of store.EventColumns, as appendPayload
// declares them (columnsHeader).
var currentLayout = func() layout {
	r := &reader{b: columnsHeader, whole: string(columnsHeader)}
	l, err := newLayout(readColumns(r))
	if err != nil || r.err != nil || len(r.b) != 0 {
		panic(fmt.Sprintf("the declaration's own columns: %v %v", err, r.err))
	}
	return *l
}()

// walk reads the values of plan's columns from p[at:] and returns where
// they end. With spans it records where each value lies; with blk it
// appends each to blk's column idx[j] (none when -1) as it reads it. It
// checks that a map's keys are in strictly increasing order.
func walk(p []byte, at int, plan []planned, spans []span, idx []int, blk *chwire.NativeBlock) (int, error) {
	// This loop runs for every column of every event replayed: it appends
	// each value where it reads it (chwire's methods inline), rather than
	// through appendSpan, a call and a second switch per value.
	i := at
	for j, pl := range plan {
		c := -1
		if blk != nil {
			c = idx[j]
		}
		s := span{lo: i}
		switch pl.kind {
		case store.KindString, store.KindMap:
			// A string's length, or a map's entry count, in a uvarint: one
			// byte inline, as decodeEvent reads it.
			var n uint64
			k := 1
			if i < len(p) && p[i] < 0x80 {
				n = uint64(p[i])
			} else {
				n, k = binary.Uvarint(p[i:])
			}
			if k <= 0 || n > uint64(len(p)-i-k) {
				return 0, fmt.Errorf("%w: cannot read %s at byte %d", errPayload, kindValue[pl.kind], i)
			}
			s.lo, s.hi = i+k, i+k+int(n)
			if pl.kind == store.KindMap {
				var err error
				s.n = int(n)
				if s.hi, err = walkMap(p, s.lo, s.n); err != nil {
					return 0, err
				}
				if c >= 0 {
					appendSpan(blk, c, pl.kind, p, s)
				}
			} else if c >= 0 {
				blk.AppendString(c, p[s.lo:s.hi])
			}
		case store.KindUInt64, store.KindNanos:
			s.hi = i + 8
			if s.hi > len(p) {
				break
			}
			if c >= 0 {
				blk.AppendUint64(c, binary.LittleEndian.Uint64(p[i:]))
			}
		case store.KindInt64, store.KindSeconds:
			var v int64
			k := 1
			if i < len(p) && p[i] < 0x80 {
				v = int64(p[i]>>1) ^ -int64(p[i]&1)
			} else {
				v, k = binary.Varint(p[i:])
			}
			if k <= 0 {
				return 0, fmt.Errorf("%w: cannot read %s at byte %d", errPayload, kindValue[pl.kind], i)
			}
			s.hi = i + k
			if c >= 0 {
				blk.AppendInt(c, v)
			}
		case store.KindEnum, store.KindBool:
			s.hi = i + 1
			if s.hi <= len(p) && c >= 0 {
				blk.AppendByte(c, p[i])
			}
		case store.KindFixed:
			s.hi = i + pl.size
			if s.hi <= len(p) && c >= 0 {
				blk.AppendFixed(c, p[i:s.hi])
			}
		}
		if s.hi > len(p) {
			return 0, fmt.Errorf("%w: cannot read %s at byte %d", errPayload, kindValue[pl.kind], s.lo)
		}
		i = s.hi
		if spans != nil {
			spans[j] = s
		}
	}
	return i, nil
}

// walkMap reads n map entries from p[at:] and returns where they end,
// checking their keys are in strictly increasing order.
func walkMap(p []byte, at, n int) (int, error) {
	i := at
	var prev []byte
	for e := range 2 * n {
		l, k := binary.Uvarint(p[i:])
		if k <= 0 || l > uint64(len(p)-i-k) {
			return 0, fmt.Errorf("%w: cannot read map entry at byte %d", errPayload, i)
		}
		if v := p[i+k : i+k+int(l)]; e%2 == 0 {
			if e > 0 && bytes.Compare(prev, v) >= 0 {
				return 0, fmt.Errorf("%w: map key %q after %q", errPayload, v, prev)
			}
			prev = v
		}
		i += k + int(l)
	}
	return i, nil
}

// appendSpan appends the value at s, of kind, to blk's column c.
func appendSpan(blk *chwire.NativeBlock, c int, kind store.Kind, p []byte, s span) {
	switch kind {
	case store.KindString:
		blk.AppendString(c, p[s.lo:s.hi])
	case store.KindUInt64, store.KindNanos:
		blk.AppendUint64(c, binary.LittleEndian.Uint64(p[s.lo:]))
	case store.KindInt64, store.KindSeconds:
		v, _ := binary.Varint(p[s.lo:s.hi])
		blk.AppendInt(c, v)
	case store.KindEnum, store.KindBool:
		blk.AppendByte(c, p[s.lo])
	case store.KindFixed:
		blk.AppendFixed(c, p[s.lo:s.hi])
	case store.KindMap:
		q := p[s.lo:s.hi]
		for range s.n {
			var k, v []byte
			k, q = cutString(q)
			v, q = cutString(q)
			blk.AppendMapEntry(k, v)
		}
		blk.EndMap(c, s.n)
	}
}

// cutString splits the string at the start of q from what follows it; q
// was checked by scanEvent.
func cutString(q []byte) ([]byte, []byte) {
	n, k := binary.Uvarint(q)
	return q[k : k+int(n)], q[k+int(n):]
}

// idColumn is the column of an event's id, which keep is given.
const idColumn = "event_id"

// columnIndex is each column's index in store.EventColumns.
var columnIndex = func() map[string]int {
	m := make(map[string]int, len(store.EventColumns))
	for i := range store.EventColumns {
		m[store.EventColumns[i].Name] = i
	}
	return m
}()

// appendV1 appends a version 1 record's events through decodePayload and
// chwire's Append: such records predate the column declaration, are only
// met in a spool written by an older release, and are not worth a
// transcoder of their own.
func (t *Transcoder) appendV1(blk *chwire.NativeBlock, p []byte, keep func(id uint64) bool) (string, string, int, error) {
	rec, err := decodePayload(bytes.Clone(p), t.v1[:0])
	if err != nil {
		return "", "", 0, err
	}
	t.v1 = rec.Events
	kept := rec.Events[:0]
	for _, e := range rec.Events {
		if keep == nil || keep(e.ID) {
			kept = append(kept, e)
		}
	}
	blk.Append(rec.Tenant, kept)
	clear(t.v1) // the events alias the clone of p: let it go
	return rec.Tenant, rec.Token, len(kept), nil
}
